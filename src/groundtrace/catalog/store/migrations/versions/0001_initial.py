"""Initial catalog store: runs, SKUs, candidates, verdicts, decisions, published values, audit log,
review queue; the audit log refuses UPDATE and DELETE (a trigger on SQLite and PostgreSQL).

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)
ID = sa.String(255)


def _item_key() -> list[sa.Column]:
    return [
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("sku_id", ID, primary_key=True),
        sa.Column("attribute", ID, primary_key=True),
    ]


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("config_hash", sa.String(64), nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("code_version", sa.String(100), nullable=False),
        sa.Column("engine", sa.String(100), nullable=False),
        sa.Column("model", sa.String(300), nullable=True),
        sa.Column("judge", sa.String(100), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("llm_calls", sa.Integer, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("cache_hits", sa.Integer, nullable=False),
        sa.Column("cost_usd", sa.Float, nullable=False),
        sa.UniqueConstraint("name", name="uq_runs_name"),
    )
    op.create_table(
        "skus",
        sa.Column("sku_id", ID, primary_key=True),
        sa.Column("category", sa.String(500), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("exposure", sa.Float, nullable=True),
        sa.Column("record", sa.JSON, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "sku_runs",
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
        sa.Column("sku_id", ID, sa.ForeignKey("skus.sku_id"), primary_key=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("attributes", sa.Integer, nullable=False),
        sa.Column("llm_calls", sa.Integer, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("processed_at", TS, nullable=False),
    )
    op.create_table(
        "candidates",
        *_item_key(),
        sa.Column("category", sa.String(500), nullable=False),
        sa.Column("value", sa.JSON, nullable=True),
        sa.Column("status", sa.String(30), nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("engine", sa.String(100), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("evidence", sa.JSON, nullable=False),
    )
    op.create_table(
        "verdicts",
        *_item_key(),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("failure_type", sa.String(40), nullable=True),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("url", sa.Text, nullable=True),
        sa.Column("quote_verified", sa.Boolean, nullable=False),
        sa.Column("judge", sa.String(100), nullable=False),
    )
    op.create_table(
        "decisions",
        *_item_key(),
        sa.Column("action", sa.String(10), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("policy", sa.String(200), nullable=False),
        sa.Column("decided_at", TS, nullable=False),
    )
    op.create_table(
        "published_values",
        sa.Column("sku_id", ID, primary_key=True),
        sa.Column("attribute", ID, primary_key=True),
        sa.Column("value", sa.JSON, nullable=True),
        sa.Column("source", sa.String(30), nullable=True),
        sa.Column("source_type", sa.String(30), nullable=True),
        sa.Column("source_ref", sa.Text, nullable=True),
        sa.Column("url", sa.Text, nullable=True),
        sa.Column("quote", sa.Text, nullable=True),
        sa.Column("span_start", sa.Integer, nullable=True),
        sa.Column("span_end", sa.Integer, nullable=True),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("set_by", sa.String(300), nullable=False),
        sa.Column("updated_at", TS, nullable=False),
    )
    op.create_table(
        "review_queue",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
        sa.Column("sku_id", ID, nullable=False),
        sa.Column("attribute", ID, nullable=False),
        sa.Column("category", sa.String(500), nullable=False),
        sa.Column("value", sa.JSON, nullable=True),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=True),
        sa.Column("decision", sa.String(20), nullable=True),
        sa.Column("decided_value", sa.JSON, nullable=True),
        sa.Column("comment", sa.Text, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("decided_at", TS, nullable=True),
        sa.UniqueConstraint("run_id", "sku_id", "attribute", name="uq_review_item"),
    )
    op.create_index("ix_review_queue_status", "review_queue", ["status"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", TS, nullable=False),
        sa.Column("actor", sa.String(300), nullable=False),
        sa.Column("action", sa.String(30), nullable=False),
        sa.Column("sku_id", ID, nullable=False),
        sa.Column("attribute", ID, nullable=False),
        sa.Column("old_value", sa.JSON, nullable=True),
        sa.Column("new_value", sa.JSON, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=True),
        sa.Column("review_id", sa.Integer, sa.ForeignKey("review_queue.id"), nullable=True),
    )
    op.create_index("ix_audit_log_item", "audit_log", ["sku_id", "attribute"])
    _append_only_triggers()


def _append_only_triggers() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER audit_log_no_{event.lower()} BEFORE {event} ON audit_log "
                "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
            )
    elif dialect == "postgresql":
        op.execute(
            "CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'audit_log is append-only'; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
        )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_change ON audit_log")
        op.execute("DROP FUNCTION IF EXISTS audit_log_append_only()")
    for table in (
        "audit_log",
        "review_queue",
        "published_values",
        "decisions",
        "verdicts",
        "candidates",
        "sku_runs",
        "skus",
        "runs",
    ):
        op.drop_table(table)
