"""Good gold answers (floors, evidence backing), near misses, widened open pools and the coverage report."""

from __future__ import annotations

import random

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.build.evidence import EvidenceIndex
from groundtrace.crs.build.pools import build_closed_pool, build_open_pool
from groundtrace.crs.build.quality import QualityIndex, near_misses
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return generate_demo_kb(0)


@pytest.fixture(scope="module")
def built(kb: KnowledgeBase):
    return build_dialogues(kb, 80, 11)


def test_every_recommendation_is_above_the_floors_of_its_pool(kb: KnowledgeBase, built) -> None:
    dialogues: list[Dialogue] = built[0]
    quality = QualityIndex(kb, EvidenceIndex(kb, max_reviews_per_poi=10))
    assert any(d.legs for d in dialogues)  # itinerary legs are held to their own type's floors
    for d in dialogues:
        for t in d.recommendation_turns():
            star_floor, share_floor = quality.floors(d.city, d.poi_type_at(t.index))
            assert star_floor >= 3.0 and share_floor >= 0.3
            poi = kb.poi(t.gold.gold_poi)
            assert poi.poi_type == d.poi_type_at(t.index)
            assert poi.stars >= star_floor
            assert quality.evidence.positive_share(poi.poi_id) >= share_floor


def test_floors_are_relative_to_the_pool(kb: KnowledgeBase) -> None:
    quality = QualityIndex(kb, EvidenceIndex(kb))
    good = quality.good("Lumen Bay", "restaurant")
    everyone = {p.poi_id for p in kb.pois_in("Lumen Bay", "restaurant")}
    assert good and good < everyone  # some places are below the floors and never recommended
    worst = min(kb.pois_in("Lumen Bay", "restaurant"), key=lambda p: p.stars)
    assert worst.poi_id not in good


def test_near_misses_violate_exactly_one_constraint() -> None:
    a, b = frozenset({"x", "y"}), frozenset({"x", "z"})
    assert near_misses(["x", "y", "z", "w"], [a, b]) == ["y", "z"]  # x satisfies both, w neither


def test_closed_pool_takes_near_misses_first(kb: KnowledgeBase) -> None:
    ids = sorted(p.poi_id for p in kb.pois_in("Lumen Bay", "restaurant"))
    required, near = ids[:3], ids[10:12]
    pool = build_closed_pool(kb, ids, required, set(required), random.Random(0), near_misses=near)
    assert len(pool) == 8 and set(near) <= set(pool) and set(required) <= set(pool)


def test_open_pool_widens_a_small_city_in_the_given_order() -> None:
    city = [f"c{i}" for i in range(20)]
    widen = [f"n{i}" for i in range(100)]
    pool = build_open_pool(city, city[:8], random.Random(1), min_size=50, max_size=100, widen=widen)
    assert len(pool) == 50 and set(city) <= set(pool)
    assert set(pool) - set(city) == set(widen[:30])  # the nearest first
    # a city with enough POIs is never widened
    big = [f"c{i}" for i in range(70)]
    pool = build_open_pool(big, big[:8], random.Random(1), min_size=50, max_size=100, widen=widen)
    assert set(pool) <= set(big)


def test_build_report_coverage(built) -> None:
    report = built[1]
    cov = report.coverage
    assert cov["quotes"]["supporting_negative"] == 0
    assert cov["quotes"].get("warning_negative", 0) > 0
    assert cov["persona_constraint_share"] >= 0.9
    assert cov["open_pools"]["min_size"] >= 50 and cov["open_pools"]["below_min"] == 0
    assert cov["near_miss_share"] > 0.5
    assert sum(cov["types"].values()) == report.built
