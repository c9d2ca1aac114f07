"""Server-side review sessions and the login limiter's failures (issue 24): ``review_sessions`` (the
sha256 of a session id → reviewer, created / last seen / expiry; logout deletes the row, so a replayed
cookie finds nothing) and ``login_failures`` (key ``ip:<address>`` or ``user:<name>``, epoch seconds),
shared by every server process of one store.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "review_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_review_sessions_reviewer", "review_sessions", ["reviewer"])
    op.create_table(
        "login_failures",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(300), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_index("ix_login_failures_key_at", "login_failures", ["key", "at"])


def downgrade() -> None:
    op.drop_index("ix_login_failures_key_at", table_name="login_failures")
    op.drop_table("login_failures")
    op.drop_index("ix_review_sessions_reviewer", table_name="review_sessions")
    op.drop_table("review_sessions")
