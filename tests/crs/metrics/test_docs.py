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
