"""Adapter from the core evidence API (citations, quotes) to the small records the metrics use.

Metrics need, for one response text:

* tag groups — every ``[Rn]`` / ``[R1, R3]`` occurrence with its character span and tag ids;
* claims — the stretches of text that tag groups close (``core.citations.parse_citations``);
* quoted citations — every quoted span (``"..."``, ``“...”`` ...) inside a claim that carries tags,
  with the quote's text (quote marks excluded), its span and the claim's tags.

Both come from ``groundtrace.core.evidence.citations`` (``find_tag_groups`` / ``parse_citations``); quote
matching comes from ``groundtrace.core.evidence.quotes.quote_score``. This module is the only place that knows
their shapes, so a change there is a change here only.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD

#: a quote is grounded at this quote_score — the one threshold, defined in core
GROUNDED_AT = GROUNDED_THRESHOLD


@cache
def _core(name: str) -> ModuleType:
    """``groundtrace.core.evidence.<name>``, imported on first use (clear error when it is not installed)."""
    try:
        return importlib.import_module(f"groundtrace.core.evidence.{name}")
    except ImportError as exc:  # pragma: no cover - only while the core module is missing
        raise ImportError(f"the grounding metrics need groundtrace.core.evidence.{name} ({exc})") from exc


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
    """Every tag group of ``text``, in order, with its bracket-to-bracket span
    (``core.citations.find_tag_groups``; ``[R1][R3]`` is two groups)."""
    return [
        TagGroup(g.start, g.end, tuple(t.label for t in g.tags))
        for g in _core("citations").find_tag_groups(text)
    ]


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim carrying tags: its text without tag groups (``core.citations.CitedClaim.text``)."""

    text: str
    start: int
    end: int
    tags: tuple[str, ...]
    quotes: tuple[QuotedCitation, ...]


def find_claims(text: str) -> list[Claim]:
    """Claims of ``text`` that carry at least one tag (``core.citations.parse_citations``).

    A claim is a sentence, or the stretch of one that a tag group closes; every quote inside it is
    cited by the claim's tags.
    """
    return find_groups_and_claims(text)[1]


def find_groups_and_claims(text: str) -> tuple[list[TagGroup], list[Claim]]:
    """``(find_tag_groups(text), find_claims(text))``, finding the tag groups once."""
    if "[" not in text:  # no tag group, hence no tagged claim: skip the parse
        return [], []
    citations = _core("citations")
    core_groups = citations.find_tag_groups(text)
    groups = [TagGroup(g.start, g.end, tuple(t.label for t in g.tags)) for g in core_groups]
    if not core_groups:
        return groups, []
    out = []
    for c in citations.parse_citations(text, groups=core_groups):
        if not c.tags:
            continue
        tags = tuple(t.label for t in c.tags)
        quotes = tuple(QuotedCitation(q.text, q.start, q.end, tags) for q in c.quotes)
        out.append(Claim(c.text, c.start, c.end, tags, quotes))
    return groups, out


def find_quoted_citations(text: str) -> list[QuotedCitation]:
    """Every quoted span (quote marks excluded) inside a claim that carries tags, with those tags.

    Quotes in untagged claims are not citations; tags whose claim has no quote are *unquoted*
    citations: GS and CD only count quoted ones.
    """
    return [q for c in find_claims(text) for q in c.quotes]


def quote_score(quote: str, source: str) -> float:
    """Best fuzzy alignment of ``quote`` inside ``source`` in [0, 1] (``core.quotes.quote_score``)."""
    return float(_core("quotes").quote_score(quote, source))
