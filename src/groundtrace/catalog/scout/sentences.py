"""Text helpers shared by the engines and the judge: sentence and ``key: value`` line spans, flexible
phrase patterns, span masking/overlap, negation and placeholder detection.

Every span is a ``(start, end)`` pair of character offsets into the text it was computed on; masking keeps
offsets (blanked characters become spaces), so a span found in masked text is valid in the original.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache

_NEGATORS = re.compile(
    r"(?:\bnot|\bnon|\bno|\bnever|\bwithout|n't|\bisn't|\baren't|\bfree\s+of)\s*[-\s]?\s*$", re.IGNORECASE
)
_SENT_END = re.compile(r"(?<=[.!?])\s+|\n+")
#: Words that end in a period without ending a sentence ("Mt. Olive", "Mr. Coffee", "No. 7").
ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "mx", "dr", "st", "ste", "mt", "ft", "pt", "jr", "sr", "prof", "rev", "hon",
        "capt", "sgt", "gen", "no", "nos", "vol", "vs", "approx", "assn", "bros", "corp", "co", "dept",
        "est", "fig", "intl", "mfg", "mfr", "inc", "ltd",
    }
)  # fmt: skip
_LAST_TOKEN = re.compile(r"(\S+)\.$")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)*[A-Z]")
_KV_LINE = re.compile(
    r"^[ \t]*(?P<key>[A-Za-z][^:\n]{0,48}?)[ \t]*:[ \t]*(?P<val>[^\n]*\S)[ \t]*$", re.MULTILINE
)


#: Field fillers that state no value ("Color: -", "Model: N/A").
PLACEHOLDERS = frozenset(
    {
        "n a",
        "na",
        "none",
        "null",
        "nil",
        "unknown",
        "not applicable",
        "not available",
        "tbd",
        "tba",
        "various",
        "other",
        "see description",
        "see below",
        "undefined",
    }
)


def is_value_text(value: str, placeholders: bool = True) -> bool:
    """False for an empty or punctuation-only value ("-", "--", "/", "…"), and, when ``placeholders``, for
    a filler that states no value ("N/A", "none", "unknown")."""
    if not any(ch.isalnum() for ch in value):
        return False
    return not placeholders or norm_key(value) not in PLACEHOLDERS


def ends_with_abbreviation(text: str) -> bool:
    """True when ``text`` ends in a period that closes an abbreviation rather than a sentence: a known
    abbreviation (:data:`ABBREVIATIONS`, case-insensitive: "Mt.", "Dr.", "No.", "Assn.") or initials
    ("U.S.", "J.")."""
    m = _LAST_TOKEN.search(text)
    if not m:
        return False
    token = m.group(1).lstrip("(\"'“‘")
    return token.lower() in ABBREVIATIONS or bool(_INITIALS.fullmatch(token))


def strip_end_period(value: str) -> str:
    """``value`` without a sentence-final period; an abbreviation's period stays ("U.S. Polo Assn.")."""
    value = value.rstrip()
    while value.endswith(".") and not ends_with_abbreviation(value):
        value = value[:-1].rstrip()
    return value


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (:func:`sentence_spans`), its final period stripped
    (:func:`strip_end_period`); "" for blank text."""
    spans = sentence_spans(text)
    return strip_end_period(text[spans[0][0] : spans[0][1]]) if spans else ""


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence/line of ``text``: split at newlines and at . ! ? followed by
    space, except after an abbreviation or initials (:func:`ends_with_abbreviation`), so "Brand: Mt.
    Olive" is one sentence.

    Cached per distinct text (the extractor, the injection detector and both judges split the same
    Documents many times); callers get their own list."""
    return list(_sentence_spans(text))


@functools.lru_cache(maxsize=512)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENT_END.finditer(text):
        if "\n" not in m.group(0) and ends_with_abbreviation(text[max(pos, m.start() - 24) : m.start()]):
            continue  # "Mt. Olive", "U.S. Polo": the period closes an abbreviation
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return tuple(out)


def mask_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every span replaced by spaces (offsets preserved)."""
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def overlaps(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in spans)


#: The non-ASCII characters that ``re.IGNORECASE`` matches with an ASCII letter (Python's simple case
#: folding and its special cases: dotted/dotless i, long s, Kelvin sign), each mapped to that letter
#: lowered (``tests/catalog/scout/test_sentences.py`` checks the table against ``re`` over all of Unicode).
_ASCII_CASE_TWINS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def ascii_fold(text: str) -> str:
    """``text`` lowered, with :data:`_ASCII_CASE_TWINS` mapped first: same length and offsets as ``text``
    (U+0130 is the one character whose ``lower()`` is longer, and it is mapped before). Contract: for an
    ASCII literal ``lit``, ``re.search(re.escape(lit), text, re.IGNORECASE)`` implies
    ``lit.lower() in ascii_fold(text)`` — the exact prefilter of :func:`phrase_literal`."""
    if not text.isascii():
        text = text.translate(_ASCII_CASE_TWINS)
    return text.lower()


@lru_cache(maxsize=8192)
def phrase_literal(phrase: str) -> str | None:
    """The longest part of ``phrase`` (split as :func:`phrase_pattern` splits it) when it is ASCII, lowered:
    every match of :func:`phrase_re` contains it case-insensitively, so ``phrase_literal(p) not in
    ascii_fold(text)`` proves that ``phrase_re(p)`` finds nothing in ``text`` (a cheap exact prefilter).
    None when that part is not ASCII (no prefilter)."""
    parts = [p for p in re.split(r"[\s_\-]+", phrase.strip()) if p]
    if not parts:
        return None
    longest = max(parts, key=len)
    return longest.lower() if longest.isascii() else None


def may_match(phrase: str, folded: str) -> bool:
    """False only when ``phrase_re(phrase)`` cannot match the text whose :func:`ascii_fold` is ``folded``."""
    literal = phrase_literal(phrase)
    return literal is None or literal in folded


@lru_cache(maxsize=8192)
def phrase_re(phrase: str) -> re.Pattern[str]:
    """Compiled, case-insensitive :func:`phrase_pattern` (cached: lexicons are matched per document)."""
    return re.compile(phrase_pattern(phrase), re.IGNORECASE)


def phrase_pattern(phrase: str) -> str:
    """Regex for ``phrase`` with flexible separators (space/hyphen/underscore) and word boundaries."""
    parts = [re.escape(p) for p in re.split(r"[\s_\-]+", phrase.strip()) if p]
    body = r"[\s\-_]*".join(parts)
    left = r"(?<![\w])" if phrase[:1].isalnum() else ""
    right = r"(?![\w])" if phrase[-1:].isalnum() else ""
    return f"{left}{body}{right}"


_NON_KEY = re.compile(r"[^a-z0-9]+")


def norm_key(text: str) -> str:
    """``text`` lowered, every run of characters other than ``a-z0-9`` one space, stripped."""
    return _NON_KEY.sub(" ", text.lower()).strip()


_CLAUSE_BREAK = re.compile(r"[,;:.!?()\n]")


def negated(text: str, start: int) -> bool:
    """Does a negator (:data:`_NEGATORS`) end the clause before ``start`` (within 20 characters)?"""
    window = text[max(0, start - 20) : start]
    window = _CLAUSE_BREAK.split(window)[-1]
    return bool(_NEGATORS.search(window))


def kv_lines(text: str) -> Iterator[tuple[str, str, int, int, int]]:
    """``(key, value, line_start, line_end, value_start)`` for every ``key: value`` line."""
    for m in _KV_LINE.finditer(text):
        yield m.group("key").strip(), m.group("val").strip(), m.start("key"), m.end("val"), m.start("val")


@lru_cache(maxsize=8192)
def whole_phrase_re(phrase: str) -> re.Pattern[str]:
    """:func:`phrase_pattern` matching a whole item (surrounding blanks and a plural ``s`` allowed)."""
    return re.compile(rf"\s*{phrase_pattern(phrase)}\s*s?", re.IGNORECASE)
