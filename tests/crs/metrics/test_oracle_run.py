"""End to end: replaying the dataset's own system turns (gold ranking + gold text) scores perfectly.

The builder labels the gold POI as satisfying the turn's constraints, cites only reviews of the POIs
it names, quotes verbatim (QC >= 0.80 with the same quote_score) and never repeats a rejected POI, so
the oracle run must get the best value of every accuracy, recovery and citation metric. It also checks
that the demo KB's reviews support every attribute the template realiser mentions (no hallucination).
"""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.systems.predictions import Prediction


@pytest.fixture(scope="module")
def oracle():
    kb = generate_demo_kb(0)
    dialogues, _ = build_dialogues(kb, 40, 3)
    preds = []
    for d in dialogues:
        for t in d.recommendation_turns():
            ranking = list(t.recommended) + [p for p in d.candidates_at(t.index) if p not in t.recommended]
            preds.append(
                Prediction(dialogue_id=d.dialogue_id, turn_index=t.index, ranking=ranking, response=t.text)
            )
    return dialogues, score_predictions(dialogues, preds, kb)


@pytest.mark.slow
def test_oracle_scores_perfectly(oracle):
    dialogues, table = oracle
    assert any(d.has_rejection for d in dialogues)
    best = {
        "recall@1": 1.0, "mrr": 1.0, "ndcg@3": 1.0, "multi_ref_hit@1": 1.0, "constraint_satisfaction": 1.0,
        "gs": 1.0, "citation_validity": 1.0, "citation_rate": 1.0, "hallucinated_attribute_rate": 0.0,
        "rejection_recovery": 1.0, "t2r": 1.0, "task_success": 1.0, "rejected_repeat": 0.0,
        "price_alignment": 1.0, "proximity_alignment": 1.0,
    }  # fmt: skip
    assert {k: table.aggregate[k] for k in best} == best
    assert 0.05 < table.aggregate["cd"] < 1.0  # quoted snippets plus framing text
    assert table.aggregate["cgs"] <= table.aggregate["gs"]
    assert table.predictions.missing == 0 and table.counts["gs"].unscorable == 0
