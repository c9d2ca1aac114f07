"""``groundtrace demo`` runs every step offline and writes what it promises."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.demo import run_demo


@pytest.mark.slow
def test_run_demo_end_to_end(tmp_path: Path) -> None:
    shown = io.StringIO()
    artefacts = run_demo(tmp_path, n_dialogues=24, seed=3, console=Console(file=shown, width=200))
    for name in ("kb", "dataset", "leaderboard", "html_report", "catalog_results", "catalog_evaluation"):
        assert artefacts[name].exists(), name
    board = json.loads((tmp_path / "crs" / "report" / "leaderboard.json").read_text())
    rows = {row["system"]: row["cells"] for row in board["leaderboard"] if row["setting"] == "closed"}
    assert rows["oracle"]["recall@1"]["value"] == 1.0  # the oracle ranks the gold POI first, always
    assert rows["random"]["recall@1"]["value"] < 0.5  # 1/8 expected on the closed set of 8
    # the console table lists the systems as the report does: oracle, by R@1 best first, random
    listed = [line.split("│")[1].strip() for line in shown.getvalue().splitlines() if line.count("│") == 6]
    ranked = sorted(set(rows) - {"oracle", "random"}, key=lambda s: (-rows[s]["recall@1"]["value"], s))
    assert listed == ["oracle", *ranked, "random"]
    html = artefacts["html_report"].read_text()
    assert "<script>" not in html.split("</head>")[-1] or "&lt;script&gt;" in html
    results = artefacts["catalog_results"].read_text().splitlines()
    assert results and all(
        json.loads(line)["decision"]["action"] in {"WRITE", "BLOCK", "REVIEW"} for line in results
    )


@pytest.mark.slow
def test_demo_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["demo", "--out", str(tmp_path / "d"), "--dialogues", "12", "--seed", "1"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d" / "crs" / "report" / "report.html").exists()
    assert "TRACE-Catalog" in result.output
    store = (tmp_path / "d" / "catalog" / "store.db").resolve()
    last = result.output.strip().splitlines()[-3:]
    assert last[0] == f"  groundtrace catalog user add reviewer --db sqlite:///{store}"
    assert last[1] == f"  groundtrace catalog serve --db sqlite:///{store}"
    assert "http://127.0.0.1:8000/" in last[2]


def test_demo_cli_bad_out_is_one_line_error(tmp_path: Path) -> None:
    """An --out that cannot be a folder: one error line on stderr, exit 2, no traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for out, expected in (
        (blocker / "sub", "cannot write the demo to"),
        (blocker, "is a file, not a folder"),
    ):
        result = CliRunner().invoke(app, ["demo", "--out", str(out), "--dialogues", "2"])
        assert result.exit_code == 2, result.output
        assert expected in result.stderr and str(out) in result.stderr
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert len(result.stderr.strip().splitlines()) == 1
