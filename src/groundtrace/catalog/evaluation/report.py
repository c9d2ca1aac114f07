"""Rich console tables for an :class:`~groundtrace.catalog.evaluation.scoring.EvaluationReport`: overall
metrics with their formulas, counts and mixes, then per category and per attribute. Category and attribute
names are catalog data, shown escaped (never markup)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from groundtrace.catalog.evaluation.errors import KIND_TITLES
from groundtrace.catalog.evaluation.metrics import METRICS, MetricValue
from groundtrace.catalog.evaluation.scoring import EvaluationReport


def print_report(report: EvaluationReport, console: Any = None) -> None:
    """Print ``report`` as rich tables: overall metrics, then per category and per attribute."""
    console = console or Console()

    def pct(m: MetricValue) -> str:
        return "—" if m.value is None else f"{100 * m.value:.1f}% ({m.numerator}/{m.denominator})"

    overall = Table(title="TRACE-Catalog evaluation (overall)")
    overall.add_column("metric")
    overall.add_column("value", justify="right")
    overall.add_column("formula")
    for name, value in report.overall.metrics.items():
        overall.add_row(name, pct(value), METRICS.get(name).formula)
    console.print(overall)
    th = report.thresholds
    if th is not None:
        # deferred: the HTML renderer pulls in jinja2 (~60 ms), the console table needs only its headline
        from groundtrace.catalog.evaluation.render import headline_text

        console.print(
            Text(f"coverage at {th.target:.0%} precision: {headline_text(th.overall)}", style="bold"),
            highlight=False,
        )
        console.print(
            Text(f"written values: {headline_text(th.overall_written, 'written')}"), highlight=False
        )
    if report.errors is not None:
        console.print(
            "outcomes: " + ", ".join(f"{KIND_TITLES[k]}={n}" for k, n in report.errors.counts.items()),
            highlight=False,
        )
    console.print("counts: " + ", ".join(f"{k}={v}" for k, v in report.counts.items()))
    console.print(
        "verdicts (extracted): "
        + (", ".join(f"{k}={v}" for k, v in report.overall.verdicts_extracted.items()) or "none")
    )
    console.print("actions: " + (", ".join(f"{k}={v}" for k, v in report.overall.actions.items()) or "none"))
    shown = (
        "accuracy",
        "coverage",
        "coverage_gold",
        "abstention_accuracy",
        "judge_supported_rate",
        "publish_coverage",
        "pass_precision",
    )
    for title, groups in (("category", report.per_category), ("attribute", report.per_attribute)):
        table = Table(title=f"per {title}")
        table.add_column(title)
        table.add_column("pairs", justify="right")
        for name in shown:
            table.add_column(name, justify="right")
        for key, group in groups.items():
            table.add_row(
                escape(key),
                str(group.pairs),
                *(  # keys are catalog data: never markup
                    "—" if group.metrics[n].value is None else f"{100 * group.metrics[n].value:.1f}"
                    for n in shown
                ),
            )
        console.print(table)
    for issue in report.issues[:20]:
        console.print(Text(issue, style="yellow"), highlight=False)
