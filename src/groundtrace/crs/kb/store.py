"""Save and load a :class:`~groundtrace.crs.kb.knowledge_base.KnowledgeBase` as one SQLite file with a
content hash.

Tables
------
* ``pois(poi_id PK, city, poi_type, lat, lon, record)`` — ``record`` is the POI's canonical JSON.
* ``reviews(review_id PK, poi_id, record)`` — ``record`` is the review's canonical JSON.
* ``meta(key PK, value)`` — ``format`` (= ``groundtrace-kb``), ``format_version``, ``content_hash``
  (``KnowledgeBase.content_hash``), ``created`` (UTC ISO-8601), ``source``, ``selection`` (JSON of the
  selection config, or null) and ``summary`` (JSON of ``KnowledgeBase.summary()``), ``name``.
* ``sentences(review_id, start, end, aspects, polarity, score)`` — the stance of every review sentence
  (``groundtrace.crs.kb.stance``; ``aspects`` comma-separated), computed once when the KB is built;
  ``meta`` holds ``stance_version`` and ``stance_model``.
* ``migrations(name PK, applied)`` — the ordered, named schema migrations applied to the file.

Format 2 added the sentence stances. Loading refuses a file of format 1 or one whose ``stance_version``
differs from :data:`groundtrace.crs.kb.stance.STANCE_VERSION` (:class:`StaleKnowledgeBaseError`, with the
command that rebuilds it).

Saving writes a temporary file and renames it over ``path`` (atomic; re-saving is idempotent). Loading
checks the ``format`` marker (clear :class:`NotAKnowledgeBaseError` otherwise), rebuilds the KB and
recomputes its hash: a mismatch with the stored one raises :class:`KBIntegrityError`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundtrace.core.files.validation import validation_message
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.stance import STANCE_VERSION, SentenceStance
from groundtrace.crs.schema import POI, Review

FORMAT = "groundtrace-kb"
FORMAT_VERSION = 2

#: Ordered, named migrations; a file records the ones applied.
MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_initial",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        CREATE TABLE pois (poi_id TEXT PRIMARY KEY, city TEXT NOT NULL, poi_type TEXT NOT NULL,
                           lat REAL NOT NULL, lon REAL NOT NULL, record TEXT NOT NULL);
        CREATE TABLE reviews (review_id TEXT PRIMARY KEY, poi_id TEXT NOT NULL REFERENCES pois(poi_id),
                              record TEXT NOT NULL);
        CREATE INDEX reviews_by_poi ON reviews(poi_id);
        CREATE INDEX pois_by_city_type ON pois(city, poi_type);
        """,
    ),
    (
        "0002_sentence_stance",
        """
        CREATE TABLE sentences (review_id TEXT NOT NULL REFERENCES reviews(review_id), start INTEGER NOT NULL,
                                "end" INTEGER NOT NULL, aspects TEXT NOT NULL, polarity INTEGER NOT NULL,
                                score REAL NOT NULL, PRIMARY KEY (review_id, start));
        """,
    ),
)


class NotAKnowledgeBaseError(ValueError):
    """The file is not a groundtrace KB (not SQLite, or no KB meta table)."""


REBUILD_HINT = "rebuild it with `groundtrace crs kb build` (or `groundtrace crs kb demo`)"


class StaleKnowledgeBaseError(NotAKnowledgeBaseError):
    """The file was built by older code (no or outdated sentence stances): it must be rebuilt."""


class KBIntegrityError(ValueError):
    """The stored content hash does not match the content."""


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _migrate(conn: sqlite3.Connection, stamp: str) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.executescript(sql)
        conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, stamp))


def save_kb(
    kb: KnowledgeBase,
    path: Path | str,
    *,
    source: str = "",
    selection: dict[str, Any] | None = None,
    created: str | None = None,
) -> Path:
    """Write ``kb`` to the SQLite file ``path`` (replacing it atomically); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    created = created or datetime.now(UTC).isoformat(timespec="seconds")
    conn = sqlite3.connect(tmp)
    try:
        _migrate(conn, created)
        with conn:
            conn.executemany(
                "INSERT INTO pois VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (p.poi_id, p.city, p.poi_type, p.lat, p.lon, _canonical(p.model_dump(mode="json")))
                    for p in (kb.pois[i] for i in sorted(kb.pois))
                ),
            )
            stances = kb.stances
            conn.executemany(
                "INSERT INTO sentences VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (s.review_id, s.start, s.end, ",".join(s.aspects), s.polarity, s.score)
                    for rid in sorted(stances)
                    for s in stances[rid]
                ),
            )
            conn.executemany(
                "INSERT INTO reviews VALUES (?, ?, ?)",
                (
                    (r.review_id, r.poi_id, _canonical(r.model_dump(mode="json")))
                    for r in (kb.reviews[i] for i in sorted(kb.reviews))
                ),
            )
            meta = {
                "format": FORMAT,
                "format_version": str(FORMAT_VERSION),
                "name": kb.name,
                "content_hash": kb.content_hash,
                "created": created,
                "source": source,
                "selection": _canonical(selection),
                "summary": _canonical(kb.summary()),
                "stance_version": STANCE_VERSION,
                "stance_model": kb.stance_model or "",
            }
            conn.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
    finally:
        conn.close()
    tmp.replace(path)
    return path


def _connect_kb(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such KB file")
    with open(path, "rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise NotAKnowledgeBaseError(f"{path} is not a groundtrace KB (not an SQLite file)")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise NotAKnowledgeBaseError(f"{path} is not a groundtrace KB ({exc})") from None
    if row is None or row[0] != FORMAT:
        conn.close()
        raise NotAKnowledgeBaseError(
            f"{path} is not a groundtrace KB (meta.format is {row[0] if row else None!r})"
        )
    return conn


def read_meta(path: Path | str) -> dict[str, Any]:
    """The ``meta`` table with JSON values decoded (``selection``, ``summary``)."""
    conn = _connect_kb(Path(path))
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()
    for key in ("selection", "summary"):
        if key in meta:
            meta[key] = json.loads(meta[key])
    return meta


def _record(model: type[POI | Review], path: Path, table: str, row: tuple[str, str]) -> Any:
    """One stored record, or :class:`KBIntegrityError` naming the file, table and id when it is invalid."""
    try:
        return model.model_validate_json(row[1])
    except ValidationError as exc:
        raise KBIntegrityError(
            f"{path}: {table} record {row[0]!r} is invalid ({validation_message(exc)}); "
            "the file was modified or is corrupt"
        ) from None


def stale_message(path: Path | str, meta: dict[str, Any]) -> str | None:
    """Why a KB with this ``meta`` was built by older code (format below :data:`FORMAT_VERSION`, or
    another sentence-stance version) and must be rebuilt; ``None`` when it is current (or newer)."""
    version = int(meta.get("format_version", "0"))
    if version >= FORMAT_VERSION and meta.get("stance_version") == STANCE_VERSION:
        return None
    if version > FORMAT_VERSION:
        return None  # newer: load_kb refuses it with its own message
    return (
        f"{path}: KB built by older code (format {version}, sentence stance "
        f"{meta.get('stance_version') or 'absent'}; this version needs format {FORMAT_VERSION}, "
        f"{STANCE_VERSION}); {REBUILD_HINT}"
    )


def load_kb(path: Path | str, *, verify: bool = True) -> KnowledgeBase:
    """Load a KB saved by :func:`save_kb`; with ``verify`` (default) check the content hash."""
    path = Path(path)
    conn = _connect_kb(path)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        version = int(meta.get("format_version", "0"))
        if version > FORMAT_VERSION:
            raise NotAKnowledgeBaseError(
                f"{path}: KB format version {version} is newer than supported ({FORMAT_VERSION})"
            )
        stale = stale_message(path, meta)
        if stale is not None:
            raise StaleKnowledgeBaseError(stale)
        pois = [
            _record(POI, path, "pois", r)
            for r in conn.execute("SELECT poi_id, record FROM pois ORDER BY poi_id")
        ]
        reviews = [
            _record(Review, path, "reviews", r)
            for r in conn.execute("SELECT review_id, record FROM reviews ORDER BY review_id")
        ]
        stances: dict[str, list[SentenceStance]] = {r.review_id: [] for r in reviews}
        for rid, start, end, aspects, polarity, score in conn.execute(
            'SELECT review_id, start, "end", aspects, polarity, score FROM sentences '
            "ORDER BY review_id, start"
        ):
            if rid in stances:
                stances[rid].append(
                    SentenceStance(rid, start, end, tuple(aspects.split(",")), polarity, score)
                )
    finally:
        conn.close()
    kb = KnowledgeBase(pois, reviews, name=meta.get("name", path.stem))
    kb.set_stances(stances, meta.get("stance_model") or "")
    if verify and kb.content_hash != meta.get("content_hash"):
        raise KBIntegrityError(
            f"{path}: content hash mismatch (stored {meta.get('content_hash')}, computed {kb.content_hash}); "
            "the file was modified or is corrupt"
        )
    return kb


def kb_summary(path: Path | str) -> dict[str, Any]:
    """Summary of a KB file without loading it: stored summary plus created/source/selection/hash."""
    meta = read_meta(path)
    summary = dict(meta.get("summary") or {})
    summary.update(
        {
            "path": str(path),
            "content_hash": meta.get("content_hash"),
            "created": meta.get("created"),
            "source": meta.get("source"),
            "selection": meta.get("selection"),
            "format_version": int(meta.get("format_version", "0")),
            "stance_version": meta.get("stance_version"),
            "stale": stale_message(path, meta),
        }
    )
    return summary
