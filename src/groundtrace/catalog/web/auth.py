"""Reviewer authentication: argon2 password hashes, a login rate limit and the session secret.

* Passwords are hashed with argon2id through ``argon2-cffi`` (its ``PasswordHasher`` defaults, RFC 9106
  low-memory profile); the store keeps only the encoded hash (``CatalogStore.set_reviewer``).
* :class:`LoginLimiter`: at most ``max_failures`` failed logins per key — the client address
  (``ip:<address>``) and, separately, the account name (``user:<name>``) — within a sliding ``window``
  seconds; further attempts are refused (429 with ``Retry-After``) without checking the password until
  enough failures left the window. The failures are kept in the store (``login_failures``), so they hold
  across server processes and restarts. A successful login resets NOTHING: failures only age out, so a
  success for account A from address X leaves X's failures against other accounts (and A's failures from
  other addresses) counting. The clock is injectable (tests never sleep).
* Password checks run on a worker thread (the routes call :func:`verify_password` through
  ``starlette.concurrency.run_in_threadpool``): argon2 costs tens of milliseconds of CPU by design and
  would otherwise stall every other request on the event loop.
* The session secret (signs the session cookie): ``$GROUNDTRACE_WEB_SECRET`` when set, else a random
  secret generated once into a file (mode 0600) and reused, so sessions survive a restart.
"""

from __future__ import annotations

import os
import secrets
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.access import add_failures, clear_failures, failure_times, prune_failures

SECRET_ENV = "GROUNDTRACE_WEB_SECRET"
MIN_PASSWORD_LENGTH = 8

_HASHER = PasswordHasher()
# verified against when the account does not exist, so a wrong name costs as much as a wrong password
_DUMMY_HASH = _HASHER.hash(secrets.token_urlsafe(16))


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (``ValueError`` when shorter than :data:`MIN_PASSWORD_LENGTH`)."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValueError(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    return _HASHER.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    """True when ``password`` matches ``stored_hash``; a missing account is checked against a dummy hash."""
    try:
        return bool(_HASHER.verify(stored_hash or _DUMMY_HASH, password)) and stored_hash is not None
    except (VerificationError, InvalidHashError):
        return False


class LoginLimiter:
    """Sliding-window limit on failed logins per key (module docstring).

    ``bind(store)`` (done by ``create_app``) keeps the failures in the store's ``login_failures`` table,
    so every server process of one store sees the same counts; unbound, they are kept in this object
    (tests, a single process). The clock is epoch seconds (``time.time``) so processes agree."""

    def __init__(
        self,
        max_failures: int = 5,
        window: float = 300.0,
        clock: Callable[[], float] = time.time,
        store: CatalogStore | None = None,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.clock = clock
        self.store = store
        self._failures: dict[str, deque[float]] = {}

    def bind(self, store: CatalogStore) -> LoginLimiter:
        """Keep the failures in ``store`` (when not bound to a store already); returns self."""
        if self.store is None:
            self.store = store
        return self

    def _recent(self, key: str) -> list[float]:
        cutoff = self.clock() - self.window
        if self.store is not None:
            return failure_times(self.store, key, cutoff)
        times = self._failures.setdefault(key, deque())
        while times and times[0] <= cutoff:
            times.popleft()
        return list(times)

    def retry_after(self, *keys: str) -> float | None:
        """Seconds until every key is under ``max_failures`` again; None when none is blocked."""
        waits = []
        for key in keys:
            times = self._recent(key)
            if len(times) >= self.max_failures:
                # the key is free once all but max_failures - 1 of its failures left the window
                waits.append(times[len(times) - self.max_failures] + self.window - self.clock())
        return max(0.0, max(waits)) if waits else None

    def blocked(self, *keys: str) -> bool:
        """True when any key already has ``max_failures`` failures in the window."""
        return self.retry_after(*keys) is not None

    def failed(self, *keys: str) -> None:
        now = self.clock()
        if self.store is not None:
            add_failures(self.store, keys, now)
            prune_failures(self.store, now - self.window)
            return
        for key in keys:
            self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, *keys: str) -> None:
        """Forget the failures of ``keys`` — an administrator's reset. The login route never calls it: a
        success for one account must not clear its address's failures against other accounts."""
        if self.store is not None:
            clear_failures(self.store, keys)
            return
        for key in keys:
            self._failures.pop(key, None)


def default_secret_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "groundtrace" / "web_secret"


def session_secret(secret_file: Path | None = None) -> str:
    """``$GROUNDTRACE_WEB_SECRET``, else the secret in ``secret_file`` (created with 32 random bytes)."""
    env = os.environ.get(SECRET_ENV, "").strip()
    if env:
        if len(env) < 32:
            raise ValueError(f"${SECRET_ENV} must be at least 32 characters")
        return env
    path = secret_file or default_secret_file()
    if path.is_file():
        text = path.read_text(encoding="utf-8").strip()
        if len(text) >= 32:
            return text
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secret + "\n")
    return secret
