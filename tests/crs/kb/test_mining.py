"""Attributes and price levels mined from review sentences; the category mapping on the real Yelp list."""

from __future__ import annotations

import json

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.mining import EVIDENCE_KEY, fill_from_reviews, mine_poi, mining_agreement
from groundtrace.crs.kb.stance import SentenceStance, split_sentences
from groundtrace.crs.kb.yelp import CATEGORY_RULES, classify, split_categories
from groundtrace.crs.schema import POI, Review
from tests.conftest import shared_path


def _kb(reviews: dict[str, tuple[str, str, tuple[int, ...]]], pois: list[POI]) -> KnowledgeBase:
    kb = KnowledgeBase(
        pois, [Review(review_id=r, poi_id=p, stars=4, text=t) for r, (p, t, _) in reviews.items()]
    )
    stances = {}
    for rid, (_, text, polarities) in reviews.items():
        spans = split_sentences(text)
        assert len(spans) == len(polarities), text
        stances[rid] = [
            SentenceStance(rid, s, e, ("overall",), p, 0.0)
            for (s, e), p in zip(spans, polarities, strict=True)
        ]
    kb.set_stances(stances, "by-hand")
    return kb


def _poi(pid: str, **kw) -> POI:
    return POI(
        poi_id=pid, name=pid, city="X", poi_type="restaurant", lat=0, lon=0, stars=4, review_count=3, **kw
    )


REVIEWS = {
    # P1: patio praised in 2 reviews; parking negated in 2; cheap in 3 -> outdoor True, parking False, $
    "a": ("P1", "Lovely patio in the sun. There is no parking anywhere. Cheap and cheerful.", (1, 0, 1)),
    "b": ("P1", "We sat on the patio again. Parking was not available. Very affordable menu.", (1, 0, 1)),
    "c": ("P1", "Good value for the money.", (1,)),
    # P2: already has Yelp attributes: kept; its quiet mentions are compared (agreement)
    "d": ("P2", "Quiet enough to hear each other. The patio is lovely.", (1, 1)),
    "e": ("P2", "A calm and peaceful dinner. Our table on the patio was great.", (1, 1)),
}


def test_absent_attributes_are_filled_with_their_evidence() -> None:
    kb = _kb(
        REVIEWS,
        [_poi("P1"), _poi("P2", price_level=3, attributes={"noise": "quiet", "outdoor_seating": False})],
    )
    filled, report = fill_from_reviews(kb)
    p1 = filled.poi("P1")
    assert p1.attributes["outdoor_seating"] is True
    assert p1.attributes["parking"] is False  # "no parking" / "not available": against, from 2 reviews
    assert p1.price_level is None  # 3 cheap sentences, but text is not trusted with the price level
    assert mine_poi(kb, kb.poi("P1"))[1] == 1  # what the text rule would say: measured, never filled
    evidence = p1.attributes[EVIDENCE_KEY]
    assert evidence["outdoor_seating"] == ["a:0-24", "b:0-26"]
    assert set(evidence) == {"outdoor_seating", "parking"}
    # Yelp's own values win and are not marked as mined
    p2 = filled.poi("P2")
    assert (
        p2.attributes["outdoor_seating"] is False
        and p2.price_level == 3
        and EVIDENCE_KEY not in p2.attributes
    )
    assert report["filled"] == {"outdoor_seating": 1, "parking": 1}
    assert filled.stances == kb.stances


def test_agreement_compares_mined_values_with_yelp_where_known() -> None:
    kb = _kb(
        REVIEWS,
        [_poi("P1"), _poi("P2", price_level=3, attributes={"noise": "quiet", "outdoor_seating": False})],
    )
    agreement = mining_agreement(kb, kb.pois.values())
    assert agreement["noise"] == {"n": 1, "accuracy": 1.0}  # mined quiet, Yelp quiet
    assert agreement["outdoor_seating"] == {"n": 1, "accuracy": 0.0}  # mined True, Yelp False
    assert agreement["price_level"]["n"] == 1 and agreement["price_level"]["accuracy"] == 0.0  # 2 vs 3
    assert agreement["price_level"]["confident"] == {"n": 0, "accuracy": None}  # the rule said 2


def test_one_review_is_not_enough() -> None:
    reviews = {"a": ("P1", "Lovely patio. Another patio mention.", (1, 1))}
    filled, _ = fill_from_reviews(_kb(reviews, [_poi("P1")]))
    assert "outdoor_seating" not in filled.poi("P1").attributes


def test_category_mapping_on_the_real_yelp_list_keeps_hotels_and_attractions() -> None:
    path = shared_path("yelp", "yelp_academic_dataset_business.json")
    lodging = {"hotels", "bed & breakfast", "resorts"}
    sights = {"museums", "art galleries", "parks", "walking tours", "historical tours", "amusement parks"}
    not_sights = next(r.none_of for r in CATEGORY_RULES if r.poi_type == "attraction")  # shops, salons
    counts: dict[str | None, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        cats = split_categories(obj.get("categories"))
        kind = classify(cats, name=obj.get("name"))
        counts[kind] = counts.get(kind, 0) + 1
        low = {c.lower() for c in cats}
        if low & lodging and "rest stops" not in low and "restaurants" not in low:
            assert kind == "hotel", cats
        elif low & sights and "restaurants" not in low and not low & not_sights:
            assert kind == "attraction", cats
        if low <= {"hotels & travel", "car rental", "airport shuttles", "transportation"}:
            assert kind is None, cats  # Yelp's travel parent alone is not a hotel
    assert counts["hotel"] >= 20 and counts["attraction"] >= 40 and counts["restaurant"] >= 300
