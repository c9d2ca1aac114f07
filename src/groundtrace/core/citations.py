"""Citation parsing: ``[Rn]`` tags, the quoted text they attach to, and the claims they support.

Contract (all offsets are character offsets into the text given):

* **Tags.** A tag group is ``[`` + labels separated by ``,`` or ``;`` + ``]`` with optional spaces
  (``[R3]``, ``[R1, R3]``, ``[R1,R3]``, ``[ R2 ]``; ``[R1][R3]`` is two groups). A label is the prefix
  (case-sensitive, default ``R``) and 1–6 ASCII digits; each label gets its own :class:`Tag` span.
* **Quotes** (:func:`find_quotes`). ``"..."``, ``“...”``, ``„...“``, ``«...»`` and single quotes
  ``'...'`` / ``‘...’`` on one line. An opening mark must not follow a letter or digit and must be
  followed by a non-space; a closing mark must follow a non-space and must not be followed by a letter
  or digit. This keeps apostrophes (``don't``, ``'90s decor``, ``chefs'``) out unless they form an
  unambiguous pair; single-quoted spans are at most 300 characters. Nested quotes stay inside the outer one.
* **Sentences** (:func:`split_sentences`). A sentence ends at a newline, or after ``.``/``!``/``?``/``…``
  plus any closing quotes/brackets plus any bracket groups that follow (``great." [R1]`` keeps its tag),
  when whitespace and then a character that is not a lowercase letter come next (or the text ends).
  Not an end: inside a quote, with no word before it in the sentence (``!!!``, a list number ``1.``),
  a decimal point (``4.5``), a single-letter initial (``J.``), a title
  (``Dr.``, ``St.``, ``Mr.`` ... — :data:`TITLE_ABBREVIATIONS`), ``e.g.``/``i.e.``/``vs.``/``approx.``
  (:data:`INNER_ABBREVIATIONS`), ``No.``/``p.`` before a digit.
* **Claims** (:func:`parse_citations`). Within a sentence, each tag group closes a claim that starts at
  the sentence start or at the end of the previous tag group; every quote inside that stretch is cited by
  the group's tags (so in ``"great" [R1], and "cheap" [R2]`` R1 cites "great" and R2 cites "cheap").
  Groups separated only by punctuation/space (``[R1][R3]``, ``[R1], [R3]``) join the same claim. Text
  after the last group of a sentence joins the last claim, unless it contains a quote: then it is its own
  claim with ``tags=[]``; a sentence without any tag is one claim with ``tags=[]``. Every tag found by
  :func:`find_tags` ends up in exactly one claim. ``CitedClaim.text`` is the claim with its tag groups
  removed (:func:`strip_tags`) and leading ``,;:``, spaces and list markers (``-``, ``*``, ``•``,
  ``1.``) dropped; ``start``/``end`` span the claim in
  the original text, tags included.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import NamedTuple

TITLE_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "mx",
        "dr",
        "prof",
        "st",
        "mt",
        "ft",
        "rev",
        "fr",
        "sr",
        "jr",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "hon",
        "pres",
        "gov",
        "sen",
        "rep",
        "mme",
        "mlle",
        "messrs",
    ]
)
"""Abbreviations that precede a name: a period after them never ends a sentence."""

INNER_ABBREVIATIONS = frozenset(["e.g", "i.e", "cf", "vs", "viz", "approx", "incl", "esp", "ca", "resp"])
"""Abbreviations that never end a sentence."""

NUMBER_ABBREVIATIONS = frozenset(["no", "nos", "vol", "pp", "p", "fig", "ch", "sec"])
"""Abbreviations that do not end a sentence when a digit follows (``No. 5``, ``p. 12``)."""

MAX_SINGLE_QUOTE = 300

_QUOTE_CLOSERS = {
    '"': '"”',
    "“": '”"',
    "„": "“”",
    "«": "»",
    "'": "'’",
    "‘": "’'",
}
_SINGLE_OPENERS = "'‘"


class Tag(NamedTuple):
    """One citation label: ``text[start:end] == label``; ``number`` is its integer part."""

    label: str
    number: int
    start: int
    end: int


class QuotedSpan(NamedTuple):
    """Quoted text without its marks: ``text[start:end]`` of the parsed string."""

    text: str
    start: int
    end: int


class CitedClaim(NamedTuple):
    """A claim (a sentence or the part of one a tag group closes) with the quotes it cites and its tags."""

    text: str
    start: int
    end: int
    quotes: list[QuotedSpan]
    tags: list[Tag]

    @property
    def numbers(self) -> list[int]:
        """Tag numbers in order of appearance (duplicates kept)."""
        return [t.number for t in self.tags]


@lru_cache(maxsize=16)
def _group_re(prefix: str) -> re.Pattern[str]:
    label = rf"{re.escape(prefix)}[0-9]{{1,6}}"
    sep = r"[^\S\n]*[,;][^\S\n]*"
    return re.compile(rf"\[[^\S\n]*{label}(?:{sep}{label})*[^\S\n]*\]")


@lru_cache(maxsize=16)
def _label_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}([0-9]{{1,6}})")


@lru_cache(maxsize=16)
def _strip_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"[^\S\n]*{_group_re(prefix).pattern}")


def _groups(text: str, prefix: str) -> list[tuple[int, int, list[Tag]]]:
    """``(start, end, tags)`` of every tag group."""
    label_re = _label_re(prefix)
    out = []
    for group in _group_re(prefix).finditer(text):
        tags = [
            Tag(m.group(0), int(m.group(1)), m.start(), m.end())
            for m in label_re.finditer(text, group.start(), group.end())
        ]
        out.append((group.start(), group.end(), tags))
    return out


def find_tags(text: str, prefix: str = "R") -> list[Tag]:
    """Every citation label of every tag group in ``text``, in order."""
    return [tag for _, _, tags in _groups(text, prefix) for tag in tags]


def strip_tags(text: str, prefix: str = "R") -> str:
    """``text`` without its tag groups and the spaces before them (``great [R1].`` → ``great.``)."""
    return _strip_re(prefix).sub("", text)


_OPENER_RE = re.compile("[" + re.escape("".join(_QUOTE_CLOSERS)) + "]")
_CLOSER_RE = re.compile("[" + re.escape("".join(set("".join(_QUOTE_CLOSERS.values())))) + "]")


def _valid_closers(text: str) -> dict[str, list[int]]:
    """Sorted positions of each closing mark that may close a quote (follows a non-space, is not
    followed by a letter or digit)."""
    out: dict[str, list[int]] = {}
    for m in _CLOSER_RE.finditer(text):
        k = m.start()
        if k > 0 and not text[k - 1].isspace() and not (k + 1 < len(text) and text[k + 1].isalnum()):
            out.setdefault(m.group(), []).append(k)
    return out


def find_quotes(text: str) -> list[QuotedSpan]:
    """Quoted spans of ``text`` in order, outermost only (rules in the module docstring).

    Linear-logarithmic: closing candidates are indexed once, each opener looks its closer up by bisection.
    """
    closers_at = _valid_closers(text)
    newlines = [m.start() for m in re.finditer("\n", text)]
    spans: list[QuotedSpan] = []
    resume = 0
    for m in _OPENER_RE.finditer(text):
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


_END_RE = re.compile(r"[.!?…]+[\"'”“’»)\]]*(?:[^\S\n]*\[[^\[\]\n]{1,200}\])*")
_WORD_BEFORE_RE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")


def _is_abbreviation(line: str, dot: int, after: str) -> bool:
    """True when the single period at ``line[dot]`` belongs to an abbreviation, not a sentence end."""
    m = _WORD_BEFORE_RE.search(line, max(0, dot - 40), dot)
    if not m:
        return False
    word = m.group(1)
    lower = word.lower()
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. K. Rowling"
    if lower in TITLE_ABBREVIATIONS or lower in INNER_ABBREVIATIONS:
        return True
    return lower in NUMBER_ABBREVIATIONS and after[:1].isdigit()


def _line_sentences(line: str, offset: int) -> list[tuple[int, int]]:
    quotes = find_quotes(line)
    quote_starts = [q.start for q in quotes]
    spans = []
    start = 0
    for m in _END_RE.finditer(line):
        end = m.end()
        rest = line[end:]
        if rest and not rest[0].isspace():
            continue
        after = rest.lstrip()
        if after and after[0].islower():
            continue
        before = line[start : m.start()].strip()
        if not _has_words(before) or before.isdigit():  # "!!!" or a list number "1."
            continue
        inside = bisect_left(quote_starts, end) - 1  # the last quote opening before `end`
        if inside >= 0 and end <= quotes[inside].end:
            continue
        if (
            m.group(0).startswith(".")
            and not m.group(0).startswith("..")
            and _is_abbreviation(line, m.start(), after)
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


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, stripped of surrounding whitespace (module docstring rules)."""
    out: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        out.extend(_line_sentences(line, offset))
        offset += len(line) + 1
    return out


_LEAD_RE = re.compile(r"(?:[\s,;:]|[-*•](?=\s)|[0-9]{1,3}[.)](?=\s))*")


def _has_words(fragment: str) -> bool:
    return any(ch.isalnum() for ch in fragment)


def _claim(text: str, a: int, b: int, quotes: list[QuotedSpan], tags: list[Tag], prefix: str) -> CitedClaim:
    a += _LEAD_RE.match(text, a, b).end() - a  # type: ignore[union-attr]
    while b > a and text[b - 1].isspace():
        b -= 1
    inner = [q for q in quotes if a <= q.start < b]
    return CitedClaim(strip_tags(text[a:b], prefix).strip(), a, b, inner, tags)


def parse_citations(text: str, prefix: str = "R") -> list[CitedClaim]:
    """Claims of ``text`` with their quotes and tags (rules in the module docstring)."""
    groups = _groups(text, prefix)
    quotes = find_quotes(text)
    quote_starts = [q.start for q in quotes]
    claims: list[CitedClaim] = []
    g = 0
    for s0, s1 in split_sentences(text):
        while g < len(groups) and groups[g][0] < s0:  # cannot happen with our splitter; kept safe
            g += 1
        segments: list[list] = []  # [start, end, tags]
        pending: list[Tag] = []
        cursor = s0
        while g < len(groups) and groups[g][1] <= s1:
            g0, g1, tags = groups[g]
            g += 1
            if not _has_words(text[cursor:g0]):
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
        elif _has_words(text[cursor:s1]) or trailing_quote or pending:
            segments.append([cursor if segments else s0, s1, pending])
        for a, b, tags in segments:
            claims.append(
                _claim(
                    text,
                    a,
                    b,
                    quotes[bisect_left(quote_starts, a) : bisect_left(quote_starts, b)],
                    tags,
                    prefix,
                )
            )
    return claims
