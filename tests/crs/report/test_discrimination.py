"""Each metric's discrimination (oracle − random on the report's own runs) in the metric tables, hand-computed
on tiny run folders; ``evidence_support`` next to CGS in the main table.

Two closed-set runs on 4 one-turn dialogues, written as ``run.json`` + ``scores.json`` and read back with
``load_run``:

    dialogue         d0    d1    d2    d3    aggregate
    oracle  R@1      1     1     1     1     1.00
            CGS      1     1     1     1     1.00
            ES       1     0.5   1     1     0.875
            t2r      1     1     1     1     1.00
    random  R@1      0     1     0     0     0.25
            CGS      1     1     1     1     1.00     (saturated: discrimination 0)
            ES       0     0.5   0     0     0.125
            t2r      3     1     4     4     3.00

so discrimination = R@1 0.750, CGS 0.000, ES 0.750, t2r -2.000 (lower is better: negative is good).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundtrace.crs.report.html import render_html
from groundtrace.crs.report.leaderboard import MAIN, build, discrimination
from groundtrace.crs.report.load import label_runs, load_run
from groundtrace.crs.report.render import markdown

VALUES = {
    "oracle": {"recall@1": [1, 1, 1, 1], "cgs": [1, 1, 1, 1], "evidence_support": [1, 0.5, 1, 1],
               "t2r": [1, 1, 1, 1]},
    "random": {"recall@1": [0, 1, 0, 0], "cgs": [1, 1, 1, 1], "evidence_support": [0, 0.5, 0, 0],
               "t2r": [3, 1, 4, 4]},
}  # fmt: skip
TURN_METRICS = ("recall@1", "cgs", "evidence_support")


def _write_run(root: Path, system: str) -> Path:
    values = VALUES[system]
    folder = root / system
    folder.mkdir()
    turns = [
        {"dialogue_id": f"d{i}", "turn_index": 1, "values": {m: float(values[m][i]) for m in TURN_METRICS}}
        for i in range(4)
    ]
    dialogues = [{"dialogue_id": f"d{i}", "values": {"t2r": float(values["t2r"][i])}} for i in range(4)]
    metrics = [*TURN_METRICS, "t2r"]
    scores = {
        "setting": "closed",
        "metrics": metrics,
        "aggregate": {m: sum(values[m]) / 4 for m in metrics},
        "counts": {**{m: {"unit": "turn"} for m in TURN_METRICS}, "t2r": {"unit": "dialogue"}},
        "turns": turns,
        "dialogues": dialogues,
        "n_dialogues": 4,
        "n_turns": 4,
    }
    info = {"system": system, "setting": "closed", "dataset_hash": "h", "needs_gold": system == "oracle"}
    (folder / "run.json").write_text(json.dumps(info), encoding="utf-8")
    (folder / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    return folder


def _report(tmp_path: Path, systems: tuple[str, ...] = ("random", "oracle")):
    runs = [load_run(_write_run(tmp_path, s)) for s in systems]
    label_runs(runs)
    return build(runs, resamples=50)


def test_discrimination_is_oracle_minus_random(tmp_path: Path) -> None:
    spread = discrimination(_report(tmp_path), "closed")
    assert spread["recall@1"] == 0.75
    assert spread["cgs"] == 0.0  # saturated: oracle and random both 1.000
    assert spread["evidence_support"] == 0.75
    assert spread["t2r"] == -2.0


def test_a_turn_record_without_scorable_counts_as_scorable(tmp_path: Path) -> None:
    """``scorable`` is optional in a turn record (load_run accepts it absent); the report used to raise
    KeyError: 'scorable' on such a file. A non-boolean value is refused with the file's name."""
    report = _report(tmp_path)
    assert all(r.unscorable_turns == 0 and r.n_turns == 4 for r in report.rows)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "run.json").write_text('{"system": "x"}', encoding="utf-8")
    turn = {"dialogue_id": "d0", "turn_index": 1, "values": {}, "scorable": "maybe"}
    scores = {"turns": [turn], "dialogues": []}
    (bad / "scores.json").write_text(json.dumps(scores), encoding="utf-8")
    with pytest.raises(ValueError, match="scores.json: not a run file"):
        load_run(bad)


def test_discrimination_is_none_without_both_runs(tmp_path: Path) -> None:
    report = _report(tmp_path, ("oracle",))
    assert set(discrimination(report, "closed").values()) == {None}
    text = markdown(report)
    assert "Discrimination on this data" not in text
    row = next(line for line in text.splitlines() if line.startswith("| cgs |"))
    assert row.rstrip().endswith("| — |")


def test_markdown_shows_discrimination_column_and_line(tmp_path: Path) -> None:
    report = _report(tmp_path)
    text = markdown(report)
    header = next(line for line in text.splitlines() if line.startswith("| metric | axis | better |"))
    assert header.rstrip().endswith("| discrimination (oracle − random) |")
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| ")}
    assert rows["cgs"].rstrip().endswith("| 0.000 |")
    assert rows["evidence_support"].rstrip().endswith("| 0.750 |")
    assert rows["t2r"].rstrip().endswith("| -2.000 |")
    line = next(x for x in text.splitlines() if x.startswith("Discrimination on this data"))
    assert "recall@1 0.750" in line and "cgs 0.000" in line and "evidence_support 0.750" in line
    assert report.to_dict()["discrimination"]["closed"]["evidence_support"] == 0.75


def test_evidence_support_sits_next_to_cgs_in_the_main_table(tmp_path: Path) -> None:
    for setting in ("closed", "open"):
        main = MAIN[setting]
        assert main.index("evidence_support") == main.index("cgs") + 1
    text = markdown(_report(tmp_path))
    head = next(line for line in text.splitlines() if line.startswith("| # | system |"))
    assert "| cgs | evidence_support |" in head


def test_html_metric_table_has_the_discrimination_column(tmp_path: Path) -> None:
    page = render_html(_report(tmp_path), [], {}, None, [])
    assert '<th title="oracle − random on this data; — without both runs">discrimination</th>' in page
    assert '<td class="discrimination">0.750</td>' in page and '<td class="discrimination">0.000</td>' in page
    assert 'id="discrimination-closed"' in page
    assert '<th title="evidence_support">evidence support</th>' in page
