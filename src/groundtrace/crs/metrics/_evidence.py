"""Adapter from the core evidence API (citations, quotes) to the small records the metrics use.

Metrics need, for one response text:

* tag groups — every ``[Rn]`` / ``[R1, R3]`` occurrence with its character span and tag ids;
* quoted citations — every explicitly quoted span (``"..."`` or ``“...”``) directly followed by one or
  more tag groups, with the quote's text (quote marks excluded), its span and its tags.

Both come from ``groundtrace.core.citations`` (``find_tags`` / ``parse_citations``); quote matching
comes from ``groundtrace.core.quotes.quote_score``. This module is the only place that knows their
shapes, so a change there is a change here only.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType

GROUNDED_AT = 0.80


@cache
def _core(name: str) -> ModuleType:
    """``groundtrace.core.<name>``, imported on first use (clear error when it is not installed)."""
    try:
        return importlib.import_module(f"groundtrace.core.{name}")
    except ImportError as exc:  # pragma: no cover - only while the core module is missing
        raise ImportError(f"the grounding metrics need groundtrace.core.{name} ({exc})") from exc


@dataclass(frozen=True, slots=True)
class TagGroup:
    """One bracketed tag occurrence: ``text[start:end] == "[R1, R3]"`` → ``tags == ("R1", "R3")``."""

    start: int
    end: int
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class QuotedCitation:
    """An explicit quote carrying tags; ``text[start:end] == quote`` (the marks are outside)."""

    quote: str
    start: int
    end: int
    tags: tuple[str, ...]


def find_tag_groups(text: str) -> list[TagGroup]:
    """Every tag group of ``text``, in order (via ``core.citations.find_tags``)."""
    return [TagGroup(int(g.start), int(g.end), tuple(g.tags)) for g in _core("citations").find_tags(text)]


def find_quoted_citations(text: str) -> list[QuotedCitation]:
    """Every explicitly quoted span that carries tags (via ``core.citations.parse_citations``).

    Citations whose text is the sentence before the tag (no quote marks) are not *quoted* citations
    and are left out: GS and CD only count explicit quotes.
    """
    out = []
    for c in _core("citations").parse_citations(text):
        if not getattr(c, "quoted", False) or not c.tags:
            continue
        out.append(QuotedCitation(str(c.quote), int(c.start), int(c.end), tuple(c.tags)))
    return out


def quote_score(quote: str, source: str) -> float:
    """Best fuzzy alignment of ``quote`` inside ``source`` in [0, 1] (``core.quotes.quote_score``)."""
    result = _core("quotes").quote_score(quote, source)
    score = getattr(result, "score", result)
    return float(score)  # type: ignore[arg-type]
