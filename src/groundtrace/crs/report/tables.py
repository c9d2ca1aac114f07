"""What the leaderboard's tables show, shared by the leaderboard (which builds a ``Report``)
and the renderers (Markdown, LaTeX, CSV, HTML): the headline and main-table metrics per setting, the bound
marks, the order of the all-metrics table and each metric's discrimination. A module of its own so the
renderers never import the leaderboard back (they read a report's fields only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groundtrace.crs.metrics import DEFAULT_METRICS

if TYPE_CHECKING:
    from groundtrace.crs.report.leaderboard import Report

HEADLINE: dict[str, tuple[str, ...]] = {
    "closed": (
        "recall@1",
        "recall@3",
        "mrr",
        "ndcg@3",
        "gs",
        "cgs",
        "evidence_support",
        "constraint_evidence",
        "citation_validity",
        "rejection_recovery",
        "task_success",
        "t2r",
    ),
    "open": (
        "open_recall@1",
        "open_recall@10",
        "open_mrr",
        "gs",
        "cgs",
        "evidence_support",
        "constraint_evidence",
        "citation_validity",
        "rejection_recovery",
        "task_success",
        "t2r",
    ),
}
#: the compact main table: accuracy (two), grounding (CGS and evidence support, which separates
#: extractive systems whose CGS is ~1.0), recovery; latency and cost are added by the renderers
MAIN: dict[str, tuple[str, ...]] = {
    "closed": ("recall@1", "mrr", "cgs", "evidence_support", "rejection_recovery"),
    "open": ("open_recall@1", "open_mrr", "cgs", "evidence_support", "rejection_recovery"),
}
UPPER, LOWER = "upper", "lower"


def all_metrics(report: Report, setting: str) -> list[str]:
    """Every metric with a value or an 'unavailable' mark in a run of ``setting``: the 27 in report order
    first, then any other requested metric."""
    rows = [r for r in report.rows if r.setting == setting]
    present = list(dict.fromkeys(m for r in rows for m in (*r.cells, *r.unavailable)))
    order = [str(m) for m in DEFAULT_METRICS]
    return [m for m in order if m in present] + [m for m in present if m not in order]


#: the (upper, lower) reference systems whose difference is a metric's discrimination
DISCRIMINATION_PAIR = ("oracle", "random")


def discrimination(report: Report, setting: str) -> dict[str, float | None]:
    """Per metric of :func:`all_metrics`: ``oracle − random`` on the runs of ``setting`` (module docstring);
    ``None`` when the setting lacks exactly one run of each system or either has no value for the metric.
    For a lower-is-better metric a useful value is negative."""
    rows = report.setting_rows(setting)
    pair = [[r for r in rows if r.system == name] for name in DISCRIMINATION_PAIR]
    metrics = all_metrics(report, setting)
    if any(len(found) != 1 for found in pair):
        return dict.fromkeys(metrics)
    upper, lower = pair[0][0], pair[1][0]
    out: dict[str, float | None] = {}
    for m in metrics:
        a, b = upper.cells.get(m), lower.cells.get(m)
        ok = a is not None and b is not None and a.value is not None and b.value is not None
        out[m] = float(a.value - b.value) if ok else None  # type: ignore[union-attr,operator]
    return out
