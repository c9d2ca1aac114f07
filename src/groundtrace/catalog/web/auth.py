"""Reviewer authentication: argon2 password hashes, a login rate limit and the session secret.

* Passwords are hashed with argon2id through ``argon2-cffi`` (its ``PasswordHasher`` defaults, RFC 9106
  low-memory profile); the store keeps only the encoded hash (``CatalogStore.set_reviewer``).
* :class:`LoginLimiter`: at most ``max_failures`` failed logins per key (client address and, separately,
  account name) within a sliding ``window`` seconds; further attempts are refused without checking the
  password until the oldest failure leaves the window. Kept in the server process: the page is one process
  bound to loopback by default, so an in-memory counter is enough and needs no extra dependency (slowapi
  would bring ``limits`` for the same sliding window). The clock is injectable (tests never sleep).
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
    """Sliding-window limit on failed logins per key (module docstring)."""

    def __init__(
        self, max_failures: int = 5, window: float = 300.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        cutoff = self.clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        return times

    def blocked(self, *keys: str) -> bool:
        """True when any key already has ``max_failures`` failures in the window."""
        return any(len(self._recent(k)) >= self.max_failures for k in keys)

    def failed(self, *keys: str) -> None:
        now = self.clock()
        for key in keys:
            self._recent(key).append(now)

    def succeeded(self, *keys: str) -> None:
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
