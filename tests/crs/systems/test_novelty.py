"""Repeat memory (toolkit.novelty): learned from a train split whether conversations move on to a new POI;
the state tracker's ``shown`` (POIs earlier system turns named) and the ranking order it gives."""

from __future__ import annotations

from types import SimpleNamespace

from groundtrace.crs.systems.baselines.lexical import TfidfSystem
from groundtrace.crs.systems.predictions import CandidateCard, HistoryTurn, SystemInput, TaggedReview
from groundtrace.crs.systems.toolkit.novelty import RepeatPolicy
from groundtrace.crs.systems.toolkit.state import named_in_order, track_state


def _card(pid: str, name: str) -> CandidateCard:
    return CandidateCard(
        poi_id=pid, name=name, city="X", poi_type="restaurant", categories=["Cafes"], stars=4.0, lat=0, lon=0
    )


CARDS = [_card("a", "Milk"), _card("b", "Milktooth"), _card("c", "Casa Roma"), _card("d", "Blue Door")]


def _turn(role: str, act: str, gold: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(role=role, act=act, gold=SimpleNamespace(gold_poi=gold) if gold else None)


def _dialogue(*turns: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(turns=list(turns))


def test_fit_counts_repeats_per_act_and_laplace_rate() -> None:
    moves_on = _dialogue(
        _turn("user", "request"),
        _turn("system", "recommend", "a"),
        _turn("user", "ask_comparison"),
        _turn("system", "compare", "b"),
        _turn("user", "ask_detail"),
        _turn("system", "explain"),  # no gold recommendation: not counted
        _turn("user", "provide_preference"),
        _turn("system", "recommend", "b"),  # the gold of an earlier turn: a repeat
    )
    policy = RepeatPolicy().fit([moves_on, SimpleNamespace(record_only=True)])
    assert policy.counts == {"ask_comparison": (1, 0), "provide_preference": (1, 1), "request": (1, 0)}
    assert policy.rate("ask_comparison") == 1 / 3  # (0 + 1) / (1 + 2)
    assert policy.rate("provide_preference") == 2 / 3
    assert policy.rate("never_seen") == (1 + 1) / (3 + 2)  # pooled: 3 turns, 1 repeat
    assert policy.avoids("ask_comparison") and not policy.avoids("provide_preference")
    assert policy.avoids("never_seen")  # 0.4 < 0.5
    assert policy.key() == "ask_comparison,request"


def test_order_moves_shown_behind_fresh_and_rejected_last() -> None:
    policy = RepeatPolicy(counts={"ask_comparison": (10, 0), "provide_preference": (10, 9)})
    ranking = ["a", "b", "c", "d"]
    assert policy.order(ranking, "ask_comparison", ["a", "c"], {"b"}) == ["d", "a", "c", "b"]
    # the train conversations repeat after this act: only the rejection memory applies
    assert policy.order(ranking, "provide_preference", ["a", "c"], {"b"}) == ["a", "c", "d", "b"]
    # unfitted: nothing learned, nothing changes but the rejection memory
    assert RepeatPolicy().order(ranking, "ask_comparison", ["a"], {"b"}) == ["a", "c", "d", "b"]
    assert RepeatPolicy().key() == ""


def test_named_in_order_is_word_bounded_and_in_text_order() -> None:
    text = "Another good option is Casa Roma. For Milktooth: the milk foam is great."
    assert named_in_order(text, CARDS) == ["c", "b"]  # neither "Milktooth" nor "milk foam" names "Milk"
    assert named_in_order("We loved Milk, and Blue Door too", CARDS) == ["a", "d"]


def _inp(history: list[HistoryTurn]) -> SystemInput:
    said = {"d": "Fine coffee here, the finest coffee in town."}
    reviews = [
        TaggedReview(
            tag=f"R{i}", poi_id=c.poi_id, review_id=f"r{i}", text=said.get(c.poi_id, "Good tea and cake.")
        )
        for i, c in enumerate(CARDS, 1)
    ]
    return SystemInput(
        dialogue_id="d", turn_index=len(history), setting="closed", city="X", poi_type="restaurant",
        history=history, candidates=CARDS, reviews=reviews,
    )  # fmt: skip


HISTORY = [
    HistoryTurn(role="user", act="request", text="A cafe with fine coffee please."),
    HistoryTurn(role="system", act="recommend", text="I recommend Blue Door."),
    HistoryTurn(role="user", act="ask_comparison", text="Could you compare Blue Door with another option?"),
]


def test_state_tracks_shown_and_the_act_answered() -> None:
    state = track_state(_inp(HISTORY))
    assert state.shown == ["d"] and state.act == "ask_comparison"
    assert track_state(_inp(HISTORY[:1])).shown == []


def test_a_system_moves_on_only_after_learning_that_users_do() -> None:
    system = TfidfSystem()
    before = system.respond(_inp(HISTORY)).ranking
    assert before[0] == "d"  # the best match, recommended before, is offered again by an unfitted memory
    train = [
        _dialogue(
            _turn("user", "request"),
            _turn("system", "recommend", "x"),
            _turn("user", "ask_comparison"),
            _turn("system", "compare", "y"),
        )
    ]
    system.repeat_policy.counts = RepeatPolicy().fit(train).counts
    after = system.respond(_inp(HISTORY)).ranking
    assert sorted(after) == sorted(before)
    assert after[-1] == "d" and [p for p in before if p != "d"] == after[:-1]
    assert system.understanding_config()["repeats"] == "ask_comparison,request"
