"""Attribute-like constraints mined from review sentences, for POIs whose Yelp attributes are absent.

For each POI and each :data:`MINED` attribute, its review sentences (with their stored stance,
``groundtrace.crs.kb.stance``) are sorted into

* *for*: the attribute's pattern matches, no negation cue (:data:`NEGATION_RE`), polarity >= 0;
* *against*: the pattern matches with a negation cue or negative polarity, or the opposite pattern
  matches (for noise: a loud word against "quiet").

The attribute is set to its value when *for* comes from >= :data:`MIN_REVIEWS` distinct reviews and
outnumbers *against*; to its opposite (False, or ``noise = "loud"``) when *against* comes from
>= :data:`MIN_REVIEWS` reviews and outnumbers *for*; otherwise it stays unknown. Mining only fills keys the
POI does not have (Yelp's own attributes win). The sentences behind each mined value are kept as evidence
in ``attributes["mined_from_reviews"][key]`` (``"review_id:start-end"``, at most 3).

The price level is not filled by a word rule: :func:`infer_price` (cheap sentences — cheap, affordable,
good value, ... with no negation and non-negative stance — against pricey ones — pricey, expensive,
overpriced, splurge, fine dining, ...; level 1 when cheap >= 3 and cheap > 2 × pricey, 3 when pricey >= 3 and
pricey > 2 × cheap, else 2) agrees with Yelp's level on the 273 yelp_dense POIs 0.582 of the time, exactly
the always-``$$`` baseline (docs/crs-kb.md); it is kept only to measure that (:func:`mining_agreement`).
:func:`fill_from_reviews` fills missing levels with the model *learned on the KB's own priced POIs*
(``groundtrace.crs.kb.price``), and only where that model is measured to beat the baseline clearly and is
sure enough; a POI it does not fill keeps ``price_level = None`` (unknown: ``constraints.satisfies`` treats
it as not satisfied, so the builder never asks a price constraint the KB cannot answer).

:func:`mining_agreement` measures both on POIs that *do* have the Yelp value (the mined value is
computed as if it were absent and compared).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.price import infer_missing_prices
from groundtrace.crs.kb.review_words import CHEAP, EVIDENCE_KEY, PRICEY, _p
from groundtrace.crs.kb.stance import SentenceStance
from groundtrace.crs.schema import POI

__all__ = [
    "CHEAP",
    "EVIDENCE_KEY",
    "PRICEY",
    "fill_from_reviews",
    "infer_price",
    "mine_poi",
    "mining_agreement",
]

MIN_REVIEWS = 2
MAX_EVIDENCE = 3

NEGATION_RE = re.compile(
    r"\b(?:not|no|never|nothing|none|nowhere|without|lack(?:s|ed|ing)?|hardly)\b|n't\b", re.IGNORECASE
)


@dataclass(frozen=True)
class MinedAttribute:
    """How one attribute is mined: ``key`` gets ``value`` (or ``opposite``) from ``pattern`` sentences."""

    key: str
    value: Any
    opposite: Any
    pattern: re.Pattern[str]
    against: re.Pattern[str] | None = None


_QUIET = r"quiet|calm|peaceful|hear each other|relaxing"
_KIDS = r"kids?\b|children|family[- ]friendly|toddlers?|high ?chairs?"
_GROUPS = r"groups?\b|large party|big party|party of \d+|big tables?"
_OUTDOOR = r"patio|outdoor seating|outdoor tables?|sidewalk (?:seating|tables?)|courtyard|terrace|al fresco"

MINED: tuple[MinedAttribute, ...] = (
    MinedAttribute("noise", "quiet", "loud", _p(_QUIET), _p(r"loud|noisy|deafening")),
    MinedAttribute("good_for_kids", True, False, _p(_KIDS)),
    MinedAttribute("good_for_groups", True, False, _p(_GROUPS)),
    MinedAttribute("ambience", "romantic", None, _p(r"romantic|date night|candle ?lit|anniversary")),
    MinedAttribute("outdoor_seating", True, False, _p(_OUTDOOR)),
    MinedAttribute("parking", True, False, _p(r"parking|valet|garage")),
    MinedAttribute("wifi", "free", "no", _p(r"wi-?fi|internet")),
)


def _ref(s: SentenceStance) -> str:
    return f"{s.review_id}:{s.start}-{s.end}"


def _sentences(kb: KnowledgeBase, poi_id: str) -> list[tuple[SentenceStance, str]]:
    out = []
    for review in kb.reviews_of(poi_id):
        for s in kb.stances.get(review.review_id, ()):
            out.append((s, review.text[s.start : s.end]))
    return out


def _vote(sentences: list[tuple[SentenceStance, str]], m: MinedAttribute) -> tuple[Any, list[str]] | None:
    pro: list[SentenceStance] = []
    con: list[SentenceStance] = []
    for s, text in sentences:
        if m.pattern.search(text):
            (con if s.polarity < 0 or NEGATION_RE.search(text) else pro).append(s)
        elif m.against is not None and m.against.search(text) and not NEGATION_RE.search(text):
            con.append(s)
    n_pro, n_con = len({s.review_id for s in pro}), len({s.review_id for s in con})
    if n_pro >= MIN_REVIEWS and len(pro) > len(con):
        return m.value, [_ref(s) for s in pro[:MAX_EVIDENCE]]
    if m.opposite is not None and n_con >= MIN_REVIEWS and len(con) > len(pro):
        return m.opposite, [_ref(s) for s in con[:MAX_EVIDENCE]]
    return None


def infer_price(sentences: list[tuple[SentenceStance, str]]) -> tuple[int, list[str]]:
    """Price level 1–3 from review sentences (module docstring) and the sentences behind it."""
    cheap = [s for s, t in sentences if CHEAP.search(t) and not NEGATION_RE.search(t) and s.polarity >= 0]
    pricey = [s for s, t in sentences if PRICEY.search(t) and not NEGATION_RE.search(t)]
    if len(cheap) >= 3 and len(cheap) > 2 * len(pricey):
        return 1, [_ref(s) for s in cheap[:MAX_EVIDENCE]]
    if len(pricey) >= 3 and len(pricey) > 2 * len(cheap):
        return 3, [_ref(s) for s in pricey[:MAX_EVIDENCE]]
    return 2, [_ref(s) for s in (cheap + pricey)[:MAX_EVIDENCE]]


def mine_poi(kb: KnowledgeBase, poi: POI) -> tuple[dict[str, Any], int, dict[str, list[str]]]:
    """``(mined attributes, inferred price level, evidence by key)`` from the POI's reviews, ignoring
    what the POI already has."""
    sentences = _sentences(kb, poi.poi_id)
    mined: dict[str, Any] = {}
    evidence: dict[str, list[str]] = {}
    for m in MINED:
        vote = _vote(sentences, m)
        if vote is not None:
            value, refs = vote
            mined[m.key] = [value] if m.key == "ambience" else value
            evidence[m.key] = refs
    price, refs = infer_price(sentences)
    evidence["price_level"] = refs
    return mined, price, evidence


def fill_from_reviews(
    kb: KnowledgeBase, *, infer_prices: bool = True
) -> tuple[KnowledgeBase, dict[str, Any]]:
    """A KB whose POIs have their absent :data:`MINED` attributes filled from reviews (with evidence) and,
    with ``infer_prices``, missing price levels inferred by ``price.infer_missing_prices`` (only when its
    cross-validated accuracy clearly beats the majority level; marked ``inferred``) — and a report: counts
    filled per key, :func:`mining_agreement` (which measures the word rule's price level too) and
    ``price_inferred`` (the learned model's cross-validated quality, floor and fills, or why none)."""
    filled: Counter[str] = Counter()
    pois: list[POI] = []
    for poi in (kb.pois[i] for i in sorted(kb.pois)):
        mined, _price, evidence = mine_poi(kb, poi)
        attrs = dict(poi.attributes)
        kept: dict[str, list[str]] = {}
        for key, value in mined.items():
            if key not in attrs:
                attrs[key] = value
                kept[key] = evidence[key]
                filled[key] += 1
        update: dict[str, Any] = {}
        if kept:
            attrs[EVIDENCE_KEY] = kept
            update["attributes"] = attrs
        pois.append(poi.model_copy(update=update) if update else poi)
    out = KnowledgeBase(pois, kb.reviews.values(), name=kb.name)
    out.set_stances(kb.stances, kb.stance_model or "")
    report: dict[str, Any] = {
        "filled": dict(sorted(filled.items())),
        "agreement": mining_agreement(kb, kb.pois.values()),
    }
    if infer_prices:
        out, report["price_inferred"] = infer_missing_prices(out)
        if report["price_inferred"]["filled"]:
            report["filled"]["price_level"] = report["price_inferred"]["filled"]
    return out, report


def _confident(pairs: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "n": len(pairs),
        "accuracy": round(sum(t == p for t, p in pairs) / len(pairs), 3) if pairs else None,
    }


def mining_agreement(kb: KnowledgeBase, pois: Iterable[POI]) -> dict[str, Any]:
    """On POIs that have the Yelp value (and were not mined themselves): per key, how often the mined
    value equals it (``n`` compared, ``accuracy``); price: accuracy and the majority-level baseline."""
    hits: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    price_pairs: list[tuple[int, int]] = []
    price_pairs_confident: list[tuple[int, int]] = []  # the rule's levels 1 and 3 (not its default 2)
    for poi in pois:
        if EVIDENCE_KEY in poi.attributes:
            continue
        mined, price, _ = mine_poi(kb, poi)
        for key, value in mined.items():
            known = poi.attributes.get(key)
            if known is None:
                continue
            seen[key] += 1
            if key == "ambience":
                hits[key] += value[0] in known
            elif key == "noise":
                hits[key] += (known in ("quiet", "average")) == (value == "quiet")
            else:
                hits[key] += known == value
        if poi.price_level is not None:
            price_pairs.append((min(poi.price_level, 3), price))
            if price != 2:
                price_pairs_confident.append((min(poi.price_level, 3), price))
    out: dict[str, Any] = {k: {"n": seen[k], "accuracy": round(hits[k] / seen[k], 3)} for k in sorted(seen)}
    if price_pairs:
        majority = Counter(t for t, _ in price_pairs).most_common(1)[0][1]
        out["price_level"] = {
            "n": len(price_pairs),
            "accuracy": round(sum(t == p for t, p in price_pairs) / len(price_pairs), 3),
            "majority_baseline": round(majority / len(price_pairs), 3),
            "confident": _confident(price_pairs_confident),
            "note": "the word rule, measured only (no better than the majority level); missing levels are "
            "filled by the learned model (price_inferred); levels 3 and 4 compared as 3",
        }
    return out
