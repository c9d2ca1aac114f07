"""The catalog store: SKUs, per-run candidates / verdicts / decisions, published values, audit, reviews.

``CatalogStore(url)`` opens (and migrates) a SQLite or PostgreSQL database. The batch runner is its only
writer during a run; every write is an idempotent upsert on the table keys of :mod:`.schema`, and a batch
of SKUs is written in ONE transaction, so a process killed at any point leaves each SKU either fully
recorded (done: skipped on the next start) or not at all (redone).

Publishing (``record_batch``), for each WRITE decision, against the current published value ``cur``:

* ``cur`` approved by a person and ``StorePolicy.keep_approved`` (default) → kept, nothing written;
* ``cur`` holds a value and ``StorePolicy.fill_empty_only`` → kept, nothing written;
* same value and evidence as ``cur`` → nothing written (a replay writes nothing);
* otherwise the value is upserted and ONE audit row (``publish`` or ``update``, old → new, the policy's
  reason, actor ``run:<name>``) is appended in the same transaction.

BLOCK never retracts a published value (retraction is a person's decision in the review queue); REVIEW
upserts an open item in the review queue. ``decide_review`` (approve / reject / edit) and
``approve_value`` are the human side: they set ``status='approved'`` values and append audit rows.

Text: every row is cleaned on its way in by the rule of :mod:`.clean` (NUL removed, lone surrogates →
U+FFFD, over-long non-key text cut to its column), the same on SQLite and PostgreSQL; ``record_batch``
reports each SKU it cleaned (``WriteStats.notes``) and leaves out — reported, nothing written — a SKU
whose id or an attribute slug cannot be a key (over 255 characters, empty once cleaned, or equal to
another SKU's id of the same batch once cleaned).
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Connection, Table, and_, func, or_, select, tuple_, update

from groundtrace import __version__
from groundtrace.catalog.model import (
    SKU,
    Action,
    AttributeResult,
    Candidate,
    Decision,
    Verdict,
)
from groundtrace.catalog.store import schema as t
from groundtrace.catalog.store.clean import clean_json, clean_rows, clean_text, key_problem, text_problems
from groundtrace.catalog.store.migrate import (
    DEFAULT_URL,
    StoreError,
    current_revision,
    head_revision,
    make_engine,
    redact,
    upgrade,
)
from groundtrace.core.llm.base import Usage

EXPOSURE_KEYS = ("exposure", "traffic", "views", "impressions", "sessions")


class ReviewConflict(StoreError):
    """A review decision lost the race: the item was already decided (by another reviewer or tab)."""


class StorePolicy(BaseModel):
    """How WRITE decisions become published values (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    fill_empty_only: bool = False
    keep_approved: bool = True


@dataclass(frozen=True)
class RunRef:
    id: int
    name: str
    config_hash: str


@dataclass
class SkuOutcome:
    """What the pipeline produced for one SKU (``error`` set: it failed and nothing else is recorded)."""

    sku: SKU
    results: list[AttributeResult] = field(default_factory=list)
    llm_calls: int = 0
    usage: Usage | None = None
    error: str | None = None
    issues: list[str] = field(default_factory=list)  # problems met on the way (reported, not fatal)
    review_sources: dict[str, str] = field(default_factory=dict)  # source_ref -> text, REVIEW evidence


@dataclass
class WriteStats:
    """What one ``record_batch`` changed."""

    skus: int = 0
    failed: int = 0
    published: int = 0
    unchanged: int = 0
    kept_approved: int = 0
    kept_filled: int = 0
    queued: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)  # (sku_id, what was cleaned / refused)
    rejected: list[str] = field(default_factory=list)  # sku_ids left out: not a storable key

    def __iadd__(self, other: WriteStats) -> Self:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def content_hash(sku: SKU) -> str:
    """sha256 of the canonical JSON of the SKU record (sorted keys): any field change changes it."""
    canonical = json.dumps(sku.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def config_hash(config: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a run's output-relevant options."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def exposure_of(sku: SKU) -> float | None:
    """The SKU's traffic weight: the first spec named exposure / traffic / views / impressions / sessions
    (case-insensitive) that parses as a non-negative number; ``None`` when there is none."""
    lowered = {k.lower().strip(): v for k, v in sku.specs.items()}
    for key in EXPOSURE_KEYS:
        raw = lowered.get(key)
        if raw is None:
            continue
        try:
            value = float(str(raw).replace(",", "").strip())
        except ValueError:
            continue
        if value >= 0 and math.isfinite(value):
            return value
    return None


def code_version() -> str:
    """``groundtrace`` version, plus the git commit when running from a checkout (best effort)."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{__version__}+g{sha}" if sha else __version__


def _now() -> datetime:
    return datetime.now(UTC)


def upsert(
    conn: Connection,
    table: Table,
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    *,
    where: Any = None,
    keep: Sequence[str] = (),
) -> None:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE`` every given column except ``keys`` and ``keep``
    (SQLite and PostgreSQL); ``where`` limits which existing rows are updated."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        # deferred: the dialect's insert is picked per connection (PostgreSQL only)
        from sqlalchemy.dialects.postgresql import insert
    elif conn.dialect.name == "sqlite":
        # deferred: the dialect's insert is picked per connection (SQLite)
        from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
    else:  # pragma: no cover - guarded when the store opens
        raise StoreError(f"unsupported database: {conn.dialect.name}")
    # executemany of one cached statement: compiling a multi-row VALUES with thousands of parameters
    # costs more than the database work itself
    stmt = insert(table)
    updates = {
        c.name: stmt.excluded[c.name]
        for c in table.columns
        if c.name in rows[0] and c.name not in keys and c.name not in keep
    }
    conn.execute(
        stmt.on_conflict_do_update(index_elements=list(keys), set_=updates, where=where),
        clean_rows(table, rows),
    )


def insert_rows(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Plain INSERT of ``rows``, cleaned like every store write (:mod:`.clean`)."""
    if rows:
        conn.execute(table.insert(), clean_rows(table, rows))


def screen(outcomes: Sequence[SkuOutcome]) -> tuple[list[SkuOutcome], list[tuple[str, str]], list[str]]:
    """``(storable outcomes, notes, rejected sku_ids)``: a note per text the cleaning changes in a SKU
    (its record, and one summary line for its results and review sources); an outcome whose sku_id or an
    attribute slug cannot be a key (:func:`.clean.key_problem`) or whose cleaned id repeats an earlier one
    in the batch is left out with a note."""
    kept: list[SkuOutcome] = []
    notes: list[tuple[str, str]] = []
    rejected: list[str] = []
    seen: set[str] = set()
    for o in outcomes:
        sku_id = o.sku.sku_id
        problem = key_problem("sku_id", sku_id)
        if problem is None:
            problem = next((p for r in o.results if (p := key_problem("attribute", r.attribute))), None)
        if problem is None and clean_text(sku_id) in seen:
            problem = f"sku_id {clean_text(sku_id)!r} (cleaned) repeats another SKU of the batch: not stored"
        if problem is not None:
            notes.append((sku_id, problem))
            rejected.append(sku_id)
            continue
        seen.add(clean_text(sku_id))
        kept.append(o)
        notes.extend((sku_id, p) for p in text_problems(o.sku.model_dump(mode="json")))
        derived = text_problems([r.model_dump(mode="json") for r in o.results]) + text_problems(
            o.review_sources
        )
        if derived:
            notes.append((sku_id, f"{len(derived)} derived text(s) (candidates, evidence, sources) cleaned"))
    return kept, notes, rejected


class CatalogStore:
    """A catalog store at ``url`` (module docstring); ``migrate=False`` refuses an out-of-date schema."""

    def __init__(self, url: str = DEFAULT_URL, *, migrate: bool = True) -> None:
        self.url = url
        self.engine = make_engine(url)
        if self.engine.dialect.name not in ("sqlite", "postgresql"):
            raise StoreError(f"{redact(url)}: only SQLite and PostgreSQL stores are supported")
        if migrate:
            upgrade(self.engine)
        elif current_revision(self.engine) != head_revision():
            raise StoreError(
                f"{redact(url)}: schema is at {current_revision(self.engine)!r}, this groundtrace needs "
                f"{head_revision()!r}: run `groundtrace catalog db upgrade --db URL`"
            )

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- runs ------------------------------------------------------------------------------------------
    def start_run(
        self,
        config: dict[str, Any],
        *,
        name: str | None = None,
        engine: str = "offline",
        model: str | None = None,
        judge: str = "rule",
    ) -> RunRef:
        """The run for ``config`` (created, or resumed when ``name`` already holds the same options).

        ``name`` defaults to ``run-<first 12 hex digits of the config hash>``; a name that holds a run
        with other options raises :class:`StoreError` (resume with the same options or pick a name)."""
        digest = config_hash(config)
        name = name or f"run-{digest[:12]}"
        now = _now()
        with self.engine.begin() as conn:
            row = conn.execute(select(t.runs).where(t.runs.c.name == name)).mappings().first()
            if row is not None:
                if row["config_hash"] != digest:
                    diffs = sorted(
                        k for k in set(row["config"]) | set(config) if row["config"].get(k) != config.get(k)
                    )
                    raise StoreError(
                        f"run {name!r} in {redact(self.url)} was made with other options "
                        f"({', '.join(diffs)}); resume with the same options or pick another --run-name"
                    )
                conn.execute(
                    update(t.runs).where(t.runs.c.id == row["id"]).values(status="running", updated_at=now)
                )
                return RunRef(row["id"], name, digest)
            result = conn.execute(
                t.runs.insert().values(
                    name=name,
                    config_hash=digest,
                    config=json.loads(json.dumps(config, default=str)),
                    code_version=code_version(),
                    engine=engine,
                    model=model,
                    judge=judge,
                    status="running",
                    created_at=now,
                    updated_at=now,
                    llm_calls=0,
                    prompt_tokens=0,
                    completion_tokens=0,
                    cache_hits=0,
                    cost_usd=0.0,
                )
            )
            return RunRef(int(result.inserted_primary_key[0]), name, digest)

    def finish_run(self, run: RunRef, status: str = "finished") -> None:
        with self.engine.begin() as conn:
            conn.execute(update(t.runs).where(t.runs.c.id == run.id).values(status=status, updated_at=_now()))

    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first, with its SKU counts (done / failed)."""
        with self.engine.connect() as conn:
            rows = [dict(r) for r in conn.execute(select(t.runs).order_by(t.runs.c.id)).mappings()]
            counts = conn.execute(
                select(
                    t.sku_runs.c.run_id,
                    func.count().filter(t.sku_runs.c.error.is_(None)),
                    func.count().filter(t.sku_runs.c.error.is_not(None)),
                ).group_by(t.sku_runs.c.run_id)
            ).all()
        by_run = {run_id: (done, failed) for run_id, done, failed in counts}
        for row in rows:
            row["skus_done"], row["skus_failed"] = by_run.get(row["id"], (0, 0))
        return rows

    def find_run(self, ref: str | int) -> dict[str, Any]:
        """A run by name or id (``StoreError`` naming the known runs when there is none)."""
        runs = self.runs()
        for row in runs:
            if row["name"] == str(ref) or str(row["id"]) == str(ref):
                return row
        known = ", ".join(f"{r['id']}:{r['name']}" for r in runs) or "none"
        raise StoreError(f"no run {ref!r} in {redact(self.url)} (runs: {known})")

    # -- skip / resume ---------------------------------------------------------------------------------
    def done(self, run: RunRef) -> dict[str, str]:
        """sku_id → content hash of every SKU the run has recorded without error."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(t.sku_runs.c.sku_id, t.sku_runs.c.content_hash).where(
                    t.sku_runs.c.run_id == run.id, t.sku_runs.c.error.is_(None)
                )
            ).all()
        return dict(rows)  # type: ignore[arg-type]

    def done_ids(self, run_id: int) -> set[str]:
        """The sku_ids a run (by id) has recorded without error."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(t.sku_runs.c.sku_id).where(t.sku_runs.c.run_id == run_id, t.sku_runs.c.error.is_(None))
            ).all()
        return {r[0] for r in rows}

    def pending(self, run: RunRef, skus: Iterable[SKU]) -> list[SKU]:
        """The SKUs the run has not recorded with their current content (new, changed, or failed)."""
        done = self.done(run)
        return [s for s in skus if done.get(clean_text(s.sku_id)) != content_hash(s)]

    # -- writing ---------------------------------------------------------------------------------------
    def record_batch(
        self,
        run: RunRef,
        outcomes: Sequence[SkuOutcome],
        *,
        policy: StorePolicy | None = None,
        usage: Usage | None = None,
    ) -> WriteStats:
        """Record ``outcomes`` in ONE transaction (module docstring); ``usage`` (the LLM usage since the
        previous batch) is added to the run's totals in the same transaction."""
        policy = policy or StorePolicy()
        stats = WriteStats()
        outcomes, stats.notes, stats.rejected = screen(outcomes)
        if not outcomes:
            return stats
        now = _now()
        actor = f"run:{run.name}"
        with self.engine.begin() as conn:
            upsert(conn, t.skus, [_sku_row(o.sku, now) for o in outcomes], ["sku_id"])
            ok = [o for o in outcomes if o.error is None]
            results = [r for o in ok for r in o.results]
            upsert(conn, t.candidates, [_candidate_row(run.id, r) for r in results], _ITEM_KEY)
            upsert(conn, t.verdicts, [_verdict_row(run.id, r.verdict) for r in results], _ITEM_KEY)
            upsert(conn, t.decisions, [_decision_row(run.id, r.decision, now) for r in results], _ITEM_KEY)
            self._publish(
                conn,
                run,
                [r for r in results if r.decision.action == Action.WRITE],
                policy,
                actor,
                now,
                stats,
            )
            stats.queued += self._queue(conn, run, ok, now)
            upsert(
                conn,
                t.sku_runs,
                [
                    {
                        "run_id": run.id,
                        "sku_id": o.sku.sku_id,
                        "content_hash": content_hash(o.sku),
                        "attributes": len(o.results),
                        "llm_calls": o.llm_calls,
                        "error": o.error,
                        "processed_at": now,
                    }
                    for o in outcomes
                ],
                ["run_id", "sku_id"],
            )
            total = usage or Usage()
            for o in outcomes:
                if o.usage is not None:
                    total = total + o.usage
            if total.calls or total.prompt_tokens or total.cache_hits or total.cost_usd:
                conn.execute(
                    update(t.runs)
                    .where(t.runs.c.id == run.id)
                    .values(
                        llm_calls=t.runs.c.llm_calls + total.calls,
                        prompt_tokens=t.runs.c.prompt_tokens + total.prompt_tokens,
                        completion_tokens=t.runs.c.completion_tokens + total.completion_tokens,
                        cache_hits=t.runs.c.cache_hits + total.cache_hits,
                        cost_usd=t.runs.c.cost_usd + total.cost_usd,
                        updated_at=now,
                    )
                )
        stats.skus = len(ok)
        stats.failed = len(outcomes) - len(ok)
        return stats

    def _publish(
        self,
        conn: Connection,
        run: RunRef,
        writes: list[AttributeResult],
        policy: StorePolicy,
        actor: str,
        now: datetime,
        stats: WriteStats,
    ) -> None:
        if not writes:
            return
        pv = t.published_values
        keys = [(clean_text(r.sku_id), clean_text(r.attribute)) for r in writes]  # as stored
        current = {
            (row["sku_id"], row["attribute"]): row
            for row in conn.execute(
                select(pv).where(tuple_(pv.c.sku_id, pv.c.attribute).in_(keys))
            ).mappings()
        }
        rows, audit = [], []
        for r in writes:
            cur = current.get((clean_text(r.sku_id), clean_text(r.attribute)))
            new = _published_row(r, run.id, actor, now)
            if cur is not None:
                if cur["status"] == "approved" and policy.keep_approved:
                    stats.kept_approved += 1
                    continue
                if policy.fill_empty_only and cur["value"] is not None:
                    stats.kept_filled += 1
                    continue
                if cur["value"] == new["value"] and cur["evidence"] == new["evidence"]:
                    stats.unchanged += 1
                    continue
            rows.append(new)
            audit.append(
                {
                    "at": now,
                    "actor": actor,
                    "action": "publish" if cur is None else "update",
                    "sku_id": r.sku_id,
                    "attribute": r.attribute,
                    "old_value": None if cur is None else cur["value"],
                    "new_value": new["value"],
                    "reason": r.decision.reason,
                    "run_id": run.id,
                    "review_id": None,
                }
            )
        upsert(conn, pv, rows, ["sku_id", "attribute"])
        insert_rows(conn, t.audit_log, audit)
        stats.published += len(rows)

    def _queue(self, conn: Connection, run: RunRef, outcomes: list[SkuOutcome], now: datetime) -> int:
        """Upsert an open review item per REVIEW decision; open items of re-processed SKUs whose attribute
        is no longer routed to REVIEW become ``superseded``."""
        rq = t.review_queue
        sku_ids = [clean_text(o.sku.sku_id) for o in outcomes]
        conn.execute(
            update(rq)
            .where(rq.c.run_id == run.id, rq.c.sku_id.in_(sku_ids), rq.c.status == "open")
            .values(status="superseded", updated_at=now)
        )
        rows = [
            {
                "run_id": run.id,
                "sku_id": r.sku_id,
                "attribute": r.attribute,
                "category": r.category,
                "value": r.candidate.value,
                "evidence": [e.model_dump(mode="json") for e in r.candidate.evidence],
                "source_texts": {
                    e.source_ref: o.review_sources[e.source_ref]
                    for e in r.candidate.evidence
                    if e.source_ref in o.review_sources
                },
                "verdict": r.verdict.verdict.value,
                "reason": r.decision.reason,
                "status": "open",
                "created_at": now,
                "updated_at": now,
            }
            for o in outcomes
            for r in o.results
            if r.decision.action == Action.REVIEW
        ]
        if rows:
            # a decided item stays decided; created_at stays the first time it was queued
            upsert(
                conn,
                rq,
                rows,
                ["run_id", "sku_id", "attribute"],
                where=or_(rq.c.status == "open", rq.c.status == "superseded"),
                keep=["created_at"],
            )
        return len(rows)

    # -- the human side (the review page of issue 14) ---------------------------------------------------
    def review_items(self, status: str | None = "open") -> list[dict[str, Any]]:
        """Review-queue items (all when ``status`` is None), oldest first."""
        rq = t.review_queue
        query = select(rq).order_by(rq.c.id)
        if status is not None:
            query = query.where(rq.c.status == status)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def decide_review(
        self,
        item_id: int,
        *,
        reviewer: str,
        decision: str,
        value: str | list[str] | None = None,
        comment: str = "",
    ) -> None:
        """Close an open item: ``approve`` publishes its value as approved, ``edit`` publishes ``value`` as
        approved, ``reject`` publishes nothing; each appends one audit row.

        Exactly once across threads and processes: the first statement is the conditional
        ``UPDATE review_queue ... WHERE id = :id AND status = 'open'`` (PostgreSQL re-checks the condition
        after a concurrent writer commits; SQLite takes its write lock for it); when it changes no row the
        item is missing (:class:`StoreError`) or already decided (:class:`ReviewConflict`, naming who
        decided it) and nothing is published or audited for this call."""
        if decision not in ("approve", "reject", "edit"):
            raise ValueError(f"decision must be approve, reject or edit, not {decision!r}")
        if decision == "edit" and value is None:
            raise ValueError("an edit needs the corrected value")
        rq = t.review_queue
        now = _now()
        status = {"approve": "approved", "reject": "rejected", "edit": "edited"}[decision]
        decided_value: Any = {"approve": rq.c.value, "reject": None, "edit": value}[decision]
        values = clean_rows(rq, [{"reviewer": reviewer, "comment": comment}])[0]
        with self.engine.begin() as conn:
            claimed = conn.execute(
                update(rq)
                .where(rq.c.id == item_id, rq.c.status == "open")
                .values(
                    status=status,
                    decision=decision,
                    decided_value=decided_value if decision != "edit" else clean_json(value),
                    decided_at=now,
                    updated_at=now,
                    **values,
                )
            ).rowcount
            item = conn.execute(select(rq).where(rq.c.id == item_id)).mappings().first()
            if item is None:
                raise StoreError(f"no review item {item_id}")
            if claimed != 1:
                by = f" by {item['reviewer']}" if item["reviewer"] else ""
                raise ReviewConflict(f"review item {item_id} is already {item['status']}{by}, not open")
            final = value if decision == "edit" else item["value"]
            actor = f"reviewer:{reviewer}"
            if decision == "reject":
                insert_rows(
                    conn,
                    t.audit_log,
                    [
                        {
                            "at": now,
                            "actor": actor,
                            "action": "reject",
                            "sku_id": item["sku_id"],
                            "attribute": item["attribute"],
                            "old_value": item["value"],
                            "new_value": None,
                            "reason": comment or "rejected in review",
                            "run_id": item["run_id"],
                            "review_id": item_id,
                        }
                    ],
                )
                return
            evidence = item["evidence"] if decision == "approve" else []
            self._set_approved(
                conn, item["sku_id"], item["attribute"], final, evidence, actor, comment, now, item_id
            )

    def approve_value(
        self,
        sku_id: str,
        attribute: str,
        *,
        reviewer: str,
        value: str | list[str] | None = None,
        comment: str = "",
    ) -> None:
        """Mark the published value (or set ``value``) as approved by ``reviewer`` (one audit row)."""
        pv = t.published_values
        now = _now()
        with self.engine.begin() as conn:
            cur = (
                conn.execute(select(pv).where(pv.c.sku_id == sku_id, pv.c.attribute == attribute))
                .mappings()
                .first()
            )
            if value is None and cur is None:
                raise StoreError(f"{sku_id}/{attribute}: nothing published to approve")
            final = value if value is not None else cur["value"]  # type: ignore[index]
            evidence = cur["evidence"] if cur is not None and value is None else []
            self._set_approved(
                conn, sku_id, attribute, final, evidence, f"reviewer:{reviewer}", comment, now, None
            )

    def _set_approved(
        self,
        conn: Connection,
        sku_id: str,
        attribute: str,
        value: Any,
        evidence: list[dict[str, Any]],
        actor: str,
        comment: str,
        now: datetime,
        review_id: int | None,
    ) -> None:
        pv = t.published_values
        cur = (
            conn.execute(select(pv).where(pv.c.sku_id == sku_id, pv.c.attribute == attribute))
            .mappings()
            .first()
        )
        first = evidence[0] if evidence else {}
        span = first.get("span") or (None, None)
        upsert(
            conn,
            pv,
            [
                {
                    "sku_id": sku_id,
                    "attribute": attribute,
                    "value": value,
                    "source": first.get("source"),
                    "source_type": first.get("source_type"),
                    "source_ref": first.get("source_ref"),
                    "url": first.get("url"),
                    "quote": first.get("quote"),
                    "span_start": span[0],
                    "span_end": span[1],
                    "evidence": evidence,
                    "status": "approved",
                    "run_id": None,
                    "set_by": actor,
                    "updated_at": now,
                }
            ],
            ["sku_id", "attribute"],
        )
        insert_rows(
            conn,
            t.audit_log,
            [
                {
                    "at": now,
                    "actor": actor,
                    "action": "approve",
                    "sku_id": sku_id,
                    "attribute": attribute,
                    "old_value": None if cur is None else cur["value"],
                    "new_value": value,
                    "reason": comment or "approved in review",
                    "run_id": None,
                    "review_id": review_id,
                }
            ],
        )

    # -- reviewer accounts (the review page) ----------------------------------------------------------
    def set_reviewer(self, name: str, password_hash: str, *, active: bool = True) -> bool:
        """Create reviewer ``name`` or replace its password hash; True when the account is new. The hash
        is made by the caller (argon2 in ``catalog.web.auth``); the store never sees a password."""
        if not name or len(name) > 200 or name != name.strip():
            raise StoreError(f"reviewer name {name!r}: 1-200 characters without surrounding spaces")
        now = _now()
        with self.engine.begin() as conn:
            exists = conn.execute(select(t.reviewers.c.name).where(t.reviewers.c.name == name)).first()
            upsert(
                conn,
                t.reviewers,
                [
                    {
                        "name": name,
                        "password_hash": password_hash,
                        "active": active,
                        "created_at": now,
                        "updated_at": now,
                    }
                ],
                ["name"],
                keep=["created_at"],
            )
        return exists is None

    def reviewer_hash(self, name: str) -> str | None:
        """The password hash of active reviewer ``name`` (None when there is no such active account)."""
        rv = t.reviewers
        with self.engine.connect() as conn:
            row = conn.execute(
                select(rv.c.password_hash).where(rv.c.name == name, rv.c.active.is_(True))
            ).first()
        return None if row is None else str(row[0])

    # -- reading ---------------------------------------------------------------------------------------
    def run_results(self, run_id: int) -> list[AttributeResult]:
        """The run's AttributeResults (sorted by sku_id, attribute), rebuilt from the three tables."""
        c, v, d = t.candidates, t.verdicts, t.decisions
        query = (
            select(c, v.c.verdict, v.c.failure_type, v.c.reasoning, v.c.url, v.c.quote_verified, v.c.judge)
            .add_columns(d.c.action, d.c.reason, d.c.policy)
            .join(v, and_(v.c.run_id == c.c.run_id, v.c.sku_id == c.c.sku_id, v.c.attribute == c.c.attribute))
            .join(d, and_(d.c.run_id == c.c.run_id, d.c.sku_id == c.c.sku_id, d.c.attribute == c.c.attribute))
            .where(c.c.run_id == run_id)
            .order_by(c.c.sku_id, c.c.attribute)
        )
        with self.engine.connect() as conn:
            return [_result_from_row(row) for row in conn.execute(query).mappings()]

    def sku_info(self) -> dict[str, tuple[str, float | None]]:
        """sku_id → (category, exposure) of every stored SKU."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t.skus.c.sku_id, t.skus.c.category, t.skus.c.exposure)).all()
        return {sku_id: (category, exposure) for sku_id, category, exposure in rows}

    def table(self, name: str) -> list[dict[str, Any]]:
        """Every row of one table (tests, export and the review page)."""
        table = t.metadata.tables[name]
        with self.engine.connect() as conn:
            return [
                dict(r) for r in conn.execute(select(table).order_by(*table.primary_key.columns)).mappings()
            ]


_ITEM_KEY = ["run_id", "sku_id", "attribute"]


def _sku_row(sku: SKU, now: datetime) -> dict[str, Any]:
    return {
        "sku_id": sku.sku_id,
        "category": sku.category,
        "title": sku.title,
        "content_hash": content_hash(sku),
        "exposure": exposure_of(sku),
        "record": sku.model_dump(mode="json"),
        "updated_at": now,
    }


def _candidate_row(run_id: int, r: AttributeResult) -> dict[str, Any]:
    c = r.candidate
    return {
        "run_id": run_id,
        "sku_id": r.sku_id,
        "attribute": r.attribute,
        "category": r.category,
        "value": c.value,
        "status": c.status.value,
        "confidence": c.confidence,
        "engine": c.engine,
        "note": c.note,
        "evidence": [e.model_dump(mode="json") for e in c.evidence],
    }


def _verdict_row(run_id: int, v: Verdict) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "sku_id": v.sku_id,
        "attribute": v.attribute,
        "verdict": v.verdict.value,
        "failure_type": v.failure_type.value if v.failure_type else None,
        "reasoning": v.reasoning,
        "url": v.url,
        "quote_verified": v.quote_verified,
        "judge": v.judge,
    }


def _decision_row(run_id: int, d: Decision, now: datetime) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "sku_id": d.sku_id,
        "attribute": d.attribute,
        "action": d.action.value,
        "reason": d.reason,
        "policy": d.policy,
        "decided_at": now,
    }


def _published_row(r: AttributeResult, run_id: int, actor: str, now: datetime) -> dict[str, Any]:
    evidence = [e.model_dump(mode="json") for e in r.candidate.evidence]
    first = r.candidate.evidence[0] if r.candidate.evidence else None
    return {
        "sku_id": r.sku_id,
        "attribute": r.attribute,
        "value": r.candidate.value,
        "source": first.source if first else None,
        "source_type": first.source_type if first else None,
        "source_ref": first.source_ref if first else None,
        "url": first.url if first else None,
        "quote": first.quote if first else None,
        "span_start": first.span[0] if first and first.span else None,
        "span_end": first.span[1] if first and first.span else None,
        "evidence": evidence,
        "status": "auto",
        "run_id": run_id,
        "set_by": actor,
        "updated_at": now,
    }


def _result_from_row(row: Any) -> AttributeResult:
    return AttributeResult(
        sku_id=row["sku_id"],
        category=row["category"],
        attribute=row["attribute"],
        candidate=Candidate(
            sku_id=row["sku_id"],
            attribute=row["attribute"],
            value=row["value"],
            evidence=row["evidence"],
            confidence=row["confidence"],
            status=row["status"],
            engine=row["engine"],
            note=row["note"],
        ),
        verdict=Verdict(
            sku_id=row["sku_id"],
            attribute=row["attribute"],
            verdict=row["verdict"],
            failure_type=row["failure_type"],
            reasoning=row["reasoning"],
            url=row["url"],
            quote_verified=row["quote_verified"],
            judge=row["judge"],
        ),
        decision=Decision(
            sku_id=row["sku_id"],
            attribute=row["attribute"],
            action=row["action"],
            reason=row["reason"],
            policy=row["policy"],
        ),
    )
