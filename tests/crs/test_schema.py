"""Itinerary legs on the dialogue record: per-turn POI type, closed pool and anchor."""

from __future__ import annotations

from groundtrace.crs.dataset.files import dialogue_line
from groundtrace.crs.schema import Anchor, Dialogue, Leg, Turn


def _dialogue(legs: list[Leg]) -> Dialogue:
    turns = [
        Turn(index=i, role="user" if i % 2 == 0 else "system", act="request", text="t") for i in range(6)
    ]
    return Dialogue(
        dialogue_id="d",
        city="C",
        poi_type="hotel",
        persona_id="p",
        persona="A persona line.",
        candidates=["h1", "h2"],
        turns=turns,
        legs=legs,
    )


def test_turn_values_come_from_the_leg_it_belongs_to() -> None:
    hotel_pick = Anchor(name="Hotel One", lat=1.0, lon=2.0)
    legs = [
        Leg(poi_type="hotel", first_turn=0, candidates=["h1", "h2"]),
        Leg(poi_type="restaurant", first_turn=2, candidates=["r1", "r2"], anchor=hotel_pick),
        Leg(poi_type="attraction", first_turn=4, candidates=["a1", "h1"]),
    ]
    d = _dialogue(legs)
    assert [d.poi_type_at(i) for i in range(6)] == ["hotel"] * 2 + ["restaurant"] * 2 + ["attraction"] * 2
    assert d.candidates_at(3) == ["r1", "r2"] and d.anchor_at(3) == hotel_pick and d.anchor_at(1) is None
    assert d.all_candidates() == ["h1", "h2", "r1", "r2", "a1"]
    assert d.leg_at(5) is legs[2]


def test_a_dialogue_without_legs_answers_its_own_fields() -> None:
    d = _dialogue([])
    assert d.leg_at(3) is None
    assert d.poi_type_at(3) == "hotel" and d.candidates_at(3) == ["h1", "h2"] and d.anchor_at(3) is None
    assert d.all_candidates() == ["h1", "h2"]


def test_legs_are_always_serialised() -> None:
    # format v2: every record has every field (one JSON type per column), so an empty list is written
    assert '"legs":[]' in dialogue_line(_dialogue([]))
    line = dialogue_line(_dialogue([Leg(poi_type="hotel", first_turn=0, candidates=["h1"])]))
    assert '"legs":[{"poi_type":"hotel","first_turn":0' in line
    assert Dialogue.model_validate_json(line).legs[0].candidates == ["h1"]
