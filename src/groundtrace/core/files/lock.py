"""One writer per output file: an advisory lock file next to it that names the holder.

``with WriterLock(out_path): ...`` creates (or opens) ``OUT.lock`` and takes an exclusive, non-blocking
``fcntl.flock`` on it, then writes the holder's pid into it. A second writer on the same output gets
:class:`LockHeldError` at once — ``OUT.lock is held by pid 1234 (another run writing OUT); wait for it or
stop it`` — instead of interleaving its lines with the first writer's. The operating system drops the lock
when the holder exits or is killed, so a stale lock file left by a crashed run never blocks a rerun (its pid
is simply overwritten). The lock file is left in place on release (removing it would race with a third
writer opening it).

Where ``fcntl`` does not exist (Windows) the lock falls back to creating the file exclusively
(``O_CREAT | O_EXCL``) and removing it on release; a crashed run then leaves a lock to delete by hand, and
the error says so.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Self

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class LockHeldError(RuntimeError):
    """Another process holds the writer lock of this output."""


def lock_path(out_path: Path) -> Path:
    """``RESULTS.jsonl`` → ``RESULTS.jsonl.lock``."""
    return out_path.with_name(out_path.name + ".lock")


def _holder(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "unknown pid"
    return f"pid {text[:20]}" if text.isdigit() else "unknown pid"


class WriterLock:
    """Exclusive writer lock on ``out_path`` (module docstring); a context manager."""

    def __init__(self, out_path: Path) -> None:
        self.out_path = Path(out_path)
        self.path = lock_path(self.out_path)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockHeldError` naming the lock file and its holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fcntl is None:  # pragma: no cover - Windows
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                raise LockHeldError(
                    f"{self.path} is held by {_holder(self.path)} (another run writing {self.out_path}); "
                    "wait for it, or delete the lock if that run is gone"
                ) from None
        else:
            fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise LockHeldError(
                    f"{self.path} is held by {_holder(self.path)} (another run writing {self.out_path}); "
                    "wait for it or stop it"
                ) from None
            os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode("ascii"))
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (idempotent)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        if fcntl is None:  # pragma: no cover - Windows
            os.close(fd)
            self.path.unlink(missing_ok=True)
            return
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
