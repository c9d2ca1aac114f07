"""The project's cheat suite (issue 23): every cheat of ``groundtrace.crs.metrics.cheats`` is a full run of
predictions on a small demo build, scored with the real scorer, and must score no better than the
``random`` reference system + 0.1 on ``evidence_support`` (the headline grounding metric) while the
``oracle`` system and the dataset's own answers keep >= 0.9. Targets of the issue's hidden suite are
pinned too: reframed or hidden-"not" quotes <= 0.3, a silent answer 0, a sentence dump CE <= 0.6, a
rejected POI recommended in the text counted as a repeat, false attributes of the top-1 counted.
"""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.metrics.cheats import CHEATS, make_cheats
from groundtrace.crs.systems.predictions import Prediction
from groundtrace.crs.systems.reference import OracleSystem, RandomSystem

METRICS = ["evidence_support", "constraint_evidence", "gs", "rejected_repeat", "hallucinated_attribute_rate"]
#: ES of every cheat must stay within this of the random system's
MARGIN = 0.1


@pytest.fixture(scope="session")
def cheat_scores() -> dict[str, dict[str, float | None]]:
    kb = generate_demo_kb(0)
    dialogues, _ = build_dialogues(kb, 30, 5)
    runs = make_cheats(dialogues, kb)
    for name, system, gold in (("oracle", OracleSystem(), True), ("random", RandomSystem(seed=0), False)):
        preds = []
        for d in dialogues:
            for turn, inp in system_inputs(d, kb, "closed"):
                out = system.respond(inp, turn.gold) if gold else system.respond(inp)
                preds.append(
                    Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, ranking=out.ranking,
                               response=out.response)
                )  # fmt: skip
        runs[name] = preds
    assert any(d.has_rejection for d in dialogues)
    return {
        name: score_predictions(dialogues, preds, kb, metrics=METRICS).aggregate
        for name, preds in runs.items()
    }


def test_references_score_high(cheat_scores) -> None:
    assert cheat_scores["oracle"]["evidence_support"] >= 0.9
    assert cheat_scores["oracle"]["constraint_evidence"] >= 0.9
    assert cheat_scores["gold"]["evidence_support"] >= 0.9
    assert cheat_scores["random"]["evidence_support"] <= cheat_scores["oracle"]["evidence_support"] - 0.1


@pytest.mark.parametrize("cheat", sorted(set(CHEATS) - {"false_attributes"}))
def test_no_cheat_beats_chance_on_evidence_support(cheat_scores, cheat: str) -> None:
    assert cheat_scores[cheat]["evidence_support"] <= cheat_scores["random"]["evidence_support"] + MARGIN


@pytest.mark.parametrize(
    "cheat", ["claimed_false", "far_from", "contrary_to", "myth", "zero_width_not", "homoglyph_not"]
)
def test_reframed_quotes_score_at_most_0_3(cheat_scores, cheat: str) -> None:
    assert cheat_scores[cheat]["evidence_support"] <= 0.3


@pytest.mark.parametrize("cheat", ["silent", "empty", "tag_only"])
def test_saying_nothing_scores_zero(cheat_scores, cheat: str) -> None:
    assert cheat_scores[cheat]["evidence_support"] == 0.0


def test_a_sentence_dump_is_not_constraint_evidence(cheat_scores) -> None:
    assert cheat_scores["sentence_dump"]["constraint_evidence"] <= 0.6


def test_text_that_repeats_a_rejected_poi_is_a_repeat(cheat_scores) -> None:
    assert cheat_scores["gold"]["rejected_repeat"] == 0.0
    assert cheat_scores["rejected_in_text"]["rejected_repeat"] == 1.0


def test_false_attributes_of_the_top1_count_as_hallucinated(cheat_scores) -> None:
    # ES judges citations only: the gold quotes still support the top-1 (the made-up words are HAR's)
    assert cheat_scores["gold"]["hallucinated_attribute_rate"] == 0.0
    assert cheat_scores["false_attributes"]["hallucinated_attribute_rate"] >= 0.3
