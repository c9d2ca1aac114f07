"""Adaptive concurrency for one LLM client: AIMD on rate limits, ``Retry-After`` as a shared pause.

A client allows at most ``limit`` requests in flight; ``limit`` starts at (and never exceeds) the
client's ``concurrency`` bound:

* multiplicative decrease — a request answered HTTP 429 halves it: ``limit = max(minimum, limit // 2)``,
  at most once per *window*: the requests already in flight when the limit was lowered were sent under
  the old limit, so their 429s say nothing new (each request carries the window it started in, and only
  a 429 from the current window lowers the limit again — as TCP halves once per round trip);
* additive increase — after ``increase_after`` successes in a row (default: the current limit, about
  one round of requests) ``limit = min(maximum, limit + 1)``;
* ``Retry-After`` (any retryable answer carrying it, 429 or 503) — no request of this client starts
  before ``now + Retry-After`` (capped at ``max_pause_s``); the request that got it waits the same time
  under the :class:`~groundtrace.core.llm.retry.RetryPolicy`.

The limit is one number per client, shared by its threads and event loops; the gates that hold requests
back count in-flight requests per thread pool (:class:`ThreadGate`) and per event loop
(:class:`LoopGate`), as the fixed bound did. ``history`` keeps every limit change (``(reason, limit)``)
for reports and tests. ``clock`` is injectable (tests use a fake clock).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

RATE_LIMITED = 429


@dataclass
class AdaptiveLimit:
    """The AIMD limit and the ``Retry-After`` pause of one client (module docstring)."""

    maximum: int
    minimum: int = 1
    increase_after: int | None = None
    max_pause_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    limit: int = 0
    window: int = 0
    paused_until: float = 0.0
    history: list[tuple[str, int]] = field(default_factory=list)
    _streak: int = field(default=0, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.maximum < 1 or not 1 <= self.minimum <= self.maximum:
            raise ValueError(
                f"need 1 <= minimum <= maximum, got minimum={self.minimum}, maximum={self.maximum}"
            )
        self.limit = self.limit or self.maximum

    @property
    def lowest(self) -> int:
        """The smallest limit reached so far."""
        return min([self.maximum, *(limit for _, limit in self.history)])

    def pause_left(self) -> float:
        """Seconds until requests may start again after a ``Retry-After`` (0 when not paused)."""
        return max(0.0, self.paused_until - self.clock())

    def succeeded(self) -> None:
        """One answered request: +1 after ``increase_after`` successes in a row."""
        with self._lock:
            self._streak += 1
            if self.limit < self.maximum and self._streak >= (self.increase_after or self.limit):
                self.limit += 1
                self._streak = 0
                self.history.append(("recover", self.limit))

    def failed(self, window: int, status: int | None, retry_after: float | None) -> None:
        """A retryable failure of a request started in ``window`` with HTTP ``status`` (``None``: time-out
        or connection error) and the server's ``Retry-After`` in seconds (``None``: not given)."""
        with self._lock:
            self._streak = 0
            if retry_after is not None:
                until = self.clock() + min(retry_after, self.max_pause_s)
                self.paused_until = max(self.paused_until, until)
            if status == RATE_LIMITED and window == self.window:
                self.window += 1
                lowered = max(self.minimum, self.limit // 2)
                if lowered != self.limit:
                    self.limit = lowered
                    self.history.append(("rate-limited", self.limit))


class ThreadGate:
    """At most ``limit.limit`` requests in flight from threads (a condition variable, no polling)."""

    def __init__(self, limit: AdaptiveLimit) -> None:
        self.limit = limit
        self.in_flight = 0
        self._cond = threading.Condition()

    def acquire(self) -> int:
        """Wait for a slot; returns the window the request starts in."""
        with self._cond:
            self._cond.wait_for(lambda: self.in_flight < self.limit.limit)
            self.in_flight += 1
            return self.limit.window

    def release(self) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()


class LoopGate:
    """The same for the coroutines of one event loop."""

    def __init__(self, limit: AdaptiveLimit) -> None:
        self.limit = limit
        self.in_flight = 0
        self._cond = asyncio.Condition()

    async def acquire(self) -> int:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit.limit)
            self.in_flight += 1
            return self.limit.window

    async def release(self) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()
