"""Slow, obvious reference implementation of the grounding metrics (differential tests and benchmark).

Independent of the fast path on purpose: its own tag/quote regexes, a difflib sliding-window quote
matcher instead of ``core.quotes`` (rapidfuzz), a character mask for citation tokens, a per-position
scan for lexicon mentions, and no caching. It follows the same definitions (docs/crs-metrics.md) for
the standard citation forms ``"quote" [R1]``, ``"quote" [R1, R3]`` and ``"quote" [R1][R3]``.

Known, documented difference: the difflib ratio and rapidfuzz's partial alignment are different
similarity functions, so a quote scoring near 0.80 may be grounded by one and not the other. The
differential test therefore uses corpora whose quotes are exact, lightly edited (score >= 0.9 under
both) or unrelated (< 0.6 under both); on those the two implementations must agree exactly.
"""

from __future__ import annotations

import difflib
import math
import re
from itertools import combinations

from groundtrace.core.tokens import token_spans
from groundtrace.crs.geo import haversine_km
from groundtrace.crs.kb import KnowledgeBase
from groundtrace.crs.metrics.lexicon import Lexicon, pattern_regex
from groundtrace.crs.schema import ReviewRef

TAG_GROUP = re.compile(r"\[\s*(R\d+(?:\s*,\s*R\d+)*)\s*\]")
QUOTED = re.compile(r"[\"“]([^\"“”]+)[\"”]((?:\s*\[\s*R\d+(?:\s*,\s*R\d+)*\s*\])+)")


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


def reference_turn_values(
    response: str,
    ranking: list[str],
    refs: dict[str, ReviewRef],
    kb: KnowledgeBase,
    lexicon: Lexicon,
) -> dict[str, float | None]:
    """Grounding (and spatial) values of one answered turn, by the definitions, without shortcuts."""
    ranked = list(dict.fromkeys(ranking))
    recommended = [p for p in ranked if p in kb.pois][:3]

    def resolve(tag: str) -> ReviewRef | None:
        ref = refs.get(tag)
        return ref if ref is not None and ref.review_id in kb.reviews else None

    groups = [
        (m.start(), m.end(), [t.strip() for t in m.group(1).split(",")]) for m in TAG_GROUP.finditer(response)
    ]
    quotes = []
    for m in QUOTED.finditer(response):
        tags = [t for g in TAG_GROUP.finditer(m.group(2)) for t in (x.strip() for x in g.group(1).split(","))]
        quotes.append((m.group(1), m.start(1), m.end(1), tags))

    # GS
    if quotes:
        grounded = 0
        for quote, _s, _e, tags in quotes:
            scores = [
                difflib_quote_score(quote, kb.reviews[r.review_id].text) for r in map(resolve, tags) if r
            ]
            grounded += any(s >= 0.80 for s in scores)
        gs = grounded / len(quotes)
    else:
        gs = 1.0

    # CD: character mask of citation regions, then tokens entirely inside the mask
    mask = [False] * len(response)
    for _q, s, e, _t in quotes:
        for i in range(s, e):
            mask[i] = True
    for s, e, _t in groups:
        for i in range(s, e):
            mask[i] = True
    spans = token_spans(response)
    cd = sum(all(mask[s:e]) for s, e in spans) / len(spans) if spans else 0.0

    # PC
    mentions = reference_mentions(response, lexicon)
    if mentions:
        covered = 0
        for _term, ms, me in mentions:
            near = False
            for gs_, ge, _t in groups:
                gap = gs_ - me if gs_ >= me else (ms - ge if ms >= ge else 0)
                near = near or gap <= 80
            covered += near
        pc = covered / len(mentions)
    else:
        pc = 1.0

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

    # hallucinated-attribute rate
    support = list(recommended)
    for t in all_tags:
        r = resolve(t)
        if r is not None and r.poi_id in kb.pois and r.poi_id not in support:
            support.append(r.poi_id)
    if mentions:
        bad = 0
        for term_id, _s, _e in mentions:
            term = lexicon.terms[term_id]
            ok_term = False
            for pid in support:
                poi = kb.pois[pid]
                in_reviews = any(
                    term_id in {m[0] for m in reference_mentions(rv.text, lexicon)}
                    for rv in kb.reviews_of(pid)
                )
                in_categories = any(  # a "Bed & Breakfast" label supports "breakfast"
                    term_id in {m[0] for m in reference_mentions(label, lexicon)} for label in poi.categories
                )
                ok_term = ok_term or term.supported_by_kb(poi) or in_reviews or in_categories
            bad += not ok_term
        har = bad / len(mentions)
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
