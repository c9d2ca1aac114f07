"""Quote verification: does a (near-)verbatim quote occur in its source, and where?

Normalisation (applied identically to quote and source, with a map back to original offsets):

1. the text is cut into clusters (a character plus the combining marks that follow it); each cluster
   becomes ``NFKC(casefold(NFKC(cluster)))``;
2. typographic quotes become ``'``/``"`` and dashes become ``-`` (:data:`UNIFY_TABLE`) — for matching
   this is subsumed by step 3, as every such mark is punctuation; the table serves callers that keep
   punctuation (value normalisation);
3. punctuation (Unicode category ``P*``) and invisible format/control characters are deleted, with any
   combining marks on them — so ``wi-fi`` becomes ``wifi`` and ``"great!"`` becomes ``great``; symbols
   (``$``, ``+``, ``°``) stay;
4. every whitespace run becomes one space; leading/trailing spaces are dropped.

Score. Let ``q`` be the normalised quote (``n = len(q)`` characters) and ``s`` the normalised source.

* ``n == 0`` (empty or punctuation-only quote) or empty ``s`` → ``0.0``.
* ``q`` is a substring of ``s`` → ``1.0`` (fast path, no fuzzy search).
* otherwise the best window ``w`` of ``s`` is found with ``rapidfuzz.fuzz.partial_ratio_alignment``
  (when ``n > len(s)`` the window is all of ``s``), each window edge is moved by up to 4 characters
  when that lowers ``e = Indel(q, w)`` (insertions + deletions; a substitution costs 2), then each edge
  that falls inside a word *snaps* to a word boundary — out to cover the word or in to drop it,
  whichever gives the smaller ``e`` (boundaries: spaces, the ends, and places where step 3 deleted
  characters between two kept ones, as in ``good.The``); the character score is
  ``c = max(0, 1 - e / D(n))`` with ``D(n) = min(2n, n² / 16)``;
* word check (verbatim, not paraphrase): a word of ``q`` or ``w`` is *covered* when fewer than half of
  its characters are left out of the LCS alignment of ``q`` with ``w``; with ``k`` the covered share of
  all words, ``score = c`` when ``k == 1`` else ``min(c, 0.80 · k)`` — below the grounded threshold.
  A typo leaves one or two characters of a word unaligned; a synonym, an added, dropped or moved word
  leaves (nearly) all of its characters unaligned, so ``"Great beer selection."`` is not a quote of
  ``"The beer selection is very good"`` (0.64; 0.84 before the check);
* truncation: when snapping moved an edge, the unsnapped window is scored too, its cut edge words
  (fragments of source words) left out of the word check, and the better score is kept (the span is
  the snapped one) — a quote may start or end inside a word, but every word of it is checked.

For quotes of 32+ normalised characters ``D(n) = 2n`` and ``c`` is the usual partial-ratio similarity
(``1 - e / (n + len(w))`` for a window as long as the quote). Shorter quotes get a smaller error scale,
so the edits tolerated at :data:`GROUNDED_THRESHOLD` (``e <= 0.2·D(n) = min(0.4n, n²/80)``) shrink
with length: a quote of at most 8 normalised characters must match exactly, 9–12 characters tolerate one
inserted or deleted character, 13–15 characters one substitution, 20 characters 5 indels, and from 32
characters on 40% of ``n`` (the plain 0.80 partial-ratio rule).

Batches: :func:`quote_scores` scores many pairs, normalising each source once, and with
``score_cutoff`` skips the alignment of pairs whose plain partial ratio proves they cannot reach it
(:func:`_prefilter_cutoff`).

Quotes are never turned into regular expressions, so metacharacters in them are plain text.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.fuzz import partial_ratio_alignment

GROUNDED_THRESHOLD = 0.80
FULL_TOLERANCE_LENGTH = 32
"""Normalised quote length from which the error scale is the plain partial-ratio one (``D(n) = 2n``)."""

OPENING_DOUBLE_QUOTES = "“„‟«"
CLOSING_DOUBLE_QUOTES = "”»"
OPENING_SINGLE_QUOTES = "‘‚‛‹"
CLOSING_SINGLE_QUOTES = "’›"
PRIME_MARKS = "′″"
DASHES = "‐‑‒–—―−⁃"

UNIFY_TABLE = str.maketrans(
    {
        **{c: '"' for c in OPENING_DOUBLE_QUOTES + CLOSING_DOUBLE_QUOTES + PRIME_MARKS[1]},
        **{c: "'" for c in OPENING_SINGLE_QUOTES + CLOSING_SINGLE_QUOTES + PRIME_MARKS[0]},
        **{c: "-" for c in DASHES},
    }
)
"""Typographic quotes, primes and dashes → ASCII ``'`` ``"`` ``-``."""


class QuoteMatch(NamedTuple):
    """Result of :func:`locate_quote`: ``source[start:end]`` is the matched span of the original source."""

    score: float
    start: int
    end: int


NO_MATCH = QuoteMatch(0.0, 0, 0)


class NormalizedText(NamedTuple):
    """Normalised ``text`` plus, for each of its characters, the original span ``[starts[i], ends[i])``
    of the cluster it came from."""

    text: str
    starts: list[int]
    ends: list[int]


_KEEP, _SPACE, _DROP = 0, 1, 2


def _combining_class_pattern() -> str:
    """A regex character class body of every code point with a non-zero combining class (all lie
    below U+30000), as ranges."""
    marks = [c for c in range(0x30000) if unicodedata.combining(chr(c))]
    ranges: list[tuple[int, int]] = []
    for c in marks:
        if ranges and c == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], c)
        else:
            ranges.append((c, c))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges
    )


_CANDIDATE_RE = re.compile(rf"(?:[^\w\s]|_)[{_combining_class_pattern()}]*")
"""Characters that may be dropped (neither word characters nor whitespace, plus ``_``), each with the
combining marks that follow it; the first character is classified by :func:`_char_class` and a dropped
one takes its marks along (otherwise deleting ``:`` from ``◌᳢:◌𐍶``-like text could bring two marks
together out of canonical order, and normalising would not be idempotent). Regex scanning plus a
per-character cache beats ``str.translate`` with a large table on non-ASCII text by an order of magnitude."""


@lru_cache(maxsize=8192)
def _char_class(ch: str) -> int:
    """Step 3: drop punctuation (``P*``), format (``Cf``) and non-space control (``Cc``) characters."""
    if ch.isspace():
        return _SPACE
    category = unicodedata.category(ch)
    return _DROP if category[0] == "P" or category in ("Cc", "Cf") else _KEEP


def _delete_dropped(m: re.Match[str]) -> str:
    run = m.group()
    return "" if _char_class(run[0]) == _DROP else run


def _mark_dropped(m: re.Match[str]) -> str:
    run = m.group()
    return "\x00" * len(run) if _char_class(run[0]) == _DROP else run


_ASCII_DROPPED = "".join(chr(c) for c in range(128) if not chr(c).isspace() and _char_class(chr(c)) == _DROP)
"""The ASCII characters step 3 deletes: ``!"#%&'()*,-./:;?@[\\]_{}`` and the non-space controls."""
_ASCII_DELETE = str.maketrans("", "", _ASCII_DROPPED)
_ASCII_MARK = str.maketrans(dict.fromkeys(_ASCII_DROPPED, "\x00"))

_WHITESPACE_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
"""Every code point ``str.isspace`` accepts, sorted (none lies above U+3000)."""


def _clusters(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each base character together with its following combining marks."""
    spans: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or not unicodedata.combining(text[i]):
            spans.append((start, i))
            start = i
    return spans if text else []


def _fold(text: str) -> tuple[str, list[int] | None, list[int] | None]:
    """Step 1 (NFKC, casefold, NFKC again: casefold can leave marks out of canonical order, as in
    ``İ`` → ``i`` + U+0307) with the origin span of every output character; the origin lists are
    ``None`` when folding maps characters one to one (ASCII and most real text)."""
    if text.isascii():
        return text.lower(), None, None
    if unicodedata.is_normalized("NFKC", text):
        folded = text.casefold()
        # casefold never deletes, so equal length means one to one
        if len(folded) == len(text) and unicodedata.is_normalized("NFKC", folded):
            return folded, None, None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for a, b in _clusters(text):
        piece = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text[a:b]).casefold())
        pieces.append(piece)
        starts.extend([a] * len(piece))
        ends.extend([b] * len(piece))
    return "".join(pieces), starts, ends


@lru_cache(maxsize=256)
def _kept_positions(marked: str) -> tuple[np.ndarray, np.ndarray]:
    """Steps 3–4 as array operations on ``marked`` (dropped characters already NUL). Returns the
    positions that survive — characters that are neither NUL nor whitespace, plus the first whitespace
    of each run lying between two of them — and the code points there, whitespace as U+0020."""
    codes = np.frombuffer(marked.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    present = np.flatnonzero(codes)  # NUL = dropped
    kept_codes = codes[present]
    nearest = np.minimum(np.searchsorted(_WHITESPACE_CODES, kept_codes), len(_WHITESPACE_CODES) - 1)
    space = _WHITESPACE_CODES[nearest] == kept_codes
    solid = ~space
    keep = solid.copy()
    if solid.any():
        order = np.arange(len(solid))
        first, last = np.argmax(solid), len(solid) - 1 - np.argmax(solid[::-1])
        run_start = space & np.concatenate(([False], solid[:-1]))
        keep |= run_start & (order > first) & (order < last)
    positions = present[keep]
    out = codes[positions].copy()
    out[space[keep]] = 0x20
    return positions, out


@lru_cache(maxsize=256)
def normalize_with_map(text: str) -> NormalizedText:
    """Normalise ``text`` (module docstring, steps 1–4) keeping the origin of every output character.

    Cached for the last 256 texts (a source is typically scored against several quotes in a row);
    treat the result as read-only.
    """
    folded, origin_starts, origin_ends = _fold(text)
    if folded.isascii():  # same result as the regex, an order of magnitude faster
        marked = folded.translate(_ASCII_MARK)
    else:
        marked = _CANDIDATE_RE.sub(_mark_dropped, folded)
    positions, codes = _kept_positions(marked)
    normalized = codes.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass")
    if origin_starts is None or origin_ends is None:
        return NormalizedText(normalized, positions.tolist(), (positions + 1).tolist())
    return NormalizedText(
        normalized,
        np.asarray(origin_starts)[positions].tolist(),
        np.asarray(origin_ends)[positions].tolist(),
    )


def normalize_text_cached(text: str) -> str:
    """:func:`normalize_text` of a source, cached for the last 256 sources."""
    return _normalize_text_cached(text)


def normalize_text(text: str) -> str:
    """The normalised form of ``text`` used for matching; equals ``normalize_with_map(text).text``
    but skips the offset map."""
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_DELETE).split())
    return " ".join(_CANDIDATE_RE.sub(_delete_dropped, _fold(text)[0]).split())


_normalize_text_cached = lru_cache(maxsize=256)(normalize_text)


_ASCII_DROPPED_RE = re.compile(f"[{re.escape(_ASCII_DROPPED)}]+")
"""A run of deleted ASCII characters; *interior* when non-space characters stand on both sides
(``don't``, ``good.The``)."""


def _ascii_gaps(text: str) -> frozenset[int]:
    """:func:`_gaps` of an ASCII ``text`` without the offset map. Interior deleted runs have kept
    non-space characters on both sides, so the pieces between them normalise independently (no space
    is lost or added at a joint): the gap after a run is at the summed normalised length before it."""
    gaps: list[int] = []
    n = prev = 0
    size = len(text)
    for m in _ASCII_DROPPED_RE.finditer(text):
        start, end = m.span()
        if not start or end == size or text[start - 1].isspace() or text[end].isspace():
            continue
        n += len(normalize_text(text[prev:start]))
        gaps.append(n)
        prev = m.end()
    return frozenset(gaps)


@lru_cache(maxsize=256)
def _gaps_cached(source: str) -> frozenset[int]:
    if source.isascii():
        return _ascii_gaps(source)
    return _gaps(normalize_with_map(source))


def _error_scale(n: int) -> float:
    """``D(n) = min(2n, n²/16)``: the edit count at which the score reaches 0."""
    return 2.0 * n * min(1.0, n / FULL_TOLERANCE_LENGTH)


_REFINE_SHIFT = 4


def _refine_window(q: str, s: str, a: int, b: int, edits: int) -> tuple[int, int, int]:
    """Move each window edge by up to :data:`_REFINE_SHIFT` characters when that lowers the Indel
    distance (partial_ratio windows are exactly ``len(q)`` long, so an inserted or deleted character
    in the quote leaves the window one character short or long)."""
    for side in (0, 1):
        best = (edits, a, b)
        for shift in range(-_REFINE_SHIFT, _REFINE_SHIFT + 1):
            na, nb = (a + shift, b) if side == 0 else (a, b + shift)
            if 0 <= na < nb <= len(s) and shift:
                d = Indel.distance(q, s[na:nb], score_cutoff=best[0])
                if d < best[0]:
                    best = (d, na, nb)
        edits, a, b = best
    return a, b, edits


def _is_boundary(s: str, i: int, gaps: frozenset[int]) -> bool:
    """Is position ``i`` of the normalised text ``s`` a word boundary: an end of ``s``, next to a space,
    or where step 3 deleted something between two kept characters (``good.The`` → ``goodthe``)."""
    return i <= 0 or i >= len(s) or s[i - 1] == " " or s[i] == " " or i in gaps


def _gaps(norm: NormalizedText) -> frozenset[int]:
    """Positions ``i`` of ``norm.text`` between two non-space characters with deleted original
    characters between ``i - 1`` and ``i``."""
    text, starts, ends = norm.text, norm.starts, norm.ends
    return frozenset(
        i for i in range(1, len(starts)) if starts[i] > ends[i - 1] and text[i] != " " and text[i - 1] != " "
    )


def _edge_candidates(s: str, i: int, gaps: frozenset[int], step: int) -> list[int]:
    """``i`` itself when it is a boundary, else the nearest boundaries outwards and inwards (``step`` is
    the outward direction: -1 for a window start, +1 for an end); an inward edge skips spaces."""
    if _is_boundary(s, i, gaps):
        return [i]
    out = i
    while not _is_boundary(s, out, gaps):
        out += step
    inward = i
    while not _is_boundary(s, inward, gaps):
        inward -= step
    if step < 0:
        while inward < len(s) and s[inward] == " ":
            inward += 1
    else:
        while inward > 0 and s[inward - 1] == " ":
            inward -= 1
    return [out, inward]


def _snap(q: str, s: str, a: int, b: int, gaps: Callable[[], frozenset[int]]) -> tuple[int, int]:
    """Move ``[a, b)`` onto word boundaries: each edge inside a word goes out to cover it or in to drop
    it, whichever gives the smaller Indel distance (ties: cover). ``gaps()`` is called only when an
    edge is not next to a space or an end of ``s``."""
    if (a == 0 or s[a - 1] == " ") and (b == len(s) or s[b] == " "):
        return a, b
    known = gaps()
    best: tuple[int, int, int] | None = None
    for na in _edge_candidates(s, a, known, -1):
        for nb in _edge_candidates(s, b, known, 1):
            if na < nb:
                d = Indel.distance(q, s[na:nb])
                if best is None or d < best[0]:
                    best = (d, na, nb)
    return (a, b) if best is None else (best[1], best[2])


def word_coverage(q: str, w: str, cut_first: bool = False, cut_last: bool = False) -> float:
    """Share of the words of ``q`` and of ``w`` (both normalised, split on spaces) that are *covered*:
    fewer than half of a word's characters are left out of the LCS alignment of ``q`` with ``w``
    (``rapidfuzz`` Indel editops). A typo leaves one or two characters of a word unaligned; a word
    replaced by a synonym, or added, dropped or moved by a paraphrase, leaves most or all of them; a
    window word the quote cuts into is covered only when the quote keeps more than half of it. With
    ``cut_first``/``cut_last`` the first/last word of ``w`` is a fragment of a source word (the quote
    starts/ends inside it) and is left out: the quote's own words are still all checked."""
    if not q or not w:
        return 0.0
    last_start = w.rfind(" ") + 1
    exempt = {start for start, cut in ((0, cut_first), (last_start, cut_last)) if cut}
    missing: dict[tuple[int, int], int] = {}  # (side, word start) -> unaligned characters
    for tag, src_pos, dest_pos in Indel.editops(q, w).as_list():
        side, text, pos = (0, q, src_pos) if tag == "delete" else (1, w, dest_pos)
        if text[pos] != " ":
            key = (side, text.rfind(" ", 0, pos) + 1)
            missing[key] = missing.get(key, 0) + 1
    uncovered = 0
    for (side, start), count in missing.items():
        if side and start in exempt:
            continue
        text = w if side else q
        end = text.find(" ", start)
        uncovered += 2 * count >= (end if end >= 0 else len(text)) - start
    total = q.count(" ") + w.count(" ") + 2 - len(exempt)
    if total <= 0:
        return 0.0
    return 1.0 - uncovered / total


def _prefilter_cutoff(score_cutoff: float) -> float:
    """``partial_ratio`` cutoff (0–100) that no pair scoring ``>= score_cutoff`` can fall below.

    If the final window ``w`` has ``e = Indel(q, w)``, then ``|len(w) - n| <= e``, so trimming or
    extending ``w`` to ``n`` characters (possible when ``n <= len(s)``) gives a window with at most ``2e``
    indels, whose partial-ratio similarity is at least ``1 - 2e / 2n = 1 - e / n``. A score ``>= c``
    needs ``e <= (1 - c) · D(n) <= (1 - c) · 2n``, hence ``partial_ratio >= 100 · (2c - 1)``."""
    return max(0.0, 100.0 * (2.0 * score_cutoff - 1.0) - 1e-6)


def _fuzzy(
    q: str, s: str, gaps: Callable[[], frozenset[int]], score_cutoff: float = 0.0
) -> tuple[float, int, int]:
    """Score and normalised-source window ``[a, b)`` of the best word-aligned match of ``q`` in ``s``
    (module docstring); ``(0.0, 0, 0)`` when the score is below ``score_cutoff``."""
    n = len(q)
    if n > len(s):
        a, b = 0, len(s)
    else:
        alignment = partial_ratio_alignment(q, s, score_cutoff=_prefilter_cutoff(score_cutoff))
        if alignment is None:
            return 0.0, 0, 0
        a, b = alignment.dest_start, alignment.dest_end
    edits = Indel.distance(q, s[a:b])
    if edits:
        a, b, edits = _refine_window(q, s, a, b, edits)
    if s[a:b].strip():  # drop window edge spaces, which the quote never has
        while s[a] == " ":
            a += 1
        while s[b - 1] == " ":
            b -= 1
    a0, b0 = a, b
    a, b = _snap(q, s, a, b, gaps)
    score = _checked_score(q, s[a:b], score_cutoff)
    if score < 1.0 and (a, b) != (a0, b0):  # the quote may start or end inside a word: a truncation
        known = gaps()
        cut = (not _is_boundary(s, a0, known), not _is_boundary(s, b0, known))
        score = max(score, _checked_score(q, s[a0:b0], score_cutoff, *cut))
    if score < score_cutoff or score <= 0.0:
        return 0.0, 0, 0
    return score, a, b


def _checked_score(
    q: str, window: str, score_cutoff: float, cut_first: bool = False, cut_last: bool = False
) -> float:
    """Character score of ``q`` against ``window`` capped by the word check (module docstring)."""
    score = max(0.0, 1.0 - Indel.distance(q, window) / _error_scale(len(q)))
    if score < score_cutoff or score <= 0.0:  # the word check can only lower it
        return 0.0
    coverage = word_coverage(q, window, cut_first, cut_last)
    return score if coverage >= 1.0 else min(score, GROUNDED_THRESHOLD * coverage)


def _match(q: str, source: str, score_cutoff: float = 0.0) -> tuple[float, int, int]:
    """Score and normalised window of ``q`` (normalised quote) in ``source``; an exact match reports
    the window ``(0, 0)`` (:func:`_exact_span` finds it when needed)."""
    s = normalize_text_cached(source)
    if not q or not s:
        return 0.0, 0, 0
    if q in s:
        return 1.0, 0, 0
    return _fuzzy(q, s, lambda: _gaps_cached(source), score_cutoff)


def _exact_span(q: str, norm: NormalizedText) -> tuple[int, int]:
    """Normalised span of an occurrence of ``q`` that starts and ends on original cluster boundaries
    (so it does not begin inside an expanded ligature such as ``ﬁ`` → ``fi``); else the first one."""
    s, starts = norm.text, norm.starts
    first = at = s.find(q)
    while at >= 0:
        end = at + len(q)
        starts_cluster = at == 0 or starts[at - 1] != starts[at]
        ends_cluster = end == len(s) or starts[end] != starts[end - 1]
        if starts_cluster and ends_cluster:
            return at, end
        at = s.find(q, at + 1)
    return first, first + len(q)


def locate_quote(quote: str, source: str) -> QuoteMatch:
    """Best match of ``quote`` in ``source``: score in [0, 1] (module docstring) and the matched span of
    the original ``source``; ``QuoteMatch(0.0, 0, 0)`` when the score is 0. Cached for the last 4096
    pairs (the judges locate the same quote in the same Document several times per candidate)."""
    return _locate_quote(quote, source)


@lru_cache(maxsize=4096)
def _locate_quote(quote: str, source: str) -> QuoteMatch:
    q = normalize_text(quote)
    score, a, b = _match(q, source)
    if score <= 0.0:
        return NO_MATCH
    if source.isascii():  # one character per cluster: the first occurrence, mapped without the full map
        if score == 1.0 and b == 0:  # exact
            a = normalize_text_cached(source).find(q)
            b = a + len(q)
        return QuoteMatch(score, _ascii_origin(source, a), _ascii_origin(source, b - 1) + 1)
    norm = normalize_with_map(source)
    if score == 1.0 and b == 0:  # exact
        a, b = _exact_span(q, norm)
    return QuoteMatch(score, norm.starts[a], norm.ends[b - 1])


_NON_SPACE_RUN = re.compile(r"\S+")


@lru_cache(maxsize=256)
def _ascii_words(source: str) -> tuple[list[int], list[tuple[int, int, str]]]:
    """The words of an ASCII ``source`` that survive normalisation (whitespace-separated runs with a kept
    character): each one's offset in :func:`normalize_text` (one space between words) and its
    ``(start, end, text)`` in ``source``."""
    offsets: list[int] = []
    words: list[tuple[int, int, str]] = []
    n = 0
    for m in _NON_SPACE_RUN.finditer(source):
        kept = len(m.group().translate(_ASCII_DELETE))
        if kept:
            n += 1 if words else 0  # the space before every word but the first
            offsets.append(n)
            words.append((m.start(), m.end(), m.group()))
            n += kept
    return offsets, words


def _ascii_origin(source: str, i: int) -> int:
    """``normalize_with_map(source).starts[i]`` for an ASCII ``source`` (its ``ends[i]`` is one more): the
    ``k``-th kept character of the word holding normalised position ``i``, or, for the space after a word,
    the first whitespace character after it (the one step 4 keeps)."""
    offsets, words = _ascii_words(source)
    w = bisect_right(offsets, i) - 1
    start, end, text = words[w]
    k = i - offsets[w]
    for j, ch in enumerate(text):
        if ch not in _ASCII_DROPPED:
            if k == 0:
                return start + j
            k -= 1
    return end  # the space after the word


def quote_score(quote: str, source: str) -> float:
    """Score in [0, 1] of ``quote`` against ``source`` (same value as ``locate_quote(...).score``)."""
    return _match(normalize_text(quote), source)[0]


def quote_scores(pairs: Iterable[tuple[str, str]], score_cutoff: float = 0.0) -> list[float]:
    """``[quote_score(q, s) for q, s in pairs]``, except that scores below ``score_cutoff`` come back as
    ``0.0`` (as ``rapidfuzz``'s ``score_cutoff``): a pair whose partial ratio is below
    :func:`_prefilter_cutoff` is rejected without alignment. Each distinct source is normalised once
    (pairs are processed grouped by source; results come back in input order). For grounded/not
    decisions pass ``score_cutoff=GROUNDED_THRESHOLD``."""
    pairs = list(pairs)
    order = sorted(range(len(pairs)), key=lambda i: pairs[i][1])
    scores = [0.0] * len(pairs)
    for i in order:
        quote, source = pairs[i]
        scores[i] = _match(normalize_text(quote), source, score_cutoff)[0]
    return scores


def is_grounded(quote: str, source: str, threshold: float = GROUNDED_THRESHOLD) -> bool:
    """``quote_score(quote, source) >= threshold``."""
    return quote_score(quote, source) >= threshold


def allowed_edits(n: int, threshold: float = GROUNDED_THRESHOLD) -> int:
    """Largest Indel edit count a quote of ``n`` normalised characters may have and still reach
    ``threshold``: ``floor((1 - threshold) · D(n))`` (documentation helper, used by tests and docs)."""
    if n <= 0:
        return 0
    return int((1.0 - threshold) * _error_scale(n) + 1e-9)
