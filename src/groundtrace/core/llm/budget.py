"""Token budgets for small-context models: how many model tokens a text takes, and how big the context is.

Remote endpoints do not say their context size (``None``: treated as big); the bundled SmolLM2-135M runs
with ``n_ctx`` = 2,048 tokens, where a prompt that fits a big model does not. Callers build a prompt,
estimate it, and shrink what they show until prompt + answer fit (catalog: ``catalog.scout.prompt_budget``;
CRS: the LLM baselines' ``fit_prompt``).

``estimate_tokens(text) = ceil(TOKEN_RATIO × (core tokens + extra digits))`` — the core tokenizer counts
words and punctuation, SmolLM2's BPE splits numbers into digits; it needed 1.13× as many tokens on Scout
prompts (measured: 2,461 model vs 2,166 core tokens; system prompt 438 vs 386), and a judge prompt full of
GTINs overflowed the 2,048 context when digits were not counted, so each digit counts and
``TOKEN_RATIO`` = 1.25 adds margin.
"""

from __future__ import annotations

import math
import re
from typing import Any

from groundtrace.core.evidence.tokens import count_tokens

TOKEN_RATIO = 1.25

_DIGITS = re.compile(r"\d{2,}")


def estimate_tokens(text: str) -> int:
    """Model tokens ``text`` will take: ``ceil(TOKEN_RATIO × (core tokens + extra digits))`` where a run of
    n digits counts n tokens (Llama-family BPEs such as SmolLM2's split numbers into single digits; a
    GTIN is one core token but 12-14 model tokens)."""
    extra = sum(len(m.group(0)) - 1 for m in _DIGITS.finditer(text))
    return math.ceil(TOKEN_RATIO * (count_tokens(text) + extra))


def context_window(llm: Any) -> int | None:
    """The client's context size in tokens (``n_ctx`` of a local model), ``None`` when unknown."""
    n_ctx = getattr(llm, "n_ctx", None)
    return int(n_ctx) if isinstance(n_ctx, int) and n_ctx > 0 else None


def prompt_limit(llm: Any, max_prompt_tokens: int | None) -> int | None:
    """Tokens prompt + answer may use: ``max_prompt_tokens`` when given, else the client's context."""
    return max_prompt_tokens if max_prompt_tokens is not None else context_window(llm)
