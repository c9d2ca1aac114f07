"""Persistent SQLite response cache, so a rerun costs nothing.

Key (:func:`cache_key`)::

    sha256( canonical_json({"model", "messages", "options", "schema"}) )

where canonical JSON has sorted keys and no insignificant whitespace, ``messages`` are
``{"role", "content"}`` dicts (``content`` a string, or a list of content parts in which a base64
``data:`` image URL is replaced by ``"data-sha256:<sha256 of the URL>"`` — every byte of the image is in
the key, the key stays small; see :func:`groundtrace.core.llm.content.key_content`), ``options`` are
``temperature``, ``max_tokens`` and ``seed``, and ``schema`` is the output JSON Schema (``null`` for free
text). Any change of model, prompt, option or schema is a miss. Only answers that validated are stored. A
request with ``temperature > 0`` and no ``seed`` is sampled, so it is neither read from nor written to the
cache (:func:`is_cacheable`).

One connection guarded by a lock (safe from threads and from coroutines on one loop); WAL journal and a
busy time-out make concurrent processes safe too. Schema changes are ordered migrations recorded in
``PRAGMA user_version``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from groundtrace.core.llm.content import key_messages

CACHE_DIR_ENV = "GROUNDTRACE_CACHE_DIR"
CACHE_FILE_NAME = "llm.sqlite"

_MIGRATIONS: tuple[str, ...] = (
    # 1: responses table
    """
    CREATE TABLE IF NOT EXISTS responses (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        request_json TEXT NOT NULL,
        text TEXT NOT NULL,
        finish_reason TEXT,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        hits INTEGER NOT NULL DEFAULT 0,
        last_hit_at REAL
    );
    CREATE INDEX IF NOT EXISTS responses_model ON responses(model);
    """,
)


def default_cache_path() -> Path:
    """``$GROUNDTRACE_CACHE_DIR/llm.sqlite``, else ``~/.cache/groundtrace/llm.sqlite``."""
    root = os.environ.get(CACHE_DIR_ENV)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "groundtrace"
    return base / CACHE_FILE_NAME


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 kept: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def is_cacheable(temperature: float, seed: int | None) -> bool:
    """Deterministic requests only: ``temperature == 0`` or a fixed ``seed``."""
    return temperature <= 0.0 or seed is not None


def cache_key(
    model: str,
    messages: list[dict[str, Any]],
    options: dict[str, Any],
    schema: dict[str, Any] | None,
    *,
    schema_json: str | None = None,
) -> str:
    """Hex sha256 of the canonical request (see module docstring).

    ``schema_json`` — ``canonical_json(schema)`` serialised once by the caller (``OutputSchema.canonical``)
    — stands for ``schema`` and gives the same key: the canonical JSON of ``{"messages", "model",
    "options", "schema"}`` is those four members in sorted order, so the schema's text is spliced in as is.
    """
    head = {"messages": key_messages(messages), "model": model, "options": options}
    if schema_json is None:
        text = canonical_json({**head, "schema": schema})
    else:
        text = canonical_json(head)[:-1] + ',"schema":' + schema_json + "}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


class ResponseCache:
    """SQLite-backed ``key -> answer`` store (see module docstring)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30.0)
        with self._lock:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._migrate()

    def _migrate(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        for number, script in enumerate(_MIGRATIONS, start=1):
            if number > version:
                self._conn.executescript(script)
                self._conn.execute(f"PRAGMA user_version = {number}")
        self._conn.commit()

    def get(self, key: str) -> CachedResponse | None:
        """The stored answer for ``key`` (and count the hit), or ``None``."""
        with self._lock:
            row = self._conn.execute(
                "SELECT text, finish_reason, prompt_tokens, completion_tokens FROM responses WHERE key = ?",
                (key,),
            ).fetchone()
            if row is None:
                return None
            self._conn.execute(
                "UPDATE responses SET hits = hits + 1, last_hit_at = ? WHERE key = ?", (time.time(), key)
            )
            self._conn.commit()
        return CachedResponse(
            text=row[0], finish_reason=row[1], prompt_tokens=row[2], completion_tokens=row[3]
        )

    def put(
        self,
        key: str,
        *,
        model: str,
        request: dict[str, Any],
        text: str,
        finish_reason: str | None,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> None:
        """Store (or replace) the answer for ``key``."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO responses (key, model, request_json, text, finish_reason, prompt_tokens,"
                " completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(key) DO UPDATE SET text = excluded.text, finish_reason = "
                "excluded.finish_reason, prompt_tokens = excluded.prompt_tokens, completion_tokens = "
                "excluded.completion_tokens, created_at = excluded.created_at",
                (
                    key,
                    model,
                    canonical_json(request),
                    text,
                    finish_reason,
                    prompt_tokens,
                    completion_tokens,
                    time.time(),
                ),
            )
            self._conn.commit()

    def delete(self, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses WHERE key = ?", (key,))
            self._conn.commit()

    def clear(self) -> int:
        """Delete every entry; returns how many were removed."""
        with self._lock:
            count = self._conn.execute("DELETE FROM responses").rowcount
            self._conn.commit()
        return count

    def stats(self) -> dict[str, Any]:
        """Entries, hits and tokens saved by hits (``hits * tokens`` of each entry), per model and total."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT model, COUNT(*), COALESCE(SUM(hits), 0), COALESCE(SUM(hits * prompt_tokens), 0),"
                " COALESCE(SUM(hits * completion_tokens), 0) FROM responses GROUP BY model ORDER BY model"
            ).fetchall()
        by_model = {
            model: {"entries": n, "hits": hits, "prompt_tokens_saved": p, "completion_tokens_saved": c}
            for model, n, hits, p, c in rows
        }
        size = self.path.stat().st_size if self.path.exists() else 0
        return {
            "path": str(self.path),
            "size_bytes": size,
            "entries": sum(m["entries"] for m in by_model.values()),
            "hits": sum(m["hits"] for m in by_model.values()),
            "prompt_tokens_saved": sum(m["prompt_tokens_saved"] for m in by_model.values()),
            "completion_tokens_saved": sum(m["completion_tokens_saved"] for m in by_model.values()),
            "by_model": by_model,
        }

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
