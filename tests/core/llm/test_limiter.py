"""Adaptive concurrency: AIMD on HTTP 429, Retry-After as a pause — the arithmetic on a fake clock, then a
real client against the wire server's simulated rate limit (no timing thresholds: fake sleeps)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from groundtrace.core.llm.engine import LLMRequest
from groundtrace.core.llm.limiter import AdaptiveLimit, ThreadGate
from groundtrace.core.llm.wire_server import Reply, rate_limited

from .test_openai_client import ASK, VALID, Place


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_429_halves_the_limit_once_per_window() -> None:
    limit = AdaptiveLimit(maximum=16, clock=FakeClock())
    window = limit.window
    limit.failed(window, 429, None)
    assert limit.limit == 8
    limit.failed(window, 429, None)  # sent under the old limit: says nothing new
    limit.failed(window, 429, None)
    assert limit.limit == 8
    limit.failed(limit.window, 429, None)  # a request started after the decrease
    assert limit.limit == 4
    assert limit.history == [("rate-limited", 8), ("rate-limited", 4)]


def test_the_limit_never_falls_below_its_minimum_and_other_failures_do_not_lower_it() -> None:
    limit = AdaptiveLimit(maximum=4, minimum=2, clock=FakeClock())
    for _ in range(5):
        limit.failed(limit.window, 429, None)
    assert limit.limit == 2
    limit = AdaptiveLimit(maximum=4, clock=FakeClock())
    limit.failed(limit.window, 500, None)
    limit.failed(limit.window, None, None)  # time-out
    assert limit.limit == 4 and limit.history == []
    with pytest.raises(ValueError, match="minimum"):
        AdaptiveLimit(maximum=2, minimum=3)


def test_successes_raise_the_limit_by_one_per_run_and_a_failure_restarts_the_run() -> None:
    limit = AdaptiveLimit(maximum=8, increase_after=3, clock=FakeClock())
    limit.failed(limit.window, 429, None)
    assert limit.limit == 4
    limit.succeeded()
    limit.succeeded()
    limit.failed(limit.window, 503, None)  # the run of successes starts again
    for _ in range(3):
        limit.succeeded()
    assert limit.limit == 5
    for _ in range(3 * 3):
        limit.succeeded()
    assert limit.limit == 8  # back at the maximum, never above
    for _ in range(6):
        limit.succeeded()
    assert limit.limit == 8
    assert limit.lowest == 4
    assert [reason for reason, _ in limit.history] == [
        "rate-limited",
        "recover",
        "recover",
        "recover",
        "recover",
    ]


def test_default_run_of_successes_is_the_current_limit() -> None:
    limit = AdaptiveLimit(maximum=8, clock=FakeClock())
    limit.failed(limit.window, 429, None)
    for _ in range(3):
        limit.succeeded()
    assert limit.limit == 4
    limit.succeeded()
    assert limit.limit == 5


def test_retry_after_pauses_until_then_capped() -> None:
    clock = FakeClock()
    limit = AdaptiveLimit(maximum=4, max_pause_s=30.0, clock=clock)
    assert limit.pause_left() == 0.0
    limit.failed(limit.window, 503, 2.5)
    assert limit.pause_left() == 2.5 and limit.limit == 4  # a 503 pauses, does not halve
    clock.now += 1.0
    assert limit.pause_left() == 1.5
    limit.failed(limit.window, 429, 0.5)  # an earlier end never shortens the pause
    assert limit.pause_left() == 1.5
    limit.failed(limit.window, 429, 3600.0)
    assert limit.pause_left() == 30.0
    clock.now += 31.0
    assert limit.pause_left() == 0.0


def test_thread_gate_admits_at_most_the_current_limit() -> None:
    limit = AdaptiveLimit(maximum=4, clock=FakeClock())
    gate = ThreadGate(limit)
    for _ in range(4):
        gate.acquire()
    limit.failed(limit.window, 429, None)  # limit 2 while 4 are in flight
    admitted = threading.Event()

    def one_more() -> None:
        gate.acquire()
        admitted.set()

    waiter = threading.Thread(target=one_more)
    waiter.start()
    gate.release()
    gate.release()
    assert not admitted.wait(0.05)  # 2 in flight = the limit: still held back
    gate.release()
    waiter.join()  # 1 in flight < 2: admitted (a hang here would be the bug)
    assert admitted.is_set() and gate.in_flight == 2


def _answer(_request: dict) -> str:
    return VALID


def test_async_client_backs_off_on_429_honours_retry_after_and_recovers(serve, make_client, sleeper) -> None:
    """Every second of the first 20 requests is answered 429 with Retry-After: 0.01. All 60 requests
    succeed; the limit fell below the bound and came back to it; every wait was the server's Retry-After
    (never the exponential back-off, whose first delay is >= 0.25 s)."""
    limited = rate_limited(_answer, share=0.5, first=20, retry_after_s=0.01)
    server = serve(limited)
    # more retries than the server's 10 refusals in all: no request can run out of them, whatever the
    # interleaving (with 6, one request refused at 7 of its tries gave up on a loaded machine)
    client = make_client(server, concurrency=8, max_retries=12)
    done = client.complete_many([LLMRequest(ASK, Place) for _ in range(60)])
    assert all(
        not isinstance(d, BaseException) and d.parsed == Place(name="Oak Bistro", stars=4) for d in done
    )
    assert limited.limited == 10
    assert client.usage().retries == 10 and client.usage().calls == 60
    assert client.limiter.lowest < 8
    assert client.limiter.limit == 8  # recovered
    assert ("recover", 8) in client.limiter.history
    assert sleeper.delays and all(delay <= 0.01 for delay in sleeper.delays)
    assert sleeper.delays.count(0.01) >= 10  # each refused request waited the Retry-After
    assert server.max_in_flight <= 8


def test_threads_sharing_a_client_back_off_and_recover(serve, make_client, sleeper) -> None:
    """The store runner's path: synchronous ``complete`` from many threads, one limit for all."""
    limited = rate_limited(_answer, share=0.25, first=24, retry_after_s=0.01)
    server = serve(limited)
    client = make_client(server, concurrency=8, max_retries=8)  # more than the 6 refusals in all
    with ThreadPoolExecutor(max_workers=16) as pool:
        done = list(pool.map(lambda _i: client.complete(ASK, Place), range(64)))
    assert all(d.parsed.stars == 4 for d in done)
    assert limited.limited == 6 and client.usage().retries == 6
    assert client.limiter.lowest < 8 and client.limiter.limit == 8
    assert all(delay <= 0.01 for delay in sleeper.delays)
    assert server.max_in_flight <= 8


def test_a_concurrency_cap_on_the_server_is_found(serve, make_client) -> None:
    """A server that refuses whatever exceeds 3 requests in flight: the client's 8 concurrent requests get
    429s, the limit shrinks, and every request is answered in the end."""
    limited = rate_limited(lambda _r: Reply(content=VALID, delay_s=0.2), max_in_flight=3, retry_after_s=0)
    server = serve(limited)
    client = make_client(server, concurrency=8, max_retries=8)
    done = asyncio.run(client.acomplete_many([LLMRequest(ASK, Place) for _ in range(16)]))
    assert all(not isinstance(d, BaseException) and d.parsed.stars == 4 for d in done)
    assert limited.limited >= 1 and client.usage().retries == limited.limited
    assert client.limiter.lowest < 8
    assert limited.seen == 16 + limited.limited


def test_rate_limit_share_is_deterministic_and_checked() -> None:
    limited = rate_limited(_answer, share=0.25, retry_after_s=None)
    replies = [limited({}) for _ in range(8)]
    refused = [i for i, r in enumerate(replies) if isinstance(r, Reply) and r.status == 429]
    assert refused == [3, 7]
    assert replies[3].headers == {}  # retry_after_s=None: no Retry-After header
    with pytest.raises(ValueError, match="share"):
        rate_limited(_answer, share=1.5)
