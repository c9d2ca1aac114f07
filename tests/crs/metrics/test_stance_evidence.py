"""evidence_support and constraint_evidence (v2: support_judge, claim attachment, precision x coverage),
hand-computed on a two-POI KB with stances set by hand.

ES = P x 1[a supporting good quote is attached to the top-1]; CE = P x (covered constraints / review
constraints); P = good quotes / (quoted citations + bare tag groups + unresolved tags)."""

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


def _dialogue(constraints: list[Constraint], act: str = "recommend") -> Dialogue:
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
                act=act,
                text="Olive Grove.",
                recommended=["P1"],
                gold=TurnGold(gold_poi="P1", open_pool=["P1", "P2"], active_constraints=constraints),
            ),
        ],
    )


def _score(
    response: str,
    constraints: list[Constraint],
    ranking: tuple[str, ...] = ("P1", "P2"),
    act: str = "recommend",
):
    pred = Prediction(dialogue_id="d1", turn_index=1, system="s", response=response, ranking=list(ranking))
    table = score_predictions(
        [_dialogue(constraints, act)], [pred], _kb(), metrics=["evidence_support", "constraint_evidence"]
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
    # P = 1/2; ES = 1/2 x 1/1 = 0.5; CE = 1/2 x (outdoor covered, parking not: 1/2) = 0.25 (v1: 0.5, 0.5)
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1]. Also "Parking was a nightmare every time." [R1]'
    )
    assert _score(response, [OUTDOOR, PARKING]) == (0.5, 0.25)


def test_the_same_negative_quote_as_a_warning_supports_but_covers_nothing() -> None:
    # the warning is negative, introduced as one and about an active constraint (parking): a good quote, so
    # P = 2/2 and ES = 1 x 1/1; CE: a warning never covers a constraint = 1 x 1/2
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


def test_a_quote_supports_only_the_poi_it_is_attached_to() -> None:
    # top-1 is P2 (a recommend turn: every quote is attached to it). Quote 1 is a review of P1 (rank 2): it
    # supports nothing here (v1 counted it: ES 0.5); quote 2 (P2, cocktails) addresses no constraint.
    # P = 0/2 -> ES = 0, CE = 0
    response = 'Try Sakura. "The patio is lovely at sunset." [R1] "Great cocktails though." [R3]'
    assert _score(response, [OUTDOOR], ranking=("P2", "P1")) == (0.0, 0.0)


def test_no_quote_scores_zero_not_not_applicable() -> None:
    # v1 left the turn out of the mean (a silent system lost nothing); v2: ES = 0
    pred = Prediction(dialogue_id="d1", turn_index=1, system="s", response="Olive Grove.", ranking=["P1"])
    table = score_predictions(
        [_dialogue([OUTDOOR])], [pred], _kb(), metrics=["evidence_support", "constraint_evidence"]
    )
    assert table.aggregate["evidence_support"] == 0.0
    assert table.counts["evidence_support"].not_applicable == 0
    assert table.aggregate["constraint_evidence"] == 0.0


def test_compare_turn_attaches_each_quote_to_the_poi_named_before_it() -> None:
    # compare, no constraint: claimed = P1 (top-1) and P2 (named). Each quote is attached to the POI named
    # last before it and quotes that POI's review: P = 2/2, the top-1 backed: ES = 1
    right = (
        'Olive Grove or Sakura. For Sakura: "Great cocktails though." [R3]. '
        'For Olive Grove: "The patio is lovely at sunset." [R1].'
    )
    assert _score(right, [], act="compare")[0] == 1.0
    # the same quotes under the other POI's name: neither is good -> ES = 0
    swapped = (
        'Olive Grove or Sakura. For Olive Grove: "Great cocktails though." [R3]. '
        'For Sakura: "The patio is lovely at sunset." [R1].'
    )
    assert _score(swapped, [], act="compare")[0] == 0.0
    # only the other POI's quote: P = 1/1 but the top-1 (P1) is not backed: ES = 0
    other = 'Olive Grove or Sakura. For Sakura: "Great cocktails though." [R3].'
    assert _score(other, [], act="compare")[0] == 0.0


@pytest.mark.parametrize(
    "response",
    [
        'Some claim "The patio is lovely at sunset." [R1], which is simply false.',
        'Olive Grove is far from "The patio is lovely at sunset." [R1].',
        'Contrary to "The patio is lovely at sunset." [R1], skip it.',
        'It\'s a myth that "The patio is lovely at sunset." [R1].',
        'It is n\u200dot "The patio is lovely at sunset." [R1].',
        'It is n\u043et "The patio is lovely at sunset." [R1].',
        'It is \uff4e\uff4f\uff54 "The patio is lovely at sunset." [R1].',
    ],
)
def test_a_reframed_quote_supports_nothing(response: str) -> None:
    # the only quote is reversed by its frame (after the tag too, after Unicode folding): P = 0
    assert _score(response, [OUTDOOR]) == (0.0, 0.0)


def test_a_quote_spanning_two_sentences_supports_nothing() -> None:
    # positive sentence + the negative one after it as one quote: in no single sentence -> P = 0
    response = 'Olive Grove: "The patio is lovely at sunset. Parking was a nightmare every time." [R1].'
    assert _score(response, [OUTDOOR]) == (0.0, 0.0)


def test_unsupported_citations_lower_precision() -> None:
    # one supporting quote + one made-up quote + one bare tag group: P = 1/3; ES = 1/3 x 1; CE = 1/3 x 1
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1]. "Free valet parking and a rooftop pool." [R1]. '
        "It has a sea view [R2]."
    )
    es, ce = _score(response, [OUTDOOR])
    assert es == pytest.approx(1 / 3) and ce == pytest.approx(1 / 3)


def test_a_warning_off_the_requested_aspects_is_not_good() -> None:
    # the parking warning is valid as a warning but parking was not asked for: P = 1/2 -> ES = 0.5, CE = 0.5
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1]. '
        'One reviewer warns: "Parking was a nightmare every time." [R1]'
    )
    assert _score(response, [OUTDOOR]) == (0.5, 0.5)


def test_a_sentence_dump_scores_its_share_of_on_topic_sentences() -> None:
    # all four sentences of P1's reviews, constraints outdoor + quiet: good = patio, quiet (2 of 4), so
    # P = 1/2; both constraints covered: ES = 1/2 x 1, CE = 1/2 x 2/2
    response = (
        'Olive Grove: "The patio is lovely at sunset." [R1] "Parking was a nightmare every time." [R1] '
        '"Quiet enough to talk over dinner." [R2] "We went on a Tuesday evening." [R2]'
    )
    assert _score(response, [OUTDOOR, QUIET]) == (0.5, 0.5)


def test_scores_json_records_the_metric_versions() -> None:
    pred = Prediction(dialogue_id="d1", turn_index=1, system="s", response="Olive Grove.", ranking=["P1"])
    table = score_predictions([_dialogue([OUTDOOR])], [pred], _kb(), metrics=["es", "ce", "gs"])
    assert table.to_dict()["metric_versions"] == {"evidence_support": 2, "constraint_evidence": 2, "gs": 1}


@pytest.mark.parametrize("name", ["evidence_support", "constraint_evidence"])
def test_missing_prediction_scores_zero(name: str) -> None:
    table = score_predictions([_dialogue([OUTDOOR])], [], _kb(), metrics=[name])
    assert table.aggregate[name] == 0.0


def test_card_constraints_accept_general_support_alone() -> None:
    # distance and stars are stated by the POI card: with no other constraint, a non-negative quote of the
    # top-1 supports (P = 1, ES = 1; CE not applicable); next to a review constraint it must address one
    near = Constraint(kind="max_distance_km", value=3.0, label="nearby")
    quote = 'Olive Grove: "We went on a Tuesday evening." [R2].'
    assert _score(quote, [near]) == (1.0, None)
    assert _score(quote, [near, OUTDOOR]) == (0.0, 0.0)


def _rejecting_dialogue() -> Dialogue:
    base = _dialogue([])
    gold = TurnGold(gold_poi="P1", open_pool=["P1", "P2"], active_constraints=[])
    turns = [
        *base.turns,
        Turn(index=2, role="user", act="reject_and_refine", text="Not Sakura, please.", rejected=["P2"]),
        Turn(index=3, role="system", act="recommend", text="Olive Grove.", recommended=["P1"], gold=gold),
    ]
    return base.model_copy(update={"turns": turns})


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        # the quote follows the rejected Sakura's name: attached to Sakura, which is not claimed -> P = 0
        ('I\'d recommend Sakura again. "Great cocktails though." [R3].', 0.0),
        # a quote of the top-1 after the rejected POI's name is attached to the rejected POI too -> 0
        ('I\'d recommend Sakura again. "The patio is lovely at sunset." [R1].', 0.0),
        # named top-1, its own quote: P = 1, supported -> 1
        ('I\'d recommend Olive Grove. "The patio is lovely at sunset." [R1].', 1.0),
    ],
)
def test_a_quote_after_a_rejected_poi_name_is_attached_to_it(response: str, expected: float) -> None:
    preds = [
        Prediction(dialogue_id="d1", turn_index=1, response="Olive Grove.", ranking=["P1", "P2"]),
        Prediction(dialogue_id="d1", turn_index=3, response=response, ranking=["P1", "P2"]),
    ]
    table = score_predictions([_rejecting_dialogue()], preds, _kb(), metrics=["evidence_support"])
    assert {t.turn_index: t.values["evidence_support"] for t in table.turns} == {1: 0.0, 3: expected}
