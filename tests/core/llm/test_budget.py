"""``core.llm.budget``: the token estimate (digits count one each), the context size of a client."""

from __future__ import annotations

import math

from groundtrace.core.evidence.tokens import count_tokens
from groundtrace.core.llm.budget import TOKEN_RATIO, context_window, estimate_tokens, prompt_limit


def test_estimate_counts_core_tokens_and_every_extra_digit() -> None:
    words = "a quiet cafe with wifi"
    assert estimate_tokens(words) == math.ceil(TOKEN_RATIO * count_tokens(words))
    gtin = "GTIN 0012345678905"  # 13 digits: one core token, 13 model tokens
    assert estimate_tokens(gtin) == math.ceil(TOKEN_RATIO * (count_tokens(gtin) + 12))
    assert estimate_tokens("") == 0


class _Local:
    n_ctx = 2048


class _Remote:
    pass


def test_context_window_and_prompt_limit() -> None:
    assert context_window(_Local()) == 2048
    assert context_window(_Remote()) is None
    bad = _Local()
    bad.n_ctx = 0  # type: ignore[assignment]
    assert context_window(bad) is None
    assert prompt_limit(_Local(), None) == 2048
    assert prompt_limit(_Local(), 1000) == 1000
    assert prompt_limit(_Remote(), None) is None
