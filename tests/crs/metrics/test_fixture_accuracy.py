"""Accuracy metrics on the fixture run, every value computed by hand (see conftest for the KB).

Closed run (tests/fixtures/crs_metrics/predictions_closed.jsonl), 7 recommendation turns:

    turn   gold  multi_ref  ranking (deduped)      note
    d1/1   P1    [P4]       P2 P1 P4 P3 P5
    d1/3   P4    []         P4 P1
    d1/5   P4    []         -                      error "timeout" -> unscorable, defaults
    d2/1   P3    [P5]       P5 P3 P1               (P3 repeated in the file; the repeat is dropped)
    d2/3   P3    [P5]       -                      missing -> unscorable, defaults
    d3/1   P1    []         P1 P4 P2
    d3/3   P4    []         P1 P4
"""

from __future__ import annotations

import math

import pytest

from groundtrace.crs.evaluation.score import score_predictions

LOG2_3 = math.log2(3)


@pytest.fixture(scope="module")
def table(dialogues, closed_predictions, kb):
    return score_predictions(dialogues, closed_predictions, kb, setting="closed")


def per_turn(table, metric):
    return {(t.dialogue_id, t.turn_index): t.values[metric] for t in table.turns}


def test_recall_at_k(table):
    # gold rank per turn: d1/1 2, d1/3 1, d1/5 -, d2/1 2, d2/3 -, d3/1 1, d3/3 2
    assert per_turn(table, "recall@1") == {
        ("d1", 1): 0.0, ("d1", 3): 1.0, ("d1", 5): 0.0, ("d2", 1): 0.0, ("d2", 3): 0.0,
        ("d3", 1): 1.0, ("d3", 3): 0.0,
    }  # fmt: skip
    assert table.aggregate["recall@1"] == pytest.approx(2 / 7)
    # R@3: ranks 2,1,2,1,2 are all <= 3 -> 5 hits over 7 turns (2 defaults of 0)
    assert table.aggregate["recall@3"] == pytest.approx(5 / 7)
    assert table.aggregate["recall@5"] == pytest.approx(5 / 7)


def test_mrr(table):
    # RR = 1/2, 1, 0, 1/2, 0, 1, 1/2 -> 3.5 / 7 = 0.5
    assert per_turn(table, "mrr")[("d1", 1)] == 0.5
    assert table.aggregate["mrr"] == pytest.approx(0.5)


def test_ndcg_at_3(table):
    # rank 1 -> 1/log2(2) = 1; rank 2 -> 1/log2(3) = 0.63093; missing -> 0
    # (1/log2 3 + 1 + 0 + 1/log2 3 + 0 + 1 + 1/log2 3) / 7 = (2 + 3 * 0.63093) / 7 = 0.55611
    assert per_turn(table, "ndcg@3")[("d2", 1)] == pytest.approx(1 / LOG2_3)
    assert table.aggregate["ndcg@3"] == pytest.approx((2 + 3 / LOG2_3) / 7)
    assert table.aggregate["ndcg@3"] == pytest.approx(0.556113, abs=1e-6)


def test_multi_ref_hit_at_1(table):
    # top-1 in {gold} ∪ multi_ref: d1/1 P2 ∉ {P1,P4} 0; d1/3 P4 1; d2/1 P5 ∈ {P3,P5} 1; d3/1 P1 1; d3/3 P1 ∉
    # {P4} 0
    values = per_turn(table, "multi_ref_hit@1")
    assert values[("d2", 1)] == 1.0 and values[("d3", 3)] == 0.0
    assert table.aggregate["multi_ref_hit@1"] == pytest.approx(3 / 7)


def test_constraint_satisfaction(table):
    values = per_turn(table, "constraint_satisfaction")
    # d1/1 top-1 P2 vs [price<=3 (P2 is $$$$: no), within 3 km (1.0 km: yes)] -> 1/2
    assert values[("d1", 1)] == 0.5
    # d1/3 P4 vs [price<=3 yes, 2.5 km <= 3 yes, Italian yes, quiet yes] -> 4/4
    assert values[("d1", 3)] == 1.0
    # d2/1 P5 vs [price<=2: $$ yes] -> 1; d3/1 P1 vs [romantic yes, 0 km yes] -> 1
    assert values[("d2", 1)] == 1.0 and values[("d3", 1)] == 1.0
    # d3/3 P1 vs [romantic yes, 0 km yes, price<=2 ($$$) no] -> 2/3
    assert values[("d3", 3)] == pytest.approx(2 / 3)
    # mean = (0.5 + 1 + 0 + 1 + 0 + 1 + 2/3) / 7 = 4.16667 / 7 = 0.59524
    assert table.aggregate["constraint_satisfaction"] == pytest.approx((0.5 + 1 + 1 + 1 + 2 / 3) / 7)


def test_open_metrics_unavailable_in_closed_run(table):
    for name in ("open_recall@1", "open_recall@10", "open_mrr", "nli_entailment"):
        assert name in table.unavailable and name not in table.aggregate


def test_open_run(dialogues, open_predictions, kb):
    table = score_predictions(dialogues, open_predictions, kb, setting="open")
    d1 = {t.turn_index: t.values for t in table.turns if t.dialogue_id == "d1"}
    # d1/1 open ranking P3 P1: gold P1 at rank 2 -> R@1 0, R@10 1, RR 1/2
    assert (d1[1]["open_recall@1"], d1[1]["open_recall@10"], d1[1]["open_mrr"]) == (0.0, 1.0, 0.5)
    # d1/3 ranking P4 = gold -> 1, 1, 1; d1/5 gold P4 at rank 5 -> 0, 1, 1/5
    assert (d1[3]["open_recall@1"], d1[3]["open_mrr"]) == (1.0, 1.0)
    assert (d1[5]["open_recall@1"], d1[5]["open_recall@10"], d1[5]["open_mrr"]) == (0.0, 1.0, 0.2)
    # d2, d3: no open predictions -> 4 unscorable turns with default 0
    # open_mrr = (0.5 + 1 + 0.2 + 0 * 4) / 7 = 1.7 / 7
    assert table.aggregate["open_mrr"] == pytest.approx(1.7 / 7)
    assert table.counts["open_mrr"].unscorable == 4 and table.counts["open_mrr"].scored == 3
    assert "recall@1" in table.unavailable and "mrr" in table.unavailable
