"""Slow, obvious reference implementation of the grounding metrics (differential tests and benchmark).

Independent of the fast path on purpose: its own tag regex, its own character-by-character quote finder,
sentence splitter and claim segmentation (``core.citations`` is not used), a difflib sliding-window quote
matcher instead of ``core.quotes`` (rapidfuzz), a character mask for citation tokens, a per-position scan
for lexicon mentions, and no caching. It shares only the tokenizer (``core.tokens``, the one documented
tokenizer) and the lexicon's pattern syntax. It follows the definitions of docs/crs-metrics.md:

* a *quoted citation* is every quote (``"..."``, ``“...”``, ``„...“``, ``«...»``, ``'...'``, ``‘...’``)
  inside a claim that carries tags, cited by all of that claim's tags — so in
  ``I like "a" and "b" [R1].`` both quotes are cited by R1, and in ``"a" [R1], and "b" [R2]`` R1 cites
  "a" and R2 cites "b";
* a *claim* is the stretch of a sentence that a tag group closes (see :func:`reference_cited_quotes`).

Known, documented difference: the difflib ratio and rapidfuzz's partial alignment are different
similarity functions, so a quote scoring near 0.80 may be grounded by one and not the other. The
differential test therefore uses corpora whose quotes are exact, lightly edited (score >= 0.9 under
both) or unrelated (< 0.6 under both); on those the two implementations must agree exactly.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from itertools import combinations

from groundtrace.core.evidence.normalize import fold_unicode
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD
from groundtrace.core.evidence.tokens import token_spans
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.lexicon import Lexicon, pattern_regex
from groundtrace.crs.metrics.support import (
    CUES,
    MAX_QUOTE_CHARS,
    MAX_QUOTES_PER_TURN,
    MAX_RESPONSE_CHARS,
    MIN_QUOTE_WORDS,
    SCOPE_WORDS,
)
from groundtrace.crs.schema import ReviewRef

TAG_GROUP = re.compile(r"\[[^\S\n]*(R[0-9]{1,6}(?:[^\S\n]*[,;][^\S\n]*R[0-9]{1,6})*)[^\S\n]*\]")

# quote marks: opening mark -> the marks that may close it
QUOTE_PAIRS = {'"': '"”', "“": '”"', "„": "“”", "«": "»", "'": "'’", "‘": "’'"}
SINGLE_QUOTE_MAX = 300  # characters between single quote marks
END_MARKS = ".!?…"
AFTER_END = "\"'”“’»)]"  # closing quotes/brackets an end mark may carry
TITLES = {"mr", "mrs", "ms", "mx", "dr", "prof", "st", "mt", "ft", "rev", "fr", "sr", "jr", "gen", "col",
          "capt", "lt", "sgt", "hon", "pres", "gov", "sen", "rep", "mme", "mlle", "messrs"}  # fmt: skip
INNER = {"e.g", "i.e", "cf", "vs", "viz", "approx", "incl", "esp", "ca", "resp"}
BEFORE_NUMBER = {"no", "nos", "vol", "pp", "p", "fig", "ch", "sec"}
BOUNDARY = set(".,;:!?()[]{}\"“”„«»‘’'\n—–")  # a scope does not cross these
WORD_BEFORE_DOT = re.compile(r"[A-Za-z]+(?:\.[A-Za-z]+)*$")


def reference_quotes(text: str) -> list[tuple[str, int, int]]:
    """``(inner text, start, end)`` of every quote, outermost only, by trying each character as an opener.

    An opener is a quote mark not after a letter/digit and before a non-space; its quote closes at the first
    mark of its pair, on the same line, at least one character later, after a non-space and not before a
    letter/digit; single-quoted text is at most 300 characters. Quotes inside a quote are not looked for.
    """
    out = []
    i = 0
    while i < len(text):
        mark = text[i]
        closes_at = None
        if (
            mark in QUOTE_PAIRS
            and not (i > 0 and text[i - 1].isalnum())
            and i + 1 < len(text)
            and not text[i + 1].isspace()
        ):
            k = i + 2
            while k < len(text) and text[k] != "\n":
                if mark in "'‘" and k - (i + 1) > SINGLE_QUOTE_MAX:
                    break
                if (
                    text[k] in QUOTE_PAIRS[mark]
                    and not text[k - 1].isspace()
                    and not (k + 1 < len(text) and text[k + 1].isalnum())
                ):
                    closes_at = k
                    break
                k += 1
        if closes_at is None:
            i += 1
        else:
            out.append((text[i + 1 : closes_at], i + 1, closes_at))
            i = closes_at + 1
    return out


def _abbreviation(line: str, dot: int, next_char: str) -> bool:
    """Whether the single period ``line[dot]`` closes an abbreviation
    (``Dr.``, ``e.g.``, ``J.``, ``No. 5``)."""
    found = WORD_BEFORE_DOT.search(line[max(0, dot - 40) : dot])
    if found is None:
        return False
    word = found.group()
    if len(word) == 1 and word.isupper():
        return True
    return (
        word.lower() in TITLES
        or word.lower() in INNER
        or (word.lower() in BEFORE_NUMBER and next_char.isdigit())
    )


def _after_bracket_groups(line: str, p: int) -> int:
    """Position after any ``[...]`` groups (1-200 characters, no bracket inside, spaces before each) that
    start at ``line[p]``; ``p`` when there is none."""
    while True:
        q = p
        while q < len(line) and line[q].isspace():
            q += 1
        if q == len(line) or line[q] != "[":
            return p
        r = q + 1
        while r < len(line) and line[r] not in "[]":
            r += 1
        if r == len(line) or line[r] != "]" or not 1 <= r - q - 1 <= 200:
            return p
        p = r + 1


def reference_sentences(text: str, quotes: list[tuple[str, int, int]]) -> list[tuple[int, int]]:
    """``(start, end)`` of every sentence (whitespace stripped), line by line, trying each end mark in turn.

    An end mark run (``.!?…``), with the closing quotes/brackets and ``[...]`` groups right after it, ends
    a sentence when whitespace or the line end follows, the next character is not a lowercase letter, the
    sentence so far has a letter or digit and is not a bare number, the run is not inside a quote, and a
    single period does not close an abbreviation.
    """
    out = []
    offset = 0
    for line in text.split("\n"):
        cuts = []
        start = 0
        p = 0
        while p < len(line):
            if line[p] not in END_MARKS:
                p += 1
                continue
            mark = p
            while p < len(line) and line[p] in END_MARKS:
                p += 1
            while p < len(line) and line[p] in AFTER_END:
                p += 1
            end = _after_bracket_groups(line, p)
            if end < len(line) and not line[end].isspace():
                continue
            rest = line[end:].strip()
            next_char = rest[0] if rest else ""
            if next_char.islower():
                continue
            so_far = line[start:mark]
            if not any(ch.isalnum() for ch in so_far) or so_far.strip().isdigit():
                continue
            if any(s < offset + end <= e for _q, s, e in quotes):
                continue
            if (
                line[mark] == "."
                and line[mark + 1 : mark + 2] != "."
                and _abbreviation(line, mark, next_char)
            ):
                continue
            cuts.append(end)
            start = end
        cuts.append(len(line))
        a = 0
        for b in cuts:
            piece = line[a:b]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                out.append((offset + a + lead, offset + a + len(piece.rstrip())))
            a = b
        offset += len(line) + 1
    return out


def reference_claims(
    text: str, groups: list[tuple[int, int, list[str]]]
) -> list[tuple[int, int, list[str], list[tuple[str, int, int]], list[tuple[int, int, list[str]]]]]:
    """``(start, end, tags, quotes, groups)`` of every claim, in order.

    Within a sentence each tag group closes a claim that starts at the sentence start or at the end of the
    previous group; a group with no letter or digit since the previous one joins that group's claim (or,
    first in its sentence, the claim that follows it). Text after the last group joins the last claim
    unless it holds a quote: then it is a claim without tags.
    """
    quotes = reference_quotes(text)
    out = []
    for s0, s1 in reference_sentences(text, quotes):
        claims: list[list] = []  # [start, end, tags, groups]
        pending: list[str] = []
        pending_groups: list[tuple[int, int, list[str]]] = []
        cursor = s0
        for group in groups:
            g0, g1, tags = group
            if not (s0 <= g0 and g1 <= s1):
                continue
            if not any(ch.isalnum() for ch in text[cursor:g0]):
                if claims:
                    claims[-1][1] = g1
                    claims[-1][2] += tags
                    claims[-1][3].append(group)
                else:
                    pending += tags
                    pending_groups.append(group)
            else:
                claims.append([cursor, g1, pending + tags, pending_groups + [group]])
                pending, pending_groups = [], []
            cursor = g1
        quote_after = any(cursor <= s < s1 for _q, s, _e in quotes)
        if claims and not quote_after:
            claims[-1][1] = s1
        elif quote_after or pending or any(ch.isalnum() for ch in text[cursor:s1]):
            claims.append([cursor if claims else s0, s1, pending, pending_groups])
        for a, b, tags, claim_groups in claims:
            out.append((a, b, tags, [q for q in quotes if a <= q[1] < b], claim_groups))
    return out


def reference_cited_quotes(
    text: str, groups: list[tuple[int, int, list[str]]]
) -> list[tuple[str, int, int, list[str]]]:
    """``(quote, start, end, tags)`` for every quote in a claim that carries tags, cited by all its tags."""
    return [(q, s, e, tags) for _a, _b, tags, quotes, _g in reference_claims(text, groups) if tags
            for q, s, e in quotes]  # fmt: skip


def _reference_cues(text: str) -> list[str]:
    words = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", text.lower())
    return [w for w in (w.replace("'", "").replace("’", "") for w in words) if w in CUES]


def _reference_scope(text: str, quote_start: int) -> list[str]:
    """The up to SCOPE_WORDS words before the opening mark at ``quote_start - 1``, back to a boundary."""
    i = quote_start - 1
    lo = max(0, quote_start - 1 - 400)
    while i > lo and text[i - 1] not in BOUNDARY:
        i -= 1
    piece = text[i : quote_start - 1]
    words = [piece[s:e] for s, e in token_spans(piece) if any(ch.isalnum() for ch in piece[s:e])]
    return words[len(words) - SCOPE_WORDS :] if len(words) > SCOPE_WORDS else words


def reference_support(quote: str, start: int, response: str, review: str, user_text: str) -> bool:
    """Rules S1-S5 of docs/crs-metrics.md, with difflib scores and this module's normalisation."""
    if len(quote) > MAX_QUOTE_CHARS:
        return False
    words = [quote[s:e] for s, e in token_spans(quote) if any(ch.isalnum() for ch in quote[s:e])]
    if len(words) < MIN_QUOTE_WORDS:
        return False
    nq, nr = _normalise(quote), _normalise(review)
    if nq and nq in _normalise(user_text):
        return False
    if difflib_quote_score(quote, review) < GROUNDED_THRESHOLD:
        return False
    if _reference_cues(quote) and nq not in nr:
        return False
    scope = _reference_scope(response, start)
    for i, word in enumerate(scope):
        if _reference_cues(word):
            return _normalise(" ".join(scope[i:]) + " " + quote) in nr
    return True


def _normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def difflib_quote_score(quote: str, source: str) -> float:
    """Max SequenceMatcher ratio of the normalised quote against every equal-length window of the source."""
    q, s = _normalise(quote), _normalise(source)
    if not q:
        return 0.0
    if q in s:
        return 1.0
    if len(s) <= len(q):
        return difflib.SequenceMatcher(None, q, s, autojunk=False).ratio()
    best = 0.0
    for i in range(len(s) - len(q) + 1):
        best = max(best, difflib.SequenceMatcher(None, q, s[i : i + len(q)], autojunk=False).ratio())
    return best


def reference_mentions(text: str, lexicon: Lexicon) -> list[tuple[str, int, int]]:
    """Leftmost-longest lexicon matches by scanning every position (slow on purpose)."""
    patterns = [
        (re.compile(pattern_regex(p), re.IGNORECASE), t.id)
        for t in lexicon.terms.values()
        for p in t.patterns
    ]
    out: list[tuple[str, int, int]] = []
    i = 0
    while i < len(text):
        if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            i += 1
            continue
        best: tuple[int, str] | None = None
        for regex, term in patterns:
            m = regex.match(text, i)
            if not m:
                continue
            end = m.end()
            if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                continue
            if best is None or end > best[0]:
                best = (end, term)
        if best is None:
            i += 1
        else:
            out.append((best[1], i, best[0]))
            i = best[0]
    return out


def reference_citations(
    response: str,
    groups: list[tuple[int, int, list[str]]],
    resolve: Callable[[str], ReviewRef | None],
    kb: KnowledgeBase,
    user_text: str,
) -> tuple[list[tuple[int, int]], list[tuple[int, int, list[str]]], int]:
    """``(counted quote spans, backed groups, GS denominator)`` by the anti-gaming rules, claim by claim."""
    counted: list[tuple[int, int]] = []
    backed: list[tuple[int, int, list[str]]] = []
    seen: set[tuple[str, str]] = set()
    n_quoted = bare = 0
    unresolved = sum(resolve(t) is None for _s, _e, tags in groups for t in tags)
    for _a, _b, tags, quotes, claim_groups in reference_claims(response, groups):
        if not tags:
            continue
        if not quotes:
            bare += len(claim_groups)
            continue
        backing: set[str] = set()
        for quote, qs, qe in quotes:
            n_quoted += 1
            if n_quoted > MAX_QUOTES_PER_TURN:
                continue
            supporters = []
            for t in tags:
                r = resolve(t)
                review = kb.reviews[r.review_id].text if r is not None else None
                if (
                    r is not None
                    and review is not None
                    and reference_support(quote, qs, response, review, user_text)
                ):
                    supporters.append((t, r.review_id))
            keys = {(_normalise(quote), rid) for _t, rid in supporters}
            if supporters and not keys <= seen:
                seen |= keys
                counted.append((qs, qe))
                backing |= {t for t, _rid in supporters}
        backed += [g for g in claim_groups if set(g[2]) & backing]
    return counted, backed, n_quoted + bare + unresolved


def _reference_names(response: str, names: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """``(start, end, poi_id)`` of every case-insensitive, word-bounded occurrence of each name, position
    by position, in the folded response (as it is when folding changes its length); an occurrence inside
    a longer one is dropped; sorted."""
    searched = fold_unicode(response)
    if len(searched) != len(response):
        searched = response
    found: list[tuple[int, int, str]] = []
    for pid, name in names:
        needle = fold_unicode(name)
        for i in range(len(searched) - len(needle) + 1):
            if needle and searched[i : i + len(needle)].lower() == needle.lower():
                before = searched[i - 1] if i > 0 else " "
                after = searched[i + len(needle)] if i + len(needle) < len(searched) else " "
                if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                    found.append((i, i + len(needle), pid))
    return sorted(
        (s, e, pid)
        for s, e, pid in found
        if not any(s2 <= s and e <= e2 and e2 - s2 > e - s for s2, e2, _p in found)
    )


def reference_turn_values(  # noqa: C901 -- one pass per metric in the order of docs/crs-metrics.md
    response: str,
    ranking: list[str],
    refs: dict[str, ReviewRef],
    kb: KnowledgeBase,
    lexicon: Lexicon,
    user_text: str = "",
    place_names: tuple[str, ...] = (),
) -> dict[str, float | None]:
    """Grounding (and spatial) values of one answered turn, by the definitions, without shortcuts.

    ``user_text`` is the dialogue's user turns before this turn (a quote copied from it is no support);
    ``place_names`` the names of the dialogue's anchors (lexicon matches inside them are no mentions).
    """
    ranked = list(dict.fromkeys(ranking))
    recommended = [p for p in ranked if p in kb.pois][:3]

    def resolve(tag: str) -> ReviewRef | None:
        ref = refs.get(tag)
        return ref if ref is not None and ref.review_id in kb.reviews else None

    over = len(response) > MAX_RESPONSE_CHARS
    response = response[:MAX_RESPONSE_CHARS]
    groups = [
        (m.start(), m.end(), [t.strip() for t in re.split(r"[,;]", m.group(1))])
        for m in TAG_GROUP.finditer(response)
    ]

    counted, backed, attempts = reference_citations(response, groups, resolve, kb, user_text)

    # GS
    gs = 0.0 if over else (len(counted) / attempts if attempts else 1.0)

    # CD: character mask of counted quotes and backed groups, then tokens entirely inside the mask
    mask = [False] * len(response)
    for s, e in counted:
        for i in range(s, e):
            mask[i] = True
    for s, e, _t in backed:
        for i in range(s, e):
            mask[i] = True
    spans = token_spans(response)
    cd = sum(all(mask[s:e]) for s, e in spans) / len(spans) if spans and not over else 0.0

    # PC
    mentions = reference_mentions(response, lexicon)
    for name in place_names:  # a place named as a reference point makes no attribute claim
        for hit in re.finditer(re.escape(name), response, re.IGNORECASE):
            mentions = [m for m in mentions if not (hit.start() < m[2] and m[1] < hit.end())]
    if mentions:
        covered = 0
        for _term, ms, me in mentions:
            near = False
            for gs_, ge, _t in backed:
                gap = gs_ - me if gs_ >= me else (ms - ge if ms >= ge else 0)
                near = near or gap <= 80
            covered += near
        pc = covered / len(mentions)
    else:
        pc = 1.0
    if over:
        pc = 0.0

    cgs = gs * min(1.0, cd / 0.05) * (0.5 + 0.5 * pc)

    # citation validity / rate
    all_tags = [t for _s, _e, tags in groups for t in tags]
    if all_tags:
        ok = 0
        for t in all_tags:
            r = resolve(t)
            ok += r is not None and r.poi_id in recommended
        validity: float | None = ok / len(all_tags)
    else:
        validity = None
    rate = 1.0 if groups else 0.0

    # hallucinated-attribute rate (v2): claims = mentions outside counted quotes, each judged against the
    # POI named last before it (else the first of the support set)
    support = list(recommended)
    for t in all_tags:
        r = resolve(t)
        if r is not None and r.poi_id in kb.pois and r.poi_id not in support:
            support.append(r.poi_id)
    named_all = _reference_names(response, [(pid, kb.pois[pid].name) for pid in support])
    claims = [
        m
        for m in mentions
        if not any(s <= m[1] and m[2] <= e for s, e in counted)
        and not any(s < m[2] and m[1] < e for s, e, _p in named_all)  # a POI's own name is no claim
    ]
    if claims and not support:
        har = 1.0
    elif claims:
        named = named_all
        bad = 0
        for term_id, ms, _me in claims:
            pid = support[0]
            for at, _end, who in named:
                if at <= ms:
                    pid = who
            poi = kb.pois[pid]
            term = lexicon.terms[term_id]
            in_reviews = any(
                term_id in {m[0] for m in reference_mentions(rv.text, lexicon)} for rv in kb.reviews_of(pid)
            )
            in_categories = any(  # a "Bed & Breakfast" label supports "breakfast"
                term_id in {m[0] for m in reference_mentions(label, lexicon)} for label in poi.categories
            )
            recorded = any(
                rule.attribute != "" and poi.attributes.get(rule.attribute) is not None
                for rule in term.support
            )
            true = term.supported_by_kb(poi) or in_categories or (not recorded and in_reviews)
            bad += not true
        har = bad / len(claims)
    else:
        har = 0.0

    # spatial coherence
    if len(recommended) >= 2:
        pairs = list(combinations(recommended, 2))
        near_pairs = 0
        for a, b in pairs:
            pa, pb = kb.pois[a], kb.pois[b]
            near_pairs += haversine_km(pa.lat, pa.lon, pb.lat, pb.lon) <= 2.0
        spatial: float | None = near_pairs / len(pairs)
    else:
        spatial = None

    assert all(v is None or not math.isnan(v) for v in (gs, cd, pc, cgs, validity, har))
    return {
        "gs": gs,
        "cd": cd,
        "pc": pc,
        "cgs": cgs,
        "citation_validity": validity,
        "citation_rate": rate,
        "hallucinated_attribute_rate": har,
        "spatial_coherence": spatial,
    }
