"""Frozen copy of ``groundtrace.core.evidence.citations`` before its O(n log n) rewrite (verbatim but for
names).

Kept in one place for two users: ``benchmarks/bench_citations.py`` times it against the current parser,
and ``tests/core/test_citations.py`` checks on hypothesis-generated texts that both give identical output.
Not part of the package; never import it from ``src``.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache

from groundtrace.core.evidence.citations import (
    INNER_ABBREVIATIONS,
    MAX_SINGLE_QUOTE,
    NUMBER_ABBREVIATIONS,
    TITLE_ABBREVIATIONS,
    CitedClaim,
    QuotedSpan,
    Tag,
)

_QUOTE_CLOSERS = {'"': '"”', "“": '”"', "„": "“”", "«": "»", "'": "'’", "‘": "’'"}
_SINGLE_OPENERS = "'‘"


@lru_cache(maxsize=16)
def _old_group_re(prefix: str) -> re.Pattern[str]:
    label = rf"{re.escape(prefix)}[0-9]{{1,6}}"
    sep = r"[^\S\n]*[,;][^\S\n]*"
    return re.compile(rf"\[[^\S\n]*{label}(?:{sep}{label})*[^\S\n]*\]")


@lru_cache(maxsize=16)
def _old_label_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}([0-9]{{1,6}})")


@lru_cache(maxsize=16)
def _old_strip_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"[^\S\n]*{_old_group_re(prefix).pattern}")


def _old_groups(text: str, prefix: str) -> list[tuple[int, int, list[Tag]]]:
    label_re = _old_label_re(prefix)
    out = []
    for group in _old_group_re(prefix).finditer(text):
        tags = [
            Tag(m.group(0), int(m.group(1)), m.start(), m.end())
            for m in label_re.finditer(text, group.start(), group.end())
        ]
        out.append((group.start(), group.end(), tags))
    return out


def _old_find_tags(text: str, prefix: str = "R") -> list[Tag]:
    return [tag for _, _, tags in _old_groups(text, prefix) for tag in tags]


def _old_strip_tags(text: str, prefix: str = "R") -> str:
    return _old_strip_re(prefix).sub("", text)


_OLD_OPENER_RE = re.compile("[" + re.escape("".join(_QUOTE_CLOSERS)) + "]")
_OLD_CLOSER_RE = re.compile("[" + re.escape("".join(set("".join(_QUOTE_CLOSERS.values())))) + "]")


def _old_valid_closers(text: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for m in _OLD_CLOSER_RE.finditer(text):
        k = m.start()
        if k > 0 and not text[k - 1].isspace() and not (k + 1 < len(text) and text[k + 1].isalnum()):
            out.setdefault(m.group(), []).append(k)
    return out


def _old_find_quotes(text: str) -> list[QuotedSpan]:
    closers_at = _old_valid_closers(text)
    newlines = [m.start() for m in re.finditer("\n", text)]
    spans: list[QuotedSpan] = []
    resume = 0
    for m in _OLD_OPENER_RE.finditer(text):
        i, ch = m.start(), m.group()
        if i < resume or i + 1 >= len(text) or text[i + 1].isspace() or (i > 0 and text[i - 1].isalnum()):
            continue
        after = bisect_right(newlines, i)
        line_end = newlines[after] if after < len(newlines) else len(text)
        limit = min(line_end, i + 2 + MAX_SINGLE_QUOTE) if ch in _SINGLE_OPENERS else line_end
        candidates = [
            positions[j]
            for closer in _QUOTE_CLOSERS[ch]
            if (positions := closers_at.get(closer)) and (j := bisect_left(positions, i + 2)) < len(positions)
        ]
        k = min(candidates, default=len(text))
        if k < limit:
            spans.append(QuotedSpan(text[i + 1 : k], i + 1, k))
            resume = k + 1
    return spans


_OLD_END_RE = re.compile(r"[.!?…]+[\"'”“’»)\]]*(?:[^\S\n]*\[[^\[\]\n]{1,200}\])*")
_OLD_WORD_BEFORE_RE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")


def _old_is_abbreviation(line: str, dot: int, after: str) -> bool:
    m = _OLD_WORD_BEFORE_RE.search(line, max(0, dot - 40), dot)
    if not m:
        return False
    word = m.group(1)
    lower = word.lower()
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. K. Rowling"
    if lower in TITLE_ABBREVIATIONS or lower in INNER_ABBREVIATIONS:
        return True
    return lower in NUMBER_ABBREVIATIONS and after[:1].isdigit()


def _old_line_sentences(line: str, offset: int) -> list[tuple[int, int]]:
    quotes = _old_find_quotes(line)
    quote_starts = [q.start for q in quotes]
    spans = []
    start = 0
    for m in _OLD_END_RE.finditer(line):
        end = m.end()
        rest = line[end:]
        if rest and not rest[0].isspace():
            continue
        after = rest.lstrip()
        if after and after[0].islower():
            continue
        before = line[start : m.start()].strip()
        if not _old_has_words(before) or before.isdigit():  # "!!!" or a list number "1."
            continue
        inside = bisect_left(quote_starts, end) - 1  # the last quote opening before `end`
        if inside >= 0 and end <= quotes[inside].end:
            continue
        if (
            m.group(0).startswith(".")
            and not m.group(0).startswith("..")
            and _old_is_abbreviation(line, m.start(), after)
        ):
            continue
        spans.append((start, end))
        start = end
    spans.append((start, len(line)))
    out = []
    for a, b in spans:
        piece = line[a:b]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            out.append((offset + a + lead, offset + a + lead + len(stripped)))
    return out


def _old_split_sentences(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        out.extend(_old_line_sentences(line, offset))
        offset += len(line) + 1
    return out


_OLD_LEAD_RE = re.compile(r"(?:[\s,;:]|[-*•](?=\s)|[0-9]{1,3}[.)](?=\s))*")


def _old_has_words(fragment: str) -> bool:
    return any(ch.isalnum() for ch in fragment)


def _old_claim(
    text: str, a: int, b: int, quotes: list[QuotedSpan], tags: list[Tag], prefix: str
) -> CitedClaim:
    a += _OLD_LEAD_RE.match(text, a, b).end() - a  # type: ignore[union-attr]
    while b > a and text[b - 1].isspace():
        b -= 1
    inner = [q for q in quotes if a <= q.start < b]
    return CitedClaim(_old_strip_tags(text[a:b], prefix).strip(), a, b, inner, tags)


def _old_parse_citations(text: str, prefix: str = "R") -> list[CitedClaim]:
    groups = _old_groups(text, prefix)
    quotes = _old_find_quotes(text)
    quote_starts = [q.start for q in quotes]
    claims: list[CitedClaim] = []
    g = 0
    for s0, s1 in _old_split_sentences(text):
        while g < len(groups) and groups[g][0] < s0:  # cannot happen with our splitter; kept safe
            g += 1
        segments: list[list] = []  # [start, end, tags]
        pending: list[Tag] = []
        cursor = s0
        while g < len(groups) and groups[g][1] <= s1:
            g0, g1, tags = groups[g]
            g += 1
            if not _old_has_words(text[cursor:g0]):
                if segments:
                    segments[-1][1] = g1
                    segments[-1][2].extend(tags)
                else:
                    pending.extend(tags)
            else:
                segments.append([cursor, g1, pending + tags])
                pending = []
            cursor = g1
        trailing_quote = bisect_left(quote_starts, cursor) < bisect_left(quote_starts, s1)
        if segments and not trailing_quote:
            segments[-1][1] = s1
        elif _old_has_words(text[cursor:s1]) or trailing_quote or pending:
            segments.append([cursor if segments else s0, s1, pending])
        for a, b, tags in segments:
            claims.append(
                _old_claim(
                    text,
                    a,
                    b,
                    quotes[bisect_left(quote_starts, a) : bisect_left(quote_starts, b)],
                    tags,
                    prefix,
                )
            )
    return claims
