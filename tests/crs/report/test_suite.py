"""``crs leaderboard`` / ``run_suite``: every named system in both settings, one report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.core.registry import UnknownNameError
from groundtrace.crs.report.suite import expand_systems
from groundtrace.crs.systems import OFFLINE_SYSTEMS
from tests.crs.report.demo_data import make_demo


def test_expand_systems() -> None:
    assert expand_systems("all-offline") == ["random", *OFFLINE_SYSTEMS]
    assert expand_systems("tfidf, gold,tfidf") == ["tfidf", "oracle"]  # canonical names, no repeats
    with pytest.raises(UnknownNameError):
        expand_systems("tfidff")
    with pytest.raises(ValueError):
        expand_systems(" , ")


@pytest.mark.slow
def test_leaderboard_cli_runs_each_system_in_both_settings(tmp_path) -> None:
    demo = make_demo(tmp_path / "demo", n_dialogues=24)
    out = tmp_path / "lb"
    args = ["crs", "leaderboard", "--dataset", str(demo.dataset), "--out", str(out), "--split", "all"]
    args += ["--kb", str(demo.kb_path)]
    result = CliRunner().invoke(
        app, [*args, "--systems", "random,knowledge,trace-hybrid", "--no-dense", "--resamples", "10"]
    )
    assert result.exit_code == 0, result.output
    board = json.loads((out / "leaderboard.json").read_text())
    rows = {(r["system"], r["setting"]) for r in board["leaderboard"]}
    assert rows == {(s, t) for s in ("random", "knowledge", "trace-hybrid") for t in ("closed", "open")}
    assert (out / "axes_radar.png").exists() and (out / "report.html").exists()
    assert (out / "runs" / "trace-hybrid-open" / "predictions.jsonl").exists()
    # each finished run's line shows evidence support next to CGS (CGS saturates on extractive answers)
    lines = [line for line in result.output.splitlines() if " R@1=" in line]
    assert len(lines) == 6 and all(" CGS=" in x and " ES=" in x for x in lines)
    assert all(x.index(" CGS=") < x.index(" ES=") < x.index(" recovery=") for x in lines)
    bad = CliRunner().invoke(app, [*args, "--systems", "nope"])
    assert bad.exit_code == 2 and "--systems" in bad.output
    bad = CliRunner().invoke(app, [*args, "--settings", "closed,ajar"])
    assert bad.exit_code == 2
