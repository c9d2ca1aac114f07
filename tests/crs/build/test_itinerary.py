"""Multi-type itinerary dialogues: legs with their own pools, gold, constraints and anchors."""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import BuildConfig, build_dialogues
from groundtrace.crs.build.itinerary import itinerary_cities, itinerary_types
from groundtrace.crs.build.planner import PlanContext
from groundtrace.crs.build.qc import check_dialogue
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.kb.constraints import satisfies_all
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

pytestmark = pytest.mark.slow  # one 40-dialogue build on a 120-POI demo KB (~10 s)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return generate_demo_kb(3, n_per_type=40, reviews_per_poi=6)


@pytest.fixture(scope="module")
def built(kb: KnowledgeBase) -> tuple[list[Dialogue], object]:
    config = BuildConfig()
    config.plan.itinerary_share = 0.5
    return build_dialogues(kb, 40, 5, config=config)


def test_itineraries_are_built_and_reported(built) -> None:
    dialogues, report = built
    itineraries = [d for d in dialogues if d.legs]
    assert report.dropped == 0 and 10 <= len(itineraries) <= 30
    cov = report.coverage["itinerary"]
    assert cov["dialogues"] == len(itineraries) and cov["cities"] == ["Lumen Bay"]
    assert set(cov["sequences"]) <= {"hotel > restaurant > attraction", "hotel > attraction > restaurant"}
    legs = report.coverage["leg_types"]
    assert sum(legs.values()) == len(dialogues) + 2 * len(itineraries)


def test_every_leg_has_its_own_pool_gold_and_anchor(built, kb: KnowledgeBase) -> None:
    for d in (d for d in built[0] if d.legs):
        assert d.legs[0].poi_type == "hotel" == d.poi_type
        assert d.legs[0].anchor is None and d.candidates == d.legs[0].candidates
        picks = []
        for leg in d.legs:
            assert len(leg.candidates) == 8
            assert {kb.poi(p).poi_type for p in leg.candidates} == {leg.poi_type}
            turns = [t for t in d.recommendation_turns() if d.leg_at(t.index) is leg]
            assert turns, "every leg recommends"
            for t in turns:
                assert t.gold.gold_poi in leg.candidates
                assert kb.poi(t.gold.gold_poi).poi_type == leg.poi_type
                assert satisfies_all(kb.poi(t.gold.gold_poi), t.gold.active_constraints, leg.anchor)
                # the city has 40 of each type, fewer than 50: the pool holds all 40, widened to 50
                same = [p for p in t.gold.open_pool if kb.poi(p).poi_type == leg.poi_type]
                assert len(same) == 40 and len(t.gold.open_pool) == 50
            if picks:  # a later leg is near the previous pick, which is its anchor
                prev = kb.poi(picks[-1])
                assert (leg.anchor.lat, leg.anchor.lon) == (prev.lat, prev.lon)
                radius = next(
                    c.value for c in d.turns[leg.first_turn].constraints_added if c.kind == "max_distance_km"
                )
                final = kb.poi(turns[-1].gold.gold_poi)
                assert haversine_km(prev.lat, prev.lon, final.lat, final.lon) <= float(radius)
            picks.append(turns[-1].gold.gold_poi)
        assert check_dialogue(d, kb) == []


def test_the_rejection_of_an_itinerary_sits_in_its_second_leg(built) -> None:
    with_rejection = [d for d in built[0] if d.legs and d.has_rejection]
    assert with_rejection
    for d in with_rejection:
        reject = next(t for t in d.turns if t.act == "reject_and_refine")
        assert d.leg_at(reject.index) is d.legs[1]


def test_runner_inputs_follow_the_leg_of_each_turn(built, kb: KnowledgeBase) -> None:
    d = next(d for d in built[0] if d.legs)
    for turn, inp in system_inputs(d, kb, "closed"):
        leg = d.leg_at(turn.index)
        assert inp.poi_type == leg.poi_type
        assert [c.poi_id for c in inp.candidates] == leg.candidates
        assert inp.anchor == (leg.anchor.model_dump(mode="json") if leg.anchor else None)
        assert {r.poi_id for r in inp.reviews} <= set(leg.candidates)
    for turn, inp in system_inputs(d, kb, "open"):
        assert inp.poi_type == d.poi_type_at(turn.index)
        assert [c.poi_id for c in inp.candidates] == turn.gold.open_pool


def test_no_itinerary_without_a_city_of_two_full_types() -> None:
    small = generate_demo_kb(1, n_per_type=12, reviews_per_poi=4)
    only_restaurants = KnowledgeBase(
        [p for p in small.pois.values() if p.poi_type == "restaurant"],
        [r for r in small.reviews.values() if small.poi(r.poi_id).poi_type == "restaurant"],
        name="restaurants",
    )
    ctx = PlanContext(only_restaurants)
    assert itinerary_types(ctx, "Lumen Bay") == ["restaurant"] and itinerary_cities(ctx) == []
    config = BuildConfig()
    config.plan.itinerary_share = 1.0
    dialogues, report = build_dialogues(only_restaurants, 3, 0, config=config)
    assert dialogues and not any(d.legs for d in dialogues)
    assert "no city of the KB has 8+ POIs of two types" in report.coverage["itinerary"]["why_none"]
