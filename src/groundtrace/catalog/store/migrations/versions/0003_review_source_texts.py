"""Review items keep the text of the sources their evidence quotes (``source_texts``: source_ref → text),
so the review page can show every quote inside its source — feed rows, OCR text and web pages included.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("review_queue") as batch:
        batch.add_column(sa.Column("source_texts", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("review_queue") as batch:
        batch.drop_column("source_texts")
