"""The catalog store's tables (SQLAlchemy Core), the shape the Alembic migrations build.

Keys (every write is an upsert on them, so replaying a SKU never duplicates a row):

* ``runs`` — one row per (``name``, ``config_hash``): an enrichment configuration applied to the catalog.
  A run killed and started again with the same options resumes the same row. Usage (LLM calls, tokens,
  cost) accumulates with every committed SKU.
* ``skus`` — the catalog records (``sku_id``), with ``content_hash`` = sha256 of the canonical SKU JSON and
  ``exposure`` (traffic weight, from a spec ``exposure`` / ``traffic`` / ``views`` when present).
* ``sku_runs`` — (``run_id``, ``sku_id``): the SKU's content hash when the run last processed it, its LLM
  calls and the error if it failed. A SKU is *done* for a run when this row has its current content hash
  and no error: such SKUs are skipped (0 LLM calls, 0 writes).
* ``candidates`` / ``verdicts`` / ``decisions`` — (``run_id``, ``sku_id``, ``attribute``): what the Scout
  proposed (value, status, every evidence item), what the Judge said, what the write policy decided.
* ``published_values`` — (``sku_id``, ``attribute``): the catalog's current value with its first evidence
  item flattened (source, ref, URL, verbatim quote, span), every evidence item as JSON, who set it and its
  ``status`` (``auto`` = written by a run, ``approved`` = confirmed or set by a person).
* ``audit_log`` — append-only (database triggers refuse UPDATE and DELETE): one row per change of a
  published value or a review decision: actor, time, old → new value, reason.
* ``review_queue`` — one item per (``run_id``, ``sku_id``, ``attribute``) routed to REVIEW: the proposed
  value and evidence, the text of the sources the evidence quotes (``source_texts``, source_ref → text),
  ``status`` (open / approved / rejected / edited), reviewer, decision, comment, times.
* ``reviewers`` — the review page's accounts (``name``): an argon2 password hash made by the web layer
  (the store never sees a password) and an ``active`` flag.
* ``review_sessions`` — the review page's logged-in sessions, server-side: sha256 of the session id (the
  signed cookie carries the id) → reviewer, expiry. Logout deletes the row (:mod:`.access`).
* ``login_failures`` — failed logins per key (``ip:<address>``, ``user:<name>``) with their epoch time,
  read by the page's rate limit in every server process (:mod:`.access`).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

ID = String(255)  # sku ids and attribute slugs (indexed: bounded length for every backend)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False),
    Column("config_hash", String(64), nullable=False),
    Column("config", JSON, nullable=False),
    Column("code_version", String(100), nullable=False),
    Column("engine", String(100), nullable=False),
    Column("model", String(300), nullable=True),
    Column("judge", String(100), nullable=False),
    Column("status", String(20), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("llm_calls", Integer, nullable=False, default=0),
    Column("prompt_tokens", Integer, nullable=False, default=0),
    Column("completion_tokens", Integer, nullable=False, default=0),
    Column("cache_hits", Integer, nullable=False, default=0),
    Column("cost_usd", Float, nullable=False, default=0.0),
    UniqueConstraint("name", name="uq_runs_name"),
)

skus = Table(
    "skus",
    metadata,
    Column("sku_id", ID, primary_key=True),
    Column("category", String(500), nullable=False),
    Column("title", Text, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("exposure", Float, nullable=True),
    Column("record", JSON, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

sku_runs = Table(
    "sku_runs",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("sku_id", ID, ForeignKey("skus.sku_id"), primary_key=True),
    Column("content_hash", String(64), nullable=False),
    Column("attributes", Integer, nullable=False),
    Column("llm_calls", Integer, nullable=False),
    Column("error", Text, nullable=True),
    Column("processed_at", DateTime(timezone=True), nullable=False),
)

candidates = Table(
    "candidates",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("sku_id", ID, primary_key=True),
    Column("attribute", ID, primary_key=True),
    Column("category", String(500), nullable=False),
    Column("value", JSON, nullable=True),
    Column("status", String(30), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("engine", String(100), nullable=False),
    Column("note", Text, nullable=False),
    Column("evidence", JSON, nullable=False),
)

verdicts = Table(
    "verdicts",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("sku_id", ID, primary_key=True),
    Column("attribute", ID, primary_key=True),
    Column("verdict", String(20), nullable=False),
    Column("failure_type", String(40), nullable=True),
    Column("reasoning", Text, nullable=False),
    Column("url", Text, nullable=True),
    Column("quote_verified", Boolean, nullable=False),
    Column("judge", String(100), nullable=False),
)

decisions = Table(
    "decisions",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("sku_id", ID, primary_key=True),
    Column("attribute", ID, primary_key=True),
    Column("action", String(10), nullable=False),
    Column("reason", Text, nullable=False),
    Column("policy", String(200), nullable=False),
    Column("decided_at", DateTime(timezone=True), nullable=False),
)

published_values = Table(
    "published_values",
    metadata,
    Column("sku_id", ID, primary_key=True),
    Column("attribute", ID, primary_key=True),
    Column("value", JSON, nullable=True),
    Column("source", String(30), nullable=True),
    Column("source_type", String(30), nullable=True),
    Column("source_ref", Text, nullable=True),
    Column("url", Text, nullable=True),
    Column("quote", Text, nullable=True),
    Column("span_start", Integer, nullable=True),
    Column("span_end", Integer, nullable=True),
    Column("evidence", JSON, nullable=False),
    Column("status", String(20), nullable=False),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=True),
    Column("set_by", String(300), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(300), nullable=False),
    Column("action", String(30), nullable=False),
    Column("sku_id", ID, nullable=False),
    Column("attribute", ID, nullable=False),
    Column("old_value", JSON, nullable=True),
    Column("new_value", JSON, nullable=True),
    Column("reason", Text, nullable=False),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=True),
    Column("review_id", Integer, ForeignKey("review_queue.id"), nullable=True),
    Index("ix_audit_log_item", "sku_id", "attribute"),
)

review_queue = Table(
    "review_queue",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
    Column("sku_id", ID, nullable=False),
    Column("attribute", ID, nullable=False),
    Column("category", String(500), nullable=False),
    Column("value", JSON, nullable=True),
    Column("evidence", JSON, nullable=False),
    Column("source_texts", JSON, nullable=True),  # source_ref -> text of the sources the evidence quotes
    Column("verdict", String(20), nullable=False),
    Column("reason", Text, nullable=False),
    Column("status", String(20), nullable=False),
    Column("reviewer", String(200), nullable=True),
    Column("decision", String(20), nullable=True),
    Column("decided_value", JSON, nullable=True),
    Column("comment", Text, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("decided_at", DateTime(timezone=True), nullable=True),
    UniqueConstraint("run_id", "sku_id", "attribute", name="uq_review_item"),
    Index("ix_review_queue_status", "status"),
)

reviewers = Table(
    "reviewers",
    metadata,
    Column("name", String(200), primary_key=True),
    Column("password_hash", Text, nullable=False),
    Column("active", Boolean, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

review_sessions = Table(
    "review_sessions",
    metadata,
    Column("id_hash", String(64), primary_key=True),  # sha256 hex of the session id (the cookie holds the id)
    Column("reviewer", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_seen", DateTime(timezone=True), nullable=False),  # set at login (room for an idle limit)
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Index("ix_review_sessions_reviewer", "reviewer"),
)

login_failures = Table(
    "login_failures",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(300), nullable=False),  # ip:<address> or user:<name>
    Column("at", Float, nullable=False),  # epoch seconds
    Index("ix_login_failures_key_at", "key", "at"),
)
