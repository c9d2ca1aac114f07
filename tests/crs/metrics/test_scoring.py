"""score_predictions bookkeeping: prediction accounting, unscorable turns, records, to_dict, errors."""

from __future__ import annotations

import json
import math

import pytest

from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.metrics import DEFAULT_METRICS
from groundtrace.crs.systems.predictions import Prediction


@pytest.fixture(scope="module")
def table(dialogues, closed_predictions, kb):
    return score_predictions(dialogues, closed_predictions, kb)


def test_prediction_accounting(table):
    # predictions_closed.jsonl: 9 lines = 5 used + 1 errored + 1 duplicate (d1/1) + 1 orphan (d9)
    #   + 1 open-setting;
    # 7 recommendation turns = 5 used + 1 errored + 1 missing (d2/3)
    stats = table.predictions
    assert (stats.used, stats.errored, stats.missing) == (5, 1, 1)
    assert (stats.duplicate, stats.orphan, stats.other_setting) == (1, 1, 1)
    assert table.n_turns == 7 and table.n_dialogues == 3


def test_first_duplicate_wins(table):
    d1_1 = next(t for t in table.turns if (t.dialogue_id, t.turn_index) == ("d1", 1))
    assert d1_1.values["recall@3"] == 1.0  # the first line ranks P2 P1 ...; the duplicate ranks only P1


def test_unscorable_turn_records(table):
    records = {(t.dialogue_id, t.turn_index): t for t in table.turns}
    assert records[("d1", 5)].scorable is False and records[("d1", 5)].error == "timeout after 30s"
    assert records[("d2", 3)].scorable is False and records[("d2", 3)].error == "missing prediction"
    assert records[("d1", 1)].scorable is True and records[("d1", 1)].error is None
    assert {d.dialogue_id: d.unscorable_turns for d in table.dialogues} == {"d1": 1, "d2": 1, "d3": 0}


def test_counts_cover_every_unit(table):
    for name, counts in table.counts.items():
        total = counts.scored + counts.unscorable + counts.not_applicable
        assert total == (table.n_turns if counts.unit == "turn" else table.n_dialogues), name
    # turn metrics without a not-applicable case: 5 scored + 2 unscorable
    assert (table.counts["recall@1"].scored, table.counts["recall@1"].unscorable) == (5, 2)


def test_defaults_never_nan_and_unavailable_listed(table):
    assert set(table.metrics) == {str(m) for m in DEFAULT_METRICS}
    # closed run, no scorer: the 3 open-set metrics and NLI are unavailable, the 23 others aggregated
    assert set(table.unavailable) == {"open_recall@1", "open_recall@10", "open_mrr", "nli_entailment"}
    assert len(table.aggregate) == 23
    for value in table.aggregate.values():
        assert value is not None and not math.isnan(value)


def test_to_dict_is_json(table):
    data = json.loads(json.dumps(table.to_dict()))
    assert data["aggregate"]["recall@1"] == pytest.approx(2 / 7)
    assert data["counts"]["gs"] == {"unit": "turn", "scored": 5, "unscorable": 2, "not_applicable": 0}
    assert len(data["turns"]) == 7 and len(data["dialogues"]) == 3
    assert "turns" not in table.to_dict(records=False)


def test_value_accepts_aliases(table):
    assert table.value("R@1") == table.aggregate["recall@1"]
    assert table.value("CGS") == table.aggregate["cgs"]


def test_metric_subset_and_order(dialogues, closed_predictions, kb):
    t = score_predictions(dialogues, closed_predictions, kb, metrics=["mrr", "R@1", "recall@1", "t2r"])
    assert t.metrics == ["mrr", "recall@1", "t2r"]  # parsed, de-duplicated, in the given order
    assert set(t.aggregate) == {"mrr", "recall@1", "t2r"}


def test_no_predictions_at_all(dialogues, kb):
    t = score_predictions(dialogues, [], kb)
    assert t.predictions.missing == 7
    assert t.aggregate["recall@1"] == 0.0 and t.aggregate["hallucinated_attribute_rate"] == 1.0
    assert t.aggregate["t2r"] == pytest.approx((4 + 3 + 3) / 3)  # never correct: n_rec + 1 = 4, 3, 3
    assert t.aggregate["rejected_repeat"] == 1.0


def test_bad_setting_and_bad_scorer(dialogues, closed_predictions, kb):
    with pytest.raises(ValueError, match="setting"):
        score_predictions(dialogues, closed_predictions, kb, setting="half-open")
    with pytest.raises(ValueError, match="'d1' appears twice"):
        score_predictions([dialogues[0], dialogues[0]], closed_predictions, kb)

    class Short:
        name = "short"

        def score(self, pairs):
            return [0.5]

    with pytest.raises(ValueError, match="returned 1 scores for 5 pairs"):
        score_predictions(dialogues, closed_predictions, kb, metrics=["nli"], entailment=Short())

    class NotProbabilities:
        name = "nan"

        def score(self, pairs):
            return [float("nan")] * len(pairs)

    with pytest.raises(ValueError, match="returned nan; scores must be probabilities"):
        score_predictions(dialogues, closed_predictions, kb, metrics=["nli"], entailment=NotProbabilities())


def test_ranking_ids_outside_the_kb(dialogues, kb):
    preds = [Prediction(dialogue_id="d3", turn_index=1, ranking=["ghost", "P1"], response="")]
    t = score_predictions([d for d in dialogues if d.dialogue_id == "d3"], preds, kb,
                          metrics=["R@1", "mrr", "constraint_satisfaction", "spatial_coherence"])  # fmt: skip
    v = next(r.values for r in t.turns if r.turn_index == 1)
    # unknown id ranked first: not the gold, RR 1/2; CS of a non-KB top-1 is 0; one KB POI -> no pair
    assert v == {"recall@1": 0.0, "mrr": 0.5, "constraint_satisfaction": 0.0, "spatial_coherence": None}
