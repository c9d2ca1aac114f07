"""Citation parsing: ``[Rn]`` tags, the quoted text they attach to, and the claims they support.

Contract (all offsets are character offsets into the text given):

* **Tags.** A tag group is ``[`` + labels separated by ``,`` or ``;`` + ``]`` with optional spaces
  (``[R3]``, ``[R1, R3]``, ``[R1,R3]``, ``[ R2 ]``; ``[R1][R3]`` is two groups). A label is the prefix
  (case-sensitive, default ``R``) and 1–6 ASCII digits; each label gets its own :class:`Tag` span
  (:func:`find_tags`), each group its bracket-to-bracket :class:`TagGroup` (:func:`find_tag_groups`).
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
from bisect import bisect_left
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


class TagGroup(NamedTuple):
    """One bracketed tag group: ``text[start:end] == "[R1, R3]"``; ``tags`` are its labels in order."""

    start: int
    end: int
    tags: list[Tag]


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


def find_tag_groups(text: str, prefix: str = "R") -> list[TagGroup]:
    """Every tag group of ``text`` in order, bracket to bracket (``[R1][R3]`` is two groups).

    ``[t for g in find_tag_groups(text) for t in g.tags] == find_tags(text)``.
    """
    if "[" not in text:
        return []
    label_re = _label_re(prefix)
    out = []
    for group in _group_re(prefix).finditer(text):
        a, b = group.span()
        tags = [Tag(m.group(0), int(m.group(1)), m.start(), m.end()) for m in label_re.finditer(text, a, b)]
        out.append(TagGroup(a, b, tags))
    return out


def find_tags(text: str, prefix: str = "R") -> list[Tag]:
    """Every citation label of every tag group in ``text``, in order."""
    return [tag for group in find_tag_groups(text, prefix) for tag in group.tags]


def strip_tags(text: str, prefix: str = "R") -> str:
    """``text`` without its tag groups and the spaces before them (``great [R1].`` → ``great.``)."""
    return _strip_re(prefix).sub("", text) if "[" in text else text


_OPENERS = re.escape("".join(_QUOTE_CLOSERS))
_CLOSERS = re.escape("".join(sorted(set("".join(_QUOTE_CLOSERS.values())))))
# [^\W_] is exactly str.isalnum() and \s exactly str.isspace() (tests check every code point). The mark's
# class comes first so that the regex engine skips ahead to candidate marks. An opener is not after a
# letter/digit and is before a non-space; a closer is after a non-space and not before a letter/digit.
_OPENER_RE = re.compile(rf"[{_OPENERS}](?<![^\W_][{_OPENERS}])(?=\S)")
_CLOSER_RE = re.compile(rf"[{_CLOSERS}](?<=\S[{_CLOSERS}])(?![^\W_])")


def _valid_closers(text: str) -> dict[str, list[int]]:
    """Sorted positions of each closing mark that may close a quote."""
    out: dict[str, list[int]] = {}
    for m in _CLOSER_RE.finditer(text):
        out.setdefault(m.group(), []).append(m.start())
    return out


def find_quotes(text: str) -> list[QuotedSpan]:
    """Quoted spans of ``text`` in order, outermost only (rules in the module docstring).

    Linear-logarithmic: closing candidates are indexed once, each opener looks its closer up by bisection.
    """
    closers_at = _valid_closers(text)
    if not closers_at:
        return []
    n = len(text)
    spans: list[QuotedSpan] = []
    resume, line_end = 0, -1
    for m in _OPENER_RE.finditer(text):
        i, ch = m.start(), m.group()
        if i < resume:
            continue
        if i > line_end:  # openers come in order: find each line's end once
            line_end = text.find("\n", i)
            if line_end < 0:
                line_end = n
        limit = min(line_end, i + 2 + MAX_SINGLE_QUOTE) if ch in _SINGLE_OPENERS else line_end
        k = n
        for closer in _QUOTE_CLOSERS[ch]:
            positions = closers_at.get(closer)
            if positions:
                j = bisect_left(positions, i + 2)
                if j < len(positions) and positions[j] < k:
                    k = positions[j]
        if k < limit:
            spans.append(QuotedSpan(text[i + 1 : k], i + 1, k))
            resume = k + 1
    return spans


_END_RE = re.compile(r"[.!?…]+[\"'”“’»)\]]*(?:[^\S\n]*\[[^\[\]\n]{1,200}\])*")
_ALNUM_RE = re.compile(r"[^\W_]")  # exactly the characters for which str.isalnum() is true
_NONSPACE_RE = re.compile(r"\S")  # \s is exactly str.isspace()
_SPACES_RE = re.compile(r"\s*")
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_WORD_WINDOW = 40  # an abbreviation is looked for in the 40 characters before its period


def _word_before(text: str, lo: int, dot: int) -> str:
    r"""The longest ``[A-Za-z]+(?:\.[A-Za-z]+)*`` ending right before ``dot`` and starting at or after
    ``lo`` ("" if none): a backward walk of the word's length, not a scan of the window."""
    j = dot
    while j > lo:
        ch = text[j - 1]
        if ch in _ASCII_LETTERS or (ch == "." and j < dot and j - 2 >= lo and text[j - 2] in _ASCII_LETTERS):
            j -= 1
        else:
            break
    return text[j:dot]


def _is_abbreviation(text: str, lo: int, dot: int, next_char: str) -> bool:
    """True when the single period at ``text[dot]`` belongs to an abbreviation, not a sentence end.

    ``lo`` is the start of its line; ``next_char`` the first non-space character after the end mark.
    """
    if dot == lo or text[dot - 1] not in _ASCII_LETTERS:
        return False  # no word right before the period
    word = _word_before(text, max(lo, dot - _WORD_WINDOW), dot)
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. K. Rowling"
    lower = word.lower()
    if lower in TITLE_ABBREVIATIONS or lower in INNER_ABBREVIATIONS:
        return True
    return lower in NUMBER_ABBREVIATIONS and next_char.isdigit()


def _line_sentences(
    text: str, lo: int, hi: int, quotes: list[QuotedSpan], quote_starts: list[int], out: list[tuple[int, int]]
) -> None:
    """Append the sentences of the line ``text[lo:hi]`` (no newline inside) to ``out``.

    Per candidate end mark only its neighbourhood is read: what the sentence so far looks like (its
    first letter or digit, whether it is a bare number) is worked out once per sentence start.
    """
    ends = []
    start = lo
    word = number_end = -1  # first letter/digit at or after `start` (hi: none); where a bare number may end
    for m in _END_RE.finditer(text, lo, hi):
        end = m.end()
        if end < hi and not text[end].isspace():
            continue
        nxt = end
        while nxt < hi and text[nxt].isspace():
            nxt += 1
        next_char = text[nxt] if nxt < hi else ""
        if next_char.islower():
            continue
        mark = m.start()
        if word < start:
            found = _ALNUM_RE.search(text, start, hi)
            word = found.start() if found else hi
            # a bare number starts with a digit, which is its first letter/digit too
            number_end = _number_end(text, start, hi) if word < hi and text[word].isdigit() else -1
        if word >= mark or number_end >= mark:
            continue  # "!!!" or a list number "1." (text[start:mark].strip().isdigit())
        inside = bisect_left(quote_starts, end) - 1  # the last quote opening before `end`
        if inside >= 0 and end <= quotes[inside].end:
            continue
        if (
            text[mark] == "."
            and text[mark + 1 : mark + 2] != "."
            and _is_abbreviation(text, lo, mark, next_char)
        ):
            continue
        ends.append(end)
        start = end
    ends.append(hi)
    a = lo
    for b in ends:
        first = _NONSPACE_RE.search(text, a, b)
        if first is not None:
            last = b
            while text[last - 1].isspace():
                last -= 1
            out.append((first.start(), last))
        a = b


def _number_end(text: str, start: int, hi: int) -> int:
    """``p`` such that, for ``start < mark <= hi`` where ``text[mark]`` is not a digit,
    ``text[start:mark].strip().isdigit()`` iff ``mark <= p``; -1 when no such stretch is a number.

    The stretch is a number iff it is spaces, one run of ``isdigit`` characters, spaces: ``p`` is the
    first non-space after that run (``hi`` if none).
    """
    first = _NONSPACE_RE.search(text, start, hi)
    if first is None:
        return -1
    k = begin = first.start()
    while k < hi and text[k].isdigit():
        k += 1
    if k == begin:
        return -1
    after = _NONSPACE_RE.search(text, k, hi)
    return after.start() if after else hi


def _sentences(text: str, quotes: list[QuotedSpan], quote_starts: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    lo, n = 0, len(text)
    while lo <= n:
        hi = text.find("\n", lo)
        if hi < 0:
            hi = n
        _line_sentences(text, lo, hi, quotes, quote_starts, out)
        lo = hi + 1
    return out


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, stripped of surrounding whitespace (module docstring rules)."""
    quotes = find_quotes(text)
    return _sentences(text, quotes, [q.start for q in quotes])


_LEAD_RE = re.compile(r"(?:[\s,;:]|[-*•](?=\s)|[0-9]{1,3}[.)](?=\s))*")


def _has_words(text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` has a letter or digit."""
    return _ALNUM_RE.search(text, a, b) is not None


def _claim(
    text: str,
    a: int,
    b: int,
    quotes: list[QuotedSpan],
    quote_starts: list[int],
    tags: list[Tag],
    strip: re.Pattern[str],
) -> CitedClaim:
    a = _LEAD_RE.match(text, a, b).end()  # type: ignore[union-attr]
    while b > a and text[b - 1].isspace():
        b -= 1
    piece = text[a:b]
    if "[" in piece:
        piece = strip.sub("", piece)  # strip_tags
    return CitedClaim(
        piece.strip(), a, b, quotes[bisect_left(quote_starts, a) : bisect_left(quote_starts, b)], tags
    )


def parse_citations(text: str, prefix: str = "R", groups: list[TagGroup] | None = None) -> list[CitedClaim]:
    """Claims of ``text`` with their quotes and tags (rules in the module docstring).

    One pass each for tag groups, quotes and sentence ends (quotes are found once and shared with the
    sentence splitter); every step after that bisects or scans forward, so the cost is O(n log n).
    ``groups`` is ``find_tag_groups(text, prefix)`` when the caller has it already.
    """
    if groups is None:
        groups = find_tag_groups(text, prefix)
    quotes = find_quotes(text)
    quote_starts = [q.start for q in quotes]
    strip = _strip_re(prefix)
    claims: list[CitedClaim] = []
    g, n_groups = 0, len(groups)
    for s0, s1 in _sentences(text, quotes, quote_starts):
        while g < n_groups and groups[g][0] < s0:  # cannot happen with our splitter; kept safe
            g += 1
        segments: list[list] = []  # [start, end, tags]
        pending: list[Tag] = []
        cursor = s0
        while g < n_groups and groups[g][1] <= s1:
            g0, g1, tags = groups[g]
            g += 1
            if not _has_words(text, cursor, g0):
                if segments:
                    segments[-1][1] = g1
                    segments[-1][2].extend(tags)
                else:
                    pending.extend(tags)
            else:
                segments.append([cursor, g1, pending + tags])
                pending = []
            cursor = g1
        q_cursor, q_end = bisect_left(quote_starts, cursor), bisect_left(quote_starts, s1)
        trailing_quote = q_cursor < q_end
        if segments and not trailing_quote:
            segments[-1][1] = s1
        elif trailing_quote or pending or _has_words(text, cursor, s1):
            segments.append([cursor if segments else s0, s1, pending])
        for a, b, tags in segments:
            claims.append(_claim(text, a, b, quotes, quote_starts, tags, strip))
    return claims
