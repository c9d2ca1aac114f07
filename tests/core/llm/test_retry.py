"""Backoff arithmetic and Retry-After parsing."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.retry import RetriesExhaustedError, RetryPolicy, TransientError, parse_retry_after


def test_backoff_without_jitter_doubles_then_caps() -> None:
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3.0, jitter=0.0)
    # 0.5 * 2**k = 0.5, 1, 2, 4 -> capped at 3
    assert [policy.delay(k) for k in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_is_seeded_and_bounded() -> None:
    a = RetryPolicy(jitter=1.0, rng=random.Random(3))
    b = RetryPolicy(jitter=1.0, rng=random.Random(3))
    delays = [a.delay(k) for k in range(6)]
    assert delays == [b.delay(k) for k in range(6)]
    for k, d in enumerate(delays):
        assert 0.0 < d <= min(20.0, 0.5 * 2**k)


def test_retry_after_wins_but_is_capped() -> None:
    policy = RetryPolicy(max_retry_after_s=10.0)
    assert policy.delay(0, retry_after=4.0) == 4.0
    assert policy.delay(3, retry_after=120.0) == 10.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "Retry-After": "9"}, 0.25),
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_parse_retry_after(headers, expected) -> None:
    assert parse_retry_after(headers) == expected


def test_parse_retry_after_http_date() -> None:
    now = 1_800_000_000.0
    header = formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == pytest.approx(30.0)


def test_run_retries_only_transient_errors() -> None:
    slept: list[float] = []
    policy = RetryPolicy(max_retries=2, jitter=0.0, sleep=slept.append)
    outcomes = iter([TransientError("a"), TransientError("b"), "ok"])

    def attempt() -> str:
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    assert policy.run(attempt) == ("ok", 2)
    assert slept == [0.5, 1.0]

    def fatal() -> str:
        raise LLMError("HTTP 401")

    with pytest.raises(LLMError, match="401"):
        policy.run(fatal)
    assert len(slept) == 2


def test_run_gives_up_with_count() -> None:
    policy = RetryPolicy(max_retries=1, sleep=lambda _s: None)

    def always() -> str:
        raise TransientError("HTTP 503", status=503)

    with pytest.raises(RetriesExhaustedError, match="gave up after 1 retries: HTTP 503") as info:
        policy.run(always)
    assert info.value.retries == 1
