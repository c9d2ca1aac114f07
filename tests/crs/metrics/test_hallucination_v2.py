"""hallucinated_attribute_rate v2, by hand on the 5-POI fixture KB (tests/crs/metrics/conftest.py): a claim
is judged against the POI it is claimed of (named last before it, else the top-1), a recorded KB attribute
that contradicts the term makes it false even when a review uses the word, and words inside counted quotes
are the reviewer's. The slow reference (metrics/reference.py) must agree on every answer."""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.metrics.reference import reference_turn_values
from groundtrace.crs.schema import POI, Dialogue, Review, ReviewRef, Turn, TurnGold
from groundtrace.crs.systems.predictions import Prediction


def _har(dialogues, kb, response: str, ranking: list[str], refs=None) -> tuple[float, float]:
    d2 = next(d for d in dialogues if d.dialogue_id == "d2")
    if refs is not None:
        d2 = d2.model_copy(update={"review_refs": refs})
    pred = Prediction(dialogue_id="d2", turn_index=1, ranking=ranking, response=response)
    table = score_predictions([d2], [pred], kb, metrics=["hallucinated_attribute_rate"])
    user = " ".join(t.text for t in d2.turns[:1] if t.role == "user")
    ref = reference_turn_values(response, ranking, d2.review_refs, kb, load_lexicon(), user)
    return table.turns[0].values["hallucinated_attribute_rate"], ref["hallucinated_attribute_rate"]


@pytest.mark.parametrize(
    ("response", "ranking", "expected", "v1"),
    [
        # P3 Taco Loco (noise loud, no wifi recorded, reviews never say wifi) is named; P4 (rank 2) is quiet
        # with free wifi. v1 took support from any POI of the top-3: 0. v2: quiet false (loud recorded),
        # wifi false (no review names it) -> 2/2
        ("Taco Loco is quiet and has free wifi.", ["P3", "P4"], 1.0, 0.0),
        # "quiet" claimed of Trattoria Roma (named last before it): true -> 0
        ("Compared with Taco Loco, Trattoria Roma is quiet.", ["P4", "P3"], 0.0, 0.0),
        # "Trattoria" is part of a POI's name, no claim; "quiet" claimed of Taco Loco (named last before it):
        # false -> 1/1 (v1: 0 of 2, P4 is quiet)
        ("Trattoria Roma beats Taco Loco, which is quiet.", ["P4", "P3"], 1.0, 0.0),
        # "Sushi" is part of the name Sakura Sushi, no claim; "elegant" inside a counted quote is the
        # reviewer's word; "romantic": P2's ambience (upscale, classy) is recorded and says otherwise -> 1/1
        # (v1: 1/3)
        ('Try Sakura Sushi: "the room feels elegant" [R3] and it is romantic.', ["P2"], 1.0, 1 / 3),
        # "Greek": a category label of Olive Grove (Mediterranean, Greek)
        ("Olive Grove is Greek.", ["P1"], 0.0, 0.0),
    ],
)
def test_claims_are_judged_against_their_poi(dialogues, kb, response, ranking, expected, v1) -> None:
    fast, ref = _har(dialogues, kb, response, ranking)
    assert fast == pytest.approx(expected) and ref == pytest.approx(expected)


def test_a_recorded_attribute_beats_a_review_word() -> None:
    # Rose Bar's noise is recorded as loud; a review says "quiet" (negated). v1: the review word supports
    # "quiet" (0.0); v2: the KB contradicts it -> 1.0. "lively" is no lexicon term.
    poi = POI(poi_id="P9", name="Rose Bar", city="Tucson", poi_type="restaurant", lat=32.2, lon=-110.95,
              stars=4.0, review_count=1, categories=["Bars"], attributes={"noise": "loud"})  # fmt: skip
    kb = KnowledgeBase(
        [poi], [Review(review_id="W1", poi_id="P9", stars=4.0, text="Not quiet at all, but fun.")]
    )
    refs = {"R1": ReviewRef(review_id="W1", poi_id="P9")}
    response = "Rose Bar is quiet."
    assert (
        reference_turn_values(response, ["P9"], refs, kb, load_lexicon())["hallucinated_attribute_rate"]
        == 1.0
    )
    d = Dialogue(
        dialogue_id="h", city="Tucson", poi_type="restaurant", persona_id="p", persona="x", candidates=["P9"],
        review_refs=refs,
        turns=[
            Turn(index=0, role="user", act="request", text="A bar?"),
            Turn(index=1, role="system", act="recommend", text="Rose Bar.", recommended=["P9"],
                 gold=TurnGold(gold_poi="P9", open_pool=["P9"])),
        ],
    )  # fmt: skip
    pred = Prediction(dialogue_id="h", turn_index=1, ranking=["P9"], response=response)
    table = score_predictions([d], [pred], kb, metrics=["hallucinated_attribute_rate"])
    assert table.aggregate["hallucinated_attribute_rate"] == 1.0
    assert table.to_dict()["metric_versions"] == {"hallucinated_attribute_rate": 2}


def test_a_category_label_beats_a_recorded_attribute() -> None:
    # good_for_meal is recorded as [lunch, dinner], yet the category "Breakfast & Brunch" names breakfast and
    # brunch: the label is KB data too, so both are true (a review word alone would not beat the attribute)
    poi = POI(poi_id="P9", name="Egg Cafe", city="Tampa", poi_type="restaurant", lat=28.0, lon=-82.4,
              stars=4.0, review_count=1, categories=["Breakfast & Brunch"],
              attributes={"good_for_meal": ["lunch", "dinner"]})  # fmt: skip
    kb = KnowledgeBase(
        [poi], [Review(review_id="W1", poi_id="P9", stars=4.0, text="Good eggs, fast service.")]
    )
    refs = {"R1": ReviewRef(review_id="W1", poi_id="P9")}
    ref = reference_turn_values("Try it for breakfast or brunch.", ["P9"], refs, kb, load_lexicon())
    assert ref["hallucinated_attribute_rate"] == 0.0
