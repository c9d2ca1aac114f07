"""evidence_support and constraint_evidence, hand-computed on a two-POI KB with stances set by hand."""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.stance import SentenceStance, split_sentences
from groundtrace.crs.schema import POI, Constraint, Dialogue, Review, ReviewRef, Turn, TurnGold
from groundtrace.crs.systems.predictions import Prediction

#: review id -> (POI, text, polarity of each sentence in order)
REVIEWS = {
    "V1": ("P1", "The patio is lovely at sunset. Parking was a nightmare every time.", (1, -1)),
    "V2": ("P1", "Quiet enough to talk over dinner. We went on a Tuesday evening.", (1, 0)),
    "V3": ("P2", "The patio here is tiny and cramped. Great cocktails though.", (-1, 1)),
}
OUTDOOR = Constraint(kind="amenity", value="outdoor_seating", label="with outdoor seating")
QUIET = Constraint(kind="noise_max", value="quiet", label="somewhere quiet")
PARKING = Constraint(kind="amenity", value="parking", label="with parking")


def _kb() -> KnowledgeBase:
    pois = [
        POI(poi_id=p, name=n, city="X", poi_type="restaurant", lat=0.0, lon=0.0, stars=4.0, review_count=2)
        for p, n in (("P1", "Olive Grove"), ("P2", "Sakura"))
    ]
    reviews = [Review(review_id=r, poi_id=p, stars=4, text=t) for r, (p, t, _) in REVIEWS.items()]
    kb = KnowledgeBase(pois, reviews, name="stance-metrics")
    stances = {}
    for rid, (_, text, polarities) in REVIEWS.items():
        spans = split_sentences(text)
        assert len(spans) == len(polarities)
        stances[rid] = [
            SentenceStance(rid, s, e, ("overall",), p, float(p))
            for (s, e), p in zip(spans, polarities, strict=True)
        ]
    kb.set_stances(stances, "by-hand")
    return kb


def _dialogue(constraints: list[Constraint]) -> Dialogue:
    refs = {"R1": ("V1", "P1"), "R2": ("V2", "P1"), "R3": ("V3", "P2")}
    return Dialogue(
        dialogue_id="d1",
        city="X",
        poi_type="restaurant",
        persona_id="p",
        persona="someone testing",
        candidates=["P1", "P2"],
        review_refs={t: ReviewRef(review_id=r, poi_id=p) for t, (r, p) in refs.items()},
        turns=[
            Turn(index=0, role="user", act="request", text="Hi", constraints_added=constraints),
            Turn(
                index=1,
                role="system",
                act="recommend",
                text="Olive Grove.",
                recommended=["P1"],
                gold=TurnGold(gold_poi="P1", open_pool=["P1", "P2"], active_constraints=constraints),
            ),
        ],
    )


def _score(response: str, constraints: list[Constraint], ranking: tuple[str, ...] = ("P1", "P2")):
    pred = Prediction(dialogue_id="d1", turn_index=1, system="s", response=response, ranking=list(ranking))
    table = score_predictions(
        [_dialogue(constraints)], [pred], _kb(), metrics=["evidence_support", "constraint_evidence"]
    )
    return table.aggregate["evidence_support"], table.aggregate["constraint_evidence"]


def test_supporting_quotes_on_the_constraints_score_one() -> None:
    # 2 quotes, both positive and each addressing one constraint: ES = 2/2; both constraints covered: CE = 2/2
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1] and "Quiet enough to talk over dinner." [R2]'
    )
    assert _score(response, [OUTDOOR, QUIET]) == (1.0, 1.0)


def test_a_negative_quote_in_support_does_not_count() -> None:
    # quote 1 positive on outdoor (supports), quote 2 negative on parking without a warning cue (does not):
    # ES = 1/2; CE: outdoor covered, parking not (negative) = 1/2
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1]. Also "Parking was a nightmare every time." [R1]'
    )
    assert _score(response, [OUTDOOR, PARKING]) == (0.5, 0.5)


def test_the_same_negative_quote_as_a_warning_supports_but_covers_nothing() -> None:
    # the warning is negative and introduced as one: ES = 2/2; CE: a warning never covers a constraint = 1/2
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1]. '
        'One reviewer warns: "Parking was a nightmare every time." [R1]'
    )
    assert _score(response, [OUTDOOR, PARKING]) == (1.0, 0.5)


def test_off_topic_and_other_poi_quotes_do_not_support() -> None:
    # quote 1 neutral but about nothing the user asked (not addressing): no; quote 2 is a review of P2,
    # which is recommended (top-3) but negative and not a warning: no. ES = 0/2, CE = 0/1
    response = (
        'Olive Grove: "We went on a Tuesday evening." [R2] and "The patio here is tiny and cramped." [R3]'
    )
    assert _score(response, [OUTDOOR]) == (0.0, 0.0)


def test_constraint_evidence_reads_only_the_top1() -> None:
    # top-1 is P2: its positive cocktail quote addresses no constraint; P1's patio quote is not top-1's.
    # ES: quote 1 (P1, recommended in top-3, positive, addresses outdoor) = yes; quote 2 no -> 1/2. CE = 0/1
    response = 'Try Sakura. "The patio is lovely at sunset." [R1] "Great cocktails though." [R3]'
    assert _score(response, [OUTDOOR], ranking=("P2", "P1")) == (0.5, 0.0)


def test_no_quote_is_not_applicable_for_evidence_support() -> None:
    pred = Prediction(dialogue_id="d1", turn_index=1, system="s", response="Olive Grove.", ranking=["P1"])
    table = score_predictions(
        [_dialogue([OUTDOOR])], [pred], _kb(), metrics=["evidence_support", "constraint_evidence"]
    )
    assert table.aggregate["evidence_support"] is None
    assert table.aggregate["constraint_evidence"] == 0.0


@pytest.mark.parametrize("name", ["evidence_support", "constraint_evidence"])
def test_missing_prediction_scores_zero(name: str) -> None:
    table = score_predictions([_dialogue([OUTDOOR])], [], _kb(), metrics=[name])
    assert table.aggregate[name] == 0.0
