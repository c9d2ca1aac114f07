"""Shared evidence core: quotes, citations, tokens, normalisation, entailment, LLM client, registry.

This package must never import ``groundtrace.crs`` or ``groundtrace.catalog``.

The public Python API (docs/python-api.md); everything else is private by convention::

    from groundtrace import core

    core.quote_score("12 oz bag", "Net Wt: 12 oz Bag of coffee")      # 1.0: verbatim after normalising
    match = core.locate_quote("12 oz bag", source)                    # score, start, end in the source
    core.parse_citations("Great tacos [R1] and cheap [R2].")          # claims with their tags
    core.normalize_value("16 fl. oz", "number")                       # canonical value string
    client = core.llm_client("openai:gpt-4o-mini")                    # an LLM client from a spec, like --llm

Names are imported on first use, so ``import groundtrace.core`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from groundtrace.core.evidence.citations import CitedClaim, parse_citations
    from groundtrace.core.evidence.normalize import normalize_value, values_equal
    from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, QuoteMatch, locate_quote, quote_score
    from groundtrace.core.llm.factory import make_llm as llm_client

_EXPORTS: dict[str, tuple[str, str]] = {
    "quote_score": ("groundtrace.core.evidence.quotes", "quote_score"),
    "locate_quote": ("groundtrace.core.evidence.quotes", "locate_quote"),
    "QuoteMatch": ("groundtrace.core.evidence.quotes", "QuoteMatch"),
    "GROUNDED_THRESHOLD": ("groundtrace.core.evidence.quotes", "GROUNDED_THRESHOLD"),
    "parse_citations": ("groundtrace.core.evidence.citations", "parse_citations"),
    "CitedClaim": ("groundtrace.core.evidence.citations", "CitedClaim"),
    "normalize_value": ("groundtrace.core.evidence.normalize", "normalize_value"),
    "values_equal": ("groundtrace.core.evidence.normalize", "values_equal"),
    "llm_client": ("groundtrace.core.llm.factory", "make_llm"),
}

__all__ = [
    "GROUNDED_THRESHOLD",
    "CitedClaim",
    "QuoteMatch",
    "llm_client",
    "locate_quote",
    "normalize_value",
    "parse_citations",
    "quote_score",
    "values_equal",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'groundtrace.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
