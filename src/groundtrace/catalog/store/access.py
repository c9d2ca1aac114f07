"""Review-page access state kept in the store, so it holds across server processes and restarts.

Sessions (``review_sessions``): :func:`open_session` makes a random id (``secrets.token_urlsafe(32)``,
256 bits) for a reviewer and stores only its sha256 with an expiry; the signed session cookie carries the
id. :func:`session_reviewer` is the reviewer of a live session (``None`` when the id is unknown, ended or
expired); :func:`end_session` deletes the row — a cookie replayed after logout finds nothing.
:func:`end_sessions_of` ends every session of one reviewer (password change, deactivation).

Login failures (``login_failures``): :func:`add_failures` appends one row per key at epoch time ``now``;
:func:`failure_times` reads a key's failure times after ``since``; :func:`prune_failures` deletes rows
older than a cut-off. The limit itself (how many, how long) is the web layer's
(``catalog.web.auth.LoginLimiter``).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select

from groundtrace.catalog.store import schema as t
from groundtrace.catalog.store.clean import clean_text
from groundtrace.catalog.store.store import CatalogStore

SESSION_HOURS = 8.0


def _key(key: str) -> str:
    return clean_text(key)[:300]


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


def open_session(store: CatalogStore, reviewer: str, *, hours: float = SESSION_HOURS) -> str:
    """A new session id for ``reviewer`` valid for ``hours`` (only its sha256 is stored)."""
    session_id = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    with store.engine.begin() as conn:
        conn.execute(
            t.review_sessions.insert().values(
                id_hash=_hash(session_id),
                reviewer=reviewer,
                created_at=now,
                last_seen=now,
                expires_at=now + timedelta(hours=hours),
            )
        )
        # expired rows of anyone are dropped on the way (a login is rare; the table stays small)
        conn.execute(delete(t.review_sessions).where(t.review_sessions.c.expires_at < now))
    return session_id


def session_reviewer(store: CatalogStore, session_id: object) -> str | None:
    """The reviewer of live session ``session_id``; None when unknown, ended or expired."""
    if not isinstance(session_id, str) or not session_id:
        return None
    rs = t.review_sessions
    with store.engine.connect() as conn:
        row = conn.execute(
            select(rs.c.reviewer, rs.c.expires_at).where(rs.c.id_hash == _hash(session_id))
        ).first()
    if row is None:
        return None
    expires = row.expires_at if row.expires_at.tzinfo else row.expires_at.replace(tzinfo=UTC)  # SQLite
    return str(row.reviewer) if expires > datetime.now(UTC) else None


def end_session(store: CatalogStore, session_id: object) -> bool:
    """Delete the session; True when there was one."""
    if not isinstance(session_id, str) or not session_id:
        return False
    with store.engine.begin() as conn:
        rs = t.review_sessions
        result = conn.execute(delete(rs).where(rs.c.id_hash == _hash(session_id)))
    return bool(result.rowcount)


def end_sessions_of(store: CatalogStore, reviewer: str) -> int:
    """End every session of ``reviewer``; the number ended."""
    with store.engine.begin() as conn:
        result = conn.execute(delete(t.review_sessions).where(t.review_sessions.c.reviewer == reviewer))
    return int(result.rowcount or 0)


def add_failures(store: CatalogStore, keys: Sequence[str], now: float) -> None:
    """One failed login at epoch ``now`` for each key (keys cut to 300 characters)."""
    if keys:
        with store.engine.begin() as conn:
            conn.execute(t.login_failures.insert(), [{"key": _key(k), "at": now} for k in keys])


def failure_times(store: CatalogStore, key: str, since: float) -> list[float]:
    """Epoch times of ``key``'s failures after ``since``, oldest first."""
    lf = t.login_failures
    with store.engine.connect() as conn:
        rows = conn.execute(
            select(lf.c.at).where(lf.c.key == _key(key), lf.c.at > since).order_by(lf.c.at)
        ).all()
    return [float(r[0]) for r in rows]


def prune_failures(store: CatalogStore, before: float) -> None:
    """Delete every failure older than ``before`` (epoch seconds)."""
    with store.engine.begin() as conn:
        conn.execute(delete(t.login_failures).where(t.login_failures.c.at <= before))


def clear_failures(store: CatalogStore, keys: Sequence[str]) -> None:
    """Delete the failures of ``keys`` (an administrator's reset; a login never calls it)."""
    with store.engine.begin() as conn:
        conn.execute(delete(t.login_failures).where(t.login_failures.c.key.in_([_key(k) for k in keys])))
