"""What a turn text cites: its ``[Rn]`` tags and the quoted snippets its tagged claims attach to them.

Both read the text with :func:`groundtrace.core.evidence.citations.parse_citations` /
:func:`~groundtrace.core.evidence.citations.find_tags` — the parser the metrics use — so the builder's QC,
the validator, the release writer and the LLM realiser agree on what a citation is. In
``"a" [R1], and "b" [R2]`` R1 cites "a" and R2 cites "b"; untagged quotes are not citations.
"""

from __future__ import annotations

from groundtrace.core.evidence.citations import find_tags, parse_citations


def text_tags(text: str) -> list[str]:
    """Distinct ``Rn`` tags written in ``text`` (``[Rn]``, ``[Rn, Rm]``...), in order of first use."""
    return list(dict.fromkeys(tag.label for tag in find_tags(text)))


def quoted_snippets(text: str) -> list[tuple[str, list[str], int, int]]:
    """``(snippet, tags, start, end)`` for every quoted snippet of a claim that carries ``[Rn]`` tags;
    ``text[start:end]`` is the snippet and ``tags`` the claim's distinct tags in order."""
    out: list[tuple[str, list[str], int, int]] = []
    for claim in parse_citations(text):
        labels = list(dict.fromkeys(tag.label for tag in claim.tags))
        if labels:
            out.extend((quote.text, labels, quote.start, quote.end) for quote in claim.quotes)
    return out
