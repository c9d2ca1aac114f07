"""Price levels learned from the KB's own priced POIs (``crs/kb/price.py``): filled only when measured
better than the majority level and sure enough, marked ``inferred``, never over Yelp's level."""

from __future__ import annotations

import random

import pytest

from groundtrace.crs.kb import price
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.mining import EVIDENCE_KEY, fill_from_reviews
from groundtrace.crs.kb.stance import SentenceStance, split_sentences
from groundtrace.crs.schema import POI, Review

WORDS = {  # what a review of each level talks about, plus words every level shares
    1: ["tacos for $6", "cheap eats", "paper plates", "counter service", "a $4 coffee", "food truck vibe"],
    2: [
        "entrees around $18",
        "solid brunch",
        "friendly servers",
        "cozy booths",
        "a $12 burger",
        "craft beer",
    ],
    3: [
        "tasting menu at $95",
        "white tablecloth",
        "sommelier pairing",
        "a $48 steak",
        "valet out front",
        "fine",
    ],
}
SHARED = ["we went on a Friday", "the place was busy", "my friend ordered", "we will come back"]


def _text(rng: random.Random, level: int | None, signal: bool) -> str:
    own = WORDS[min(level, 3)] if (signal and level is not None) else WORDS[rng.choice((1, 2, 3))]
    parts = rng.sample(own, 3) + rng.sample(SHARED, 2)
    return ". ".join(p.capitalize() for p in parts) + "."


def _kb(levels: list[int | None], *, signal: bool = True, seed: int = 0) -> KnowledgeBase:
    rng = random.Random(seed)
    pois, reviews = [], []
    for i, level in enumerate(levels):
        pid = f"P{i:03d}"
        pois.append(
            POI(
                poi_id=pid,
                name=pid,
                city="X",
                poi_type="restaurant",
                lat=0,
                lon=0,
                stars=4,
                review_count=3,
                price_level=level,
            )
        )
        for j in range(3):  # the unlabelled POIs of the tests below are cheap places
            text = _text(rng, level if level is not None else 1, signal)
            reviews.append(Review(review_id=f"{pid}-{j}", poi_id=pid, stars=4, text=text))
    kb = KnowledgeBase(pois, reviews)
    kb.set_stances(
        {
            r.review_id: [
                SentenceStance(r.review_id, s, e, ("overall",), 0, 0.0) for s, e in split_sentences(r.text)
            ]
            for r in reviews
        },
        "by-hand",
    )
    return kb


LABELLED = [1] * 25 + [2] * 40 + [3] * 15 + [4] * 5


def test_missing_levels_are_filled_from_the_text_and_marked_inferred() -> None:
    kb = _kb(LABELLED + [None, None, None])
    out, total = price.infer_missing_prices(kb)
    report = total["by_type"]["restaurant"]
    assert report["labelled"] == 85 and report["missing"] == total["missing"] == 3
    assert report["cross_validated"]["accuracy"] > report["majority_baseline"]["accuracy"] + price.MIN_GAIN
    assert report["floor"] is not None and total["filled"] == 3 and report["filled_levels"] == {"1": 3}
    for pid in ("P085", "P086", "P087"):
        poi = out.pois[pid]
        assert poi.price_level == 1 and price.is_inferred(poi)
        assert poi.attributes[EVIDENCE_KEY]["price_level"][0].startswith("inferred p=")
    # Yelp's own levels are never touched and never count as inferred
    assert all(out.pois[p].price_level == kb.pois[p].price_level for p in kb.pois if kb.pois[p].price_level)
    assert not any(price.is_inferred(out.pois[p]) for p in kb.pois if kb.pois[p].price_level)


def test_text_without_price_signal_fills_nothing_and_says_why() -> None:
    kb = _kb(LABELLED + [None], signal=False)
    out, total = price.infer_missing_prices(kb)
    report = total["by_type"]["restaurant"]
    assert total["filled"] == report["filled"] == 0 and out is kb
    assert "majority baseline" in report["why_not"] or "confidence floor" in report["why_not"]
    assert out.pois["P085"].price_level is None


@pytest.mark.parametrize(
    ("levels", "why"),
    [
        ([1] * 20 + [2] * 20 + [None], "at least 60"),
        ([2] * 70 + [1] * 3 + [None], "fewer than two price levels"),
    ],
)
def test_too_few_labelled_pois_fill_nothing(levels: list[int | None], why: str) -> None:
    out, report = price.infer_missing_prices(_kb(levels))
    assert report["filled"] == 0 and why in report["by_type"]["restaurant"]["why_not"]
    assert all(p.price_level is None for p in out.pois.values() if p.poi_id == f"P{len(levels) - 1:03d}")


def test_fill_from_reviews_reports_the_price_model() -> None:
    out, report = fill_from_reviews(_kb(LABELLED + [None]))
    assert report["price_inferred"]["filled"] == 1 and report["filled"]["price_level"] == 1
    assert out.pois["P085"].price_level == 1
    _, off = fill_from_reviews(_kb(LABELLED + [None]), infer_prices=False)
    assert "price_inferred" not in off and "price_level" not in off["filled"]


def test_menu_prices_and_price_words_are_read() -> None:
    none = price.price_signals("Lovely spot, we will come back.")
    assert none[:5] == [0.0] * 5
    cheap = price.price_signals("Tacos were $3 and $5, cheap and good.")
    dear = price.price_signals("The steak was $48 and the wine $ 60.50, pricey.")
    assert cheap[0] == dear[0] == 1.0
    assert dear[1] > cheap[1] and dear[4] == 1.0 and cheap[4] == 0.0
    assert cheap[5] > 0 and dear[6] > 0


def test_scores_of_a_known_answer() -> None:
    assert price.scores([1, 2, 3, 3], [1, 2, 2, 1]) == {
        "accuracy": 0.5,
        "macro_f1": 0.444,
        "within_one": 0.75,
    }


def test_a_type_is_priced_only_from_its_own_type() -> None:
    """A hotel without a level is not priced by a model of restaurants (which fills a restaurant)."""
    kb = _kb(LABELLED + [None, None])
    pois = [p.model_copy(update={"poi_type": "hotel"}) if p.poi_id == "P086" else p for p in kb.pois.values()]
    mixed = KnowledgeBase(pois, kb.reviews.values())
    mixed.set_stances(kb.stances, "by-hand")
    out, report = price.infer_missing_prices(mixed)
    assert out.pois["P085"].price_level == 1 and out.pois["P086"].price_level is None
    assert report["filled"] == 1 and report["missing"] == 2
    assert (
        report["by_type"]["hotel"]["labelled"] == 0 and "at least 60" in report["by_type"]["hotel"]["why_not"]
    )
