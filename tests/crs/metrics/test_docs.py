"""docs/crs-metrics.md lists every default metric with the axis, direction and aggregation of its spec."""

from __future__ import annotations

import re
from pathlib import Path

from groundtrace.crs.metrics import DEFAULT_METRICS

DOC = Path(__file__).resolve().parents[3] / "docs" / "crs-metrics.md"


def test_docs_table_matches_specs():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]  # "\|" is a literal pipe
        if len(cells) == 8 and cells[1].startswith("`"):
            rows[cells[1].strip("`")] = cells
    assert list(rows) == [str(m) for m in DEFAULT_METRICS]  # all 27, in report order
    for metric in DEFAULT_METRICS:
        _n, _name, axis, _formula, direction, aggregation, _default, _na = rows[str(metric)]
        assert axis == metric.axis
        assert direction == ("↑" if metric.higher_is_better else "↓")
        assert aggregation == metric.aggregation


def test_crs_metrics_prints_every_formula_whole() -> None:
    """The text listing shows each formula in full (it used to stop at the docstring's first line, in the
    middle of a sentence: "ES = |{quoted citations q : q counts (rules S1-S5), cites a review of a")."""
    from typer.testing import CliRunner

    from groundtrace.cli import app

    result = CliRunner().invoke(app, ["crs", "metrics"])
    assert result.exit_code == 0, result.output
    listing = " ".join(result.output.split())
    for metric in DEFAULT_METRICS:
        assert " ".join(metric.formula.split()) in listing, metric.name
