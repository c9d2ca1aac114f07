"""The one tokenizer used for every token count in groundtrace.

Definition (documented contract, used by citation density and all length statistics):

    a token is a maximal run of Unicode word characters, optionally joined by single inner
    apostrophes or hyphens ("don't", "wi-fi", "8.5" is three tokens: "8", ".", "5"),
    or any single non-space, non-word character (punctuation, symbols, each counted once).

So ``"Great wi-fi, don't miss it! [R1]"`` tokenizes to
``Great | wi-fi | , | don't | miss | it | ! | [ | R1 | ]`` — 10 tokens. Whitespace is never a token.
It is deterministic, language-agnostic, needs no model files, and runs at regex speed.
"""

from __future__ import annotations

import re

TOKEN_PATTERN = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens (see module docstring)."""
    return TOKEN_PATTERN.findall(text)


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character ``(start, end)`` of every token of ``text``, in order."""
    return [m.span() for m in TOKEN_PATTERN.finditer(text)]


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (``len(tokenize(text))`` without building the list)."""
    return sum(1 for _ in TOKEN_PATTERN.finditer(text))
