"""The dialogue state tracker: constraints from user turns, rejection memory, negative preferences."""

from __future__ import annotations

from groundtrace.crs.systems.predictions import CandidateCard, HistoryTurn, SystemInput
from groundtrace.crs.systems.toolkit.state import parse_constraints, track_state


def _card(pid: str, name: str, cats: list[str]) -> CandidateCard:
    return CandidateCard(
        poi_id=pid, name=name, city="X", poi_type="restaurant", categories=cats, stars=4.0, lat=0, lon=0
    )


CARDS = [_card("a", "Blue Sushi", ["Restaurants", "Sushi Bars"]), _card("b", "Casa Roma", ["Italian"])]


def _kinds(cs) -> set[tuple[str, str]]:
    return {(c.kind, str(c.value)) for c in cs}


def test_phrases_keywords_and_categories() -> None:
    got = _kinds(
        parse_constraints("Looking for sushi, calm and quiet, with free wifi, nothing above $$", CARDS)
    )
    assert {("noise_max", "quiet"), ("amenity", "wifi"), ("price_max", "2"), ("cuisine", "Sushi Bars")} <= got
    assert ("cuisine", "Italian") not in got
    assert parse_constraints("", CARDS) == []
    assert _kinds(parse_constraints("somewhere within 1.5 km please")) == {("max_distance_km", "1.5")}


def test_rejection_memory_and_dropped_constraints() -> None:
    history = [
        HistoryTurn(role="user", act="request", text="Any Italian place? Kid friendly."),
        HistoryTurn(role="system", act="recommend", text="I recommend Casa Roma."),
        HistoryTurn(
            role="user",
            act="reject_and_refine",
            text="I'll pass on Casa Roma; I'm not really in the mood for Italian. What else, ideally sushi?",
        ),
    ]
    inp = SystemInput(
        dialogue_id="d",
        turn_index=3,
        setting="closed",
        city="X",
        poi_type="restaurant",
        history=history,
        candidates=CARDS,
        reviews=[],
    )
    state = track_state(inp)
    assert state.rejected == {"b"}
    active = _kinds(state.constraints)
    assert ("cuisine", "Sushi Bars") in active and ("amenity", "good_for_kids") in active
    assert ("cuisine", "Italian") not in active and _kinds(state.dropped) == {("cuisine", "Italian")}
    assert "Casa Roma" not in state.negative_text and "mood" in state.negative_text
    assert "sushi" in state.positive_text
