"""Recovery (dialogue level) and practicality metrics on the fixture closed run, computed by hand.

Dialogues: d1 rejects P1 at turn 2 (reject_and_refine), rec turns 1, 3, 5 (5 errored);
d2 has no rejection, rec turns 1, 3 (3 missing); d3 rejects P1 at turn 2, rec turns 1, 3.
"""

from __future__ import annotations

import pytest

from groundtrace.crs.evaluation.score import score_predictions


@pytest.fixture(scope="module")
def table(dialogues, closed_predictions, kb):
    return score_predictions(dialogues, closed_predictions, kb, setting="closed")


def per_dialogue(table, metric):
    return {d.dialogue_id: d.values[metric] for d in table.dialogues}


def per_turn(table, metric):
    return {(t.dialogue_id, t.turn_index): t.values[metric] for t in table.turns}


def test_rejection_recovery(table):
    # d1: next rec turn after the rejection is d1/3, top-1 P4 == gold P4 -> 1/1
    # d3: next is d3/3, top-1 P1 ∉ {P4} -> 0/1; d2 has no reject_and_refine -> not applicable
    assert per_dialogue(table, "rejection_recovery") == {"d1": 1.0, "d2": None, "d3": 0.0}
    assert table.aggregate["rejection_recovery"] == 0.5  # (1 + 0) / 2
    assert table.counts["rejection_recovery"].not_applicable == 1


def test_t2r(table):
    # d1: rec turn #1 top-1 P2 != P1, #2 top-1 P4 == P4 -> 2
    # d2: #1 P5 != P3, #2 missing -> never correct -> n_rec + 1 = 3
    # d3: #1 P1 == P1 -> 1
    assert per_dialogue(table, "t2r") == {"d1": 2.0, "d2": 3.0, "d3": 1.0}
    assert table.aggregate["t2r"] == 2.0  # (2 + 3 + 1) / 3
    assert table.counts["t2r"].unit == "dialogue"


def test_task_success(table):
    # final rec turns: d1/5 errored -> 0; d2/3 missing -> 0; d3/3 top-1 P1 ∉ {P4} -> 0
    assert per_dialogue(table, "task_success") == {"d1": 0.0, "d2": 0.0, "d3": 0.0}
    counts = table.counts["task_success"]
    assert (counts.scored, counts.unscorable) == (1, 2)  # d1 and d2 have an unscorable turn


def test_rejected_repeat(table):
    # d1: post-rejection rec turns d1/3 (P4, not rejected) and d1/5 (errored -> counted as a repeat) -> 1/2
    # d3: d3/3 top-1 P1 was rejected at turn 2 -> 1/1; d2: no rejection -> not applicable
    assert per_dialogue(table, "rejected_repeat") == {"d1": 0.5, "d2": None, "d3": 1.0}
    assert table.aggregate["rejected_repeat"] == 0.75  # (0.5 + 1) / 2


def test_spatial_coherence(table):
    values = per_turn(table, "spatial_coherence")
    # d1/1 recommended P2 P1 P4: P2-P1 1.0 km yes, P2-P4 2.69 no, P1-P4 2.5 no -> 1/3
    assert values[("d1", 1)] == pytest.approx(1 / 3)
    # d1/3 P4 P1: 2.5 km -> 0/1; d2/1 P5 P3 P1: 9.43, 8, 5 km -> 0/3
    assert values[("d1", 3)] == 0.0 and values[("d2", 1)] == 0.0
    # d3/1 P1 P4 P2: P1-P2 only -> 1/3; d3/3 P1 P4 -> 0
    assert values[("d3", 1)] == pytest.approx(1 / 3) and values[("d3", 3)] == 0.0
    # mean with the two unscorable defaults (0): (1/3 + 0 + 0 + 0 + 0 + 1/3 + 0) / 7 = 0.095238
    assert table.aggregate["spatial_coherence"] == pytest.approx((2 / 3) / 7)


def test_price_alignment(table):
    values = per_turn(table, "price_alignment")
    # d1/1 P2 $$$$ vs price<=3 -> 0; d1/3 P4 $$ -> 1; d1/5 unscorable -> 0; d2/1 P5 $$ vs <=2 -> 1;
    # d2/3 unscorable (it has a price constraint) -> 0; d3/1 no price constraint -> None;
    # d3/3 P1 $$$ vs <=2 -> 0
    assert values == {
        ("d1", 1): 0.0, ("d1", 3): 1.0, ("d1", 5): 0.0, ("d2", 1): 1.0, ("d2", 3): 0.0,
        ("d3", 1): None, ("d3", 3): 0.0,
    }  # fmt: skip
    assert table.aggregate["price_alignment"] == pytest.approx(2 / 6)
    c = table.counts["price_alignment"]
    assert (c.scored, c.unscorable, c.not_applicable) == (4, 2, 1)


def test_proximity_alignment(table):
    values = per_turn(table, "proximity_alignment")
    # d1/1 P2 1.0 km <= 3 -> 1; d1/3 P4 2.5 km -> 1; d1/5 unscorable -> 0; d2 has no anchor -> None (both
    # turns, the missing d2/3 included: the metric does not apply to it); d3/1 P1 0 km -> 1; d3/3 P1 -> 1
    assert values[("d2", 1)] is None and values[("d2", 3)] is None
    assert table.aggregate["proximity_alignment"] == pytest.approx(4 / 5)
    c = table.counts["proximity_alignment"]
    assert (c.scored, c.unscorable, c.not_applicable) == (4, 1, 2)
