"""``groundtrace demo`` runs every step offline and writes what it promises."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.systems.understanding.model import cache_dir, default_parser_options
from groundtrace.demo import SUMMARY_COLUMNS, discrimination_text, run_demo, summary_table


@pytest.mark.slow
def test_demo_cli_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm_parser: None) -> None:
    """``groundtrace demo`` as a user runs it, once (it costs the most CPU of any test): every step writes
    its artefacts, the console summary ranks the systems as the report does, the closing lines say how to
    open the review page, and the systems learn the parser with its default (MiniLM) features here, where
    the rest of the suite uses TF-IDF (tests/conftest.py). ``run_demo`` is watched to read the artefacts it
    returns (the CLI calls it with the parsed options and prints to the captured stdout)."""
    from groundtrace import demo as demo_mod

    returned: list[dict[str, Path]] = []

    def watched_run_demo(*args, **kwargs):
        returned.append(run_demo(*args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(demo_mod, "run_demo", watched_run_demo)
    result = CliRunner().invoke(
        app, ["demo", "--out", str(tmp_path / "d"), "--dialogues", "24", "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    assert len(returned) == 1
    artefacts = returned[0]
    for name in ("kb", "dataset", "leaderboard", "html_report", "catalog_results", "catalog_evaluation"):
        assert artefacts[name].exists(), name
    assert (tmp_path / "d" / "crs" / "report" / "report.html").exists()
    board = json.loads((tmp_path / "d" / "crs" / "report" / "leaderboard.json").read_text())
    rows = {row["system"]: row["cells"] for row in board["leaderboard"] if row["setting"] == "closed"}
    assert rows["oracle"]["recall@1"]["value"] == 1.0  # the oracle ranks the gold POI first, always
    assert rows["random"]["recall@1"]["value"] < 0.5  # 1/8 expected on the closed set of 8
    # the console table lists the systems as the report does: oracle, by R@1 best first, random
    out = result.output
    listed = [line.split("│")[1].strip() for line in out.splitlines() if line.count("│") == 7]
    ranked = sorted(set(rows) - {"oracle", "random"}, key=lambda s: (-rows[s]["recall@1"]["value"], s))
    assert listed == ["oracle", *ranked, "random"]
    assert "evidence support" in out and "CGS" in out
    spread = next(line for line in out.splitlines() if line.startswith("discrimination (oracle − random):"))
    es = rows["oracle"]["evidence_support"]["value"] - rows["random"]["evidence_support"]["value"]
    assert f"evidence support {es:.3f}" in spread
    html = artefacts["html_report"].read_text()
    assert "<script>" not in html.split("</head>")[-1] or "&lt;script&gt;" in html
    results = artefacts["catalog_results"].read_text().splitlines()
    assert results and all(
        json.loads(line)["decision"]["action"] in {"WRITE", "BLOCK", "REVIEW"} for line in results
    )
    assert "TRACE-Catalog" in out
    store = (tmp_path / "d" / "catalog" / "store.db").resolve()
    last = out.strip().splitlines()[-3:]
    assert last[0] == f"  groundtrace catalog user add reviewer --db sqlite:///{store}"
    assert last[1] == f"  groundtrace catalog serve --db sqlite:///{store}"
    assert "http://127.0.0.1:8000/" in last[2]
    # the systems' parser was trained (and cached) with the default options, MiniLM features included
    headers = [json.loads(p.read_text()) for p in cache_dir().glob("*.joblib.json")]
    assert headers and all(h["parser_options"] == default_parser_options() for h in headers)


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


def _render(table) -> str:
    shown = io.StringIO()
    Console(file=shown, width=200).print(table)
    return shown.getvalue()


def test_summary_shows_evidence_support_next_to_cgs_and_the_discrimination() -> None:
    """The printed summary names the grounding axis twice — the paper's CGS and evidence support — and the
    line under it gives oracle − random per column (hand-computed)."""
    assert [m for _, m in SUMMARY_COLUMNS] == ["R@1", "cgs", "evidence_support", "rejection_recovery"]
    rows = [
        ("random", (0.125, 1.0, 0.25, 0.5), 0.1),
        ("bm25", (0.5, 1.0, 0.625, None), 0.2),
        ("oracle", (1.0, 1.0, 0.875, 1.0), 0.1),
    ]
    text = _render(summary_table(rows))
    head = next(line for line in text.splitlines() if "system" in line)
    assert head.index("CGS (grounding, paper)") < head.index("evidence support (grounding)")
    body = [line.split("│")[1:-1] for line in text.splitlines() if line.count("│") == 7]
    assert [cells[0].strip() for cells in body] == ["oracle", "bm25", "random"]
    assert [c.strip() for c in body[1]] == ["bm25", "0.500", "1.000", "0.625", "-", "0.2"]
    assert discrimination_text(rows) == (
        "discrimination (oracle − random): R@1 0.875 · CGS 0.000 · evidence support 0.625 · recovery 0.500"
    )
    assert discrimination_text(rows[1:]) == ""  # no random run: nothing to subtract
