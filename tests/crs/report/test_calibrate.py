"""Human calibration: Spearman rho on a small hand-checked fixture, file formats and bad lines."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.report.calibrate import calibrate_run, read_human_labels


def _run_dir(tmp_path):
    """A run folder with 5 scored turns (cgs) and 3 dialogues (task_success), written by hand."""
    turns = [("d1", 1, 0.1), ("d1", 3, 0.4), ("d2", 1, 0.2), ("d2", 3, 0.9), ("d3", 1, 0.7)]
    scores = {
        "setting": "closed",
        "n_dialogues": 3,
        "n_turns": 5,
        "metrics": ["cgs", "task_success", "price_alignment"],
        "aggregate": {"cgs": 0.46, "task_success": 2 / 3, "price_alignment": None},
        "counts": {
            "cgs": {"unit": "turn", "scored": 5, "unscorable": 0, "not_applicable": 0},
            "task_success": {"unit": "dialogue", "scored": 3, "unscorable": 0, "not_applicable": 0},
            "price_alignment": {"unit": "turn", "scored": 0, "unscorable": 0, "not_applicable": 5},
        },
        "unavailable": {},
        "predictions": {},
        "turns": [
            {
                "dialogue_id": d,
                "turn_index": t,
                "scorable": True,
                "error": None,
                "values": {"cgs": v, "price_alignment": None},
            }
            for d, t, v in turns
        ],
        "dialogues": [
            {"dialogue_id": d, "unscorable_turns": 0, "values": {"task_success": v}}
            for d, v in (("d1", 1.0), ("d2", 0.0), ("d3", 1.0))
        ],
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scores.json").write_text(json.dumps(scores))
    (tmp_path / "run.json").write_text(json.dumps({"system": "hand", "setting": "closed"}))
    return tmp_path


def test_turn_metric_rho_hand_checked(tmp_path) -> None:
    run = _run_dir(tmp_path / "run")
    human = tmp_path / "human.csv"
    human.write_text("dialogue_id,turn_index,label\nd1,1,1\nd1,3,3\nd2,1,2\nd2,3,4\nd3,1,5\nd9,1,2\nd3,1,1\n")
    result = calibrate_run(human, run, "CGS")
    # cgs   0.1 0.4 0.2 0.9 0.7 → ranks 1 3 2 5 4
    # label 1   3   2   4   5   → ranks 1 3 2 4 5
    # d = 0 0 0 1 −1, Σd² = 2, rho = 1 − 6·2 / (5·(25 − 1)) = 1 − 12/120 = 0.9
    assert result.rho == pytest.approx(0.9)
    assert result.n == 5 and result.unmatched_labels == 1  # d9 unknown; the repeated d3,1 keeps the first
    # scipy's p for rho = 0.9, n = 5 (t-distribution, 3 df): t = 0.9·sqrt(3/0.19) = 3.576
    assert result.p_value == pytest.approx(0.0374, abs=1e-3)
    assert "rho = 0.9000" in result.summary()


def test_dialogue_metric_labels_are_averaged_and_jsonl_read(tmp_path) -> None:
    run = _run_dir(tmp_path / "run")
    human = tmp_path / "h.jsonl"
    lines = [
        {"dialogue_id": "d1", "turn_index": 1, "label": 4},
        {"dialogue_id": "d1", "turn_index": 3, "label": 5},
        {"dialogue_id": "d2", "label": 1},
        {"dialogue_id": "d3", "turn_index": 1, "label": 3},
    ]
    human.write_text(
        "\n".join(json.dumps(x) for x in lines)
        + "\nnot json\n"
        + json.dumps({"dialogue_id": "d3", "turn_index": 3, "label": "good"})
        + "\n"
    )
    result = calibrate_run(human, run, "tsr")
    # task_success 1, 0, 1 vs mean labels 4.5, 1, 3 → ranks (2.5, 1, 2.5) vs (3, 1, 2):
    # Pearson of the ranks: x − x̄ = (.5, −1, .5), y − ȳ = (1, −1, 0) → 1.5 / sqrt(1.5 · 2) = 0.8660
    assert result.rho == pytest.approx(0.8660, abs=1e-4) and result.n == 3
    assert [e.split(": ")[0] for e in result.errors] == [f"{human}:5", f"{human}:6"]


def test_no_value_and_unknown_metric(tmp_path) -> None:
    run = _run_dir(tmp_path / "run")
    human = tmp_path / "h.tsv"
    human.write_text("dialogue_id\tturn_index\tlabel\nd1\t1\t2\nd2\t1\t3\n")
    result = calibrate_run(human, run, "price_alignment")
    assert result.rho is None and result.not_applicable == 2
    with pytest.raises(KeyError, match="not in"):
        calibrate_run(human, run, "mrr")
    bad = tmp_path / "bad.csv"
    bad.write_text("dialogue,score\nd1,2\n")
    with pytest.raises(ValueError, match="bad.csv:1: missing column"):
        read_human_labels(bad)


def test_cli_calibrate(tmp_path) -> None:
    run = _run_dir(tmp_path / "run")
    human = tmp_path / "human.csv"
    human.write_text("dialogue_id,turn_index,label\nd1,1,1\nd1,3,3\nd2,1,2\nd2,3,4\nd3,1,5\n")
    result = CliRunner().invoke(app, ["crs", "calibrate", "--human", str(human), "--run", str(run), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["rho"] == pytest.approx(0.9)
