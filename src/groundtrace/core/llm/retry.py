"""Retry policy: exponential backoff with jitter, honouring ``Retry-After``.

Delay before retry number ``k`` (``k = 0`` for the first retry)::

    base  = min(max_delay_s, base_delay_s * 2**k)
    delay = base * (1 - jitter * u)          u ~ Uniform[0, 1) from the policy's seeded random.Random

so ``jitter = 0`` gives plain doubling and ``jitter = 1`` "full jitter". When the server sent
``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``, that wait is used instead, capped at
``max_retry_after_s``. Only :class:`TransientError` is retried; everything else fails at once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.steps import Program, Sleep, run_async, run_sync

T = TypeVar("T")
log = logging.getLogger("groundtrace.llm")


class TransientError(LLMError):
    """A failure worth retrying (time-out, connection error, 429, 5xx); ``retry_after`` in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class RetriesExhaustedError(LLMError):
    """Still failing after ``max_retries`` retries; ``retries`` says how many were made."""

    def __init__(self, message: str, *, retries: int) -> None:
        super().__init__(message)
        self.retries = retries


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` headers (case-insensitive), else ``None``."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass
class RetryPolicy:
    """How many retries and how long to wait; ``sleep``/``asleep`` are injectable for tests, and so is
    ``clock`` — the monotonic time a client's ``Retry-After`` pause is measured on
    (:mod:`~groundtrace.core.llm.limiter`); a fake sleep goes with a fake clock that it advances."""

    max_retries: int = 4
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    jitter: float = 0.5
    max_retry_after_s: float = 60.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    clock: Callable[[], float] = time.monotonic

    def delay(self, retry_index: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``retry_index`` (0-based); see module docstring."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        base = min(self.max_delay_s, self.base_delay_s * (2**retry_index))
        return base * (1.0 - self.jitter * self.rng.random())

    def attempts(self, request: Any) -> Program[tuple[Any, int]]:
        """The retry loop as a program (see :mod:`~groundtrace.core.llm.steps`).

        Yields ``request`` until performing it succeeds; after a :class:`TransientError` yields a
        :class:`~groundtrace.core.llm.steps.Sleep` with :meth:`delay` and tries again. Returns
        ``(result, retries_made)``; raises :class:`RetriesExhaustedError` after ``max_retries`` retries.
        Any other exception thrown in propagates at once.
        """
        for retry in range(self.max_retries + 1):
            try:
                return (yield request), retry
            except TransientError as exc:
                if retry == self.max_retries:
                    raise RetriesExhaustedError(
                        f"gave up after {retry} retries: {exc}", retries=retry
                    ) from exc
                wait = self.delay(retry, exc.retry_after)
                log.info("retry %d/%d in %.2fs: %s", retry + 1, self.max_retries, wait, exc)
                yield Sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def run(self, attempt: Callable[[], T]) -> tuple[T, int]:
        """Call ``attempt`` until it succeeds; returns ``(result, retries_made)``."""
        return run_sync(
            self.attempts(attempt), lambda e: self.sleep(e.seconds) if isinstance(e, Sleep) else e()
        )

    async def arun(self, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """Async twin of :meth:`run`."""

        async def perform(effect: Any) -> Any:
            return await (self.asleep(effect.seconds) if isinstance(effect, Sleep) else effect())

        return await run_async(self.attempts(attempt), perform)
