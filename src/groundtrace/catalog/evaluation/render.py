"""Markdown and HTML reports of an :class:`~groundtrace.catalog.evaluation.scoring.EvaluationReport`:
the headline (coverage of gold values at the target precision and the policy threshold θ that gives
it), what to do with it (a policy snippet with θ per attribute), the precision/coverage plot
(:mod:`.plots`) and curve table, the overall metrics, per-attribute results and the error table with
examples (:mod:`.errors`).

Category names, attribute names, values and quotes are untrusted catalog text: Markdown escapes them with
:func:`md_text` (HTML special characters as entities, Markdown punctuation backslash-escaped, line
breaks as spaces); the HTML page is a jinja2 template with autoescaping and :func:`html.escape` on every
value (only the SVG this module produced is inserted as markup).
"""

from __future__ import annotations

import html
import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from groundtrace.catalog.evaluation.curves import CurvePoint, Headline
from groundtrace.catalog.evaluation.errors import KIND_TITLES
from groundtrace.catalog.evaluation.metrics import METRICS
from groundtrace.catalog.evaluation.scoring import EvaluationReport

GRID = (0.99, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.0)  # θ rows of the curve table
_SLUG = re.compile(r"^[a-z0-9_]+$")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")
MAX_ATTRIBUTE_ROWS = 40


def md_text(text: object) -> str:
    """Untrusted text safe inside Markdown (and a Markdown table cell): module docstring."""
    s = html.escape(str(text), quote=False)
    s = re.sub(r"\s+", " ", s).strip()
    return _MD_SPECIAL.sub(r"\\\1", s)


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _ratio(num: int, den: int) -> str:
    return f"{pct(num / den if den else None)} ({num}/{den})"


def point_at(points: list[CurvePoint], theta: float) -> CurvePoint | None:
    """The curve point a policy threshold ``theta`` gives: the last point with θ ≥ ``theta``."""
    found = None
    for p in points:
        if p.theta >= theta:
            found = p
    return found


def headline_text(h: Headline, what: str = "extracted") -> str:
    """One sentence for a headline (plain text; no catalog data in it)."""
    if h.point is None:
        best = pct(h.best_precision)
        return f"no threshold reaches {h.target:.0%} precision on {what} values (best precision {best})"
    p = h.point
    return (
        f"{pct(p.coverage)} of gold values ({p.covered}/{p.gold_values}) at θ = {p.theta:.3f}: "
        f"{what} values with confidence ≥ θ were right {_ratio(p.correct, p.judged)}"
    )


def policy_thresholds(report: EvaluationReport) -> list[tuple[str, float, str]]:
    """``(attribute, θ, comment)`` for the policy snippet: the θ of each attribute's coverage at the
    target precision, 1.0 (blocks every value: confidences stop at 0.99) where none reaches it. Only
    attribute names that are valid slugs are listed."""
    out = []
    th = report.thresholds
    if th is None:
        return out
    for attribute, h in th.per_attribute.items():
        if not _SLUG.match(attribute):
            continue
        if h.point is None:
            if h.best_precision is not None:
                out.append((attribute, 1.0, f"never reaches {th.target:.0%} (best {pct(h.best_precision)})"))
            continue
        p = h.point
        out.append((attribute, round(p.theta, 3), f"{pct(p.coverage)} of {p.gold_values} gold values"))
    return out


def _context(report: EvaluationReport) -> dict[str, Any]:
    th = report.thresholds
    attributes = []
    for attribute, group in report.per_attribute.items():
        h = th.per_attribute.get(attribute) if th else None
        attributes.append(
            {
                "name": attribute,
                "gold_values": group.metrics["coverage_gold"].denominator,
                "accuracy": group.metrics["accuracy"],
                "coverage_gold": group.metrics["coverage_gold"],
                "publish": group.metrics["publish_coverage"],
                "headline": h,
            }
        )
    attributes.sort(key=lambda a: (-a["gold_values"], a["name"]))
    grid = []
    if th is not None:
        for theta in GRID:
            p, w = point_at(th.curve, theta), point_at(th.curve_written, theta)
            grid.append({"theta": theta, "extracted": p, "written": w})
    return {"report": report, "th": th, "attributes": attributes[:MAX_ATTRIBUTE_ROWS], "grid": grid,
            "more_attributes": max(0, len(attributes) - MAX_ATTRIBUTE_ROWS)}  # fmt: skip


def _cell(p: CurvePoint | None) -> str:
    if p is None:
        return "— | —"
    return f"{_ratio(p.correct, p.judged)} | {_ratio(p.covered, p.gold_values)}"


def markdown(report: EvaluationReport, plot_file: str | None = None) -> str:
    """The Markdown report; ``plot_file`` (a path relative to the Markdown file) embeds the plot."""
    ctx = _context(report)
    th = ctx["th"]
    lines = ["# TRACE-Catalog evaluation", ""]
    if th is not None:
        lines += [
            f"**Coverage at {th.target:.0%} precision: {pct(th.overall.coverage)}** — "
            + headline_text(th.overall)
            + ".",
            "",
            f"Written values (action WRITE) at the same bar: {headline_text(th.overall_written, 'written')}.",
            "",
            "## What to do",
            "",
            *_advice(report),
            "",
            "## Precision and coverage over θ",
            "",
        ]
        if plot_file:
            lines += [f"![precision and coverage over the threshold]({plot_file})", ""]
        lines += [
            "| θ ≥ | precision (extracted) | coverage (extracted) | precision (written) | coverage (written) |",  # noqa: E501
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['theta']:.2f} | {_cell(r['extracted'])} | {_cell(r['written'])} |" for r in ctx["grid"]
        ]
        lines.append("")
    lines += ["## Overall metrics", "", "| metric | value | formula |", "|---|---|---|"]
    for name, m in report.overall.metrics.items():
        value = "—" if m.value is None else _ratio(m.numerator, m.denominator)
        lines.append(f"| {name} | {value} | {md_text(METRICS.get(name).formula)} |")
    lines += ["", "counts: " + ", ".join(f"{k}={v}" for k, v in report.counts.items()), ""]
    lines += _attribute_lines(ctx)
    lines += _error_lines(report)
    return "\n".join(lines) + "\n"


def _advice(report: EvaluationReport) -> list[str]:
    th = report.thresholds
    assert th is not None
    out = []
    if th.overall.point is None:
        out.append(
            f"- No single threshold publishes at {th.target:.0%} precision here: keep the values in "
            "review (policy `below_threshold: REVIEW`) or improve the extractor; the per-attribute θ below "
            "may still let the reliable attributes through."
        )
    else:
        out.append(
            f"- One threshold for everything: set `threshold: {th.overall.point.theta:.3f}` in a copy of the "
            "write policy and pass it with `catalog enrich --policy FILE`."
        )
    out += [
        "- Or one θ per attribute (more coverage where an attribute is reliable, nothing where it is not):",
        "",
        "```yaml",
        "attributes:",
        *(f"  {slug}: {{threshold: {theta}}}  # {note}" for slug, theta, note in policy_thresholds(report)),
        "```",
        "",
        (
            "- θ picked on these pairs is tuned on them: choose it on labelled SKUs you do not publish, "
            "and check it on another labelled sample before relying on it."
        ),
    ]
    return out


def _attribute_lines(ctx: dict[str, Any]) -> list[str]:
    th = ctx["th"]
    target = f"{th.target:.0%}" if th else "target"
    lines = [
        "## Per attribute",
        "",
        (
            "| attribute | gold values | accuracy | coverage of gold values | publish coverage "
            f"| coverage at {target} precision | θ |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for a in ctx["attributes"]:
        h = a["headline"]
        at = pct(h.coverage) if h is not None and h.point is not None else "never"
        theta = f"{h.point.theta:.3f}" if h is not None and h.point is not None else "—"
        lines.append(
            f"| {md_text(a['name'])} | {a['gold_values']} | {_metric(a['accuracy'])} | "
            f"{_metric(a['coverage_gold'])} | {_metric(a['publish'])} | {at} | {theta} |"
        )
    if ctx["more_attributes"]:
        lines.append(f"\n{ctx['more_attributes']} more attributes in the JSON report.")
    return [*lines, ""]


def _metric(m: Any) -> str:
    return "—" if m.value is None else _ratio(m.numerator, m.denominator)


def _error_lines(report: EvaluationReport) -> list[str]:
    errors = report.errors
    if errors is None:
        return []
    lines = ["## Error table", "", "| outcome | pairs |", "|---|---|"]
    lines += [f"| {KIND_TITLES[k]} | {n} |" for k, n in errors.counts.items()]
    lines.append("")
    for kind, examples in errors.examples.items():
        lines += [
            f"### {KIND_TITLES[kind]} — examples",
            "",
            "| SKU | attribute | extracted | gold | confidence | action | quote |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in examples:
            conf = "—" if e.confidence is None else f"{e.confidence:.2f}"
            cells = [e.sku_id, e.attribute, e.predicted or "—", e.gold or "—"]
            lines.append(
                "| "
                + " | ".join(md_text(c) for c in cells)
                + f" | {conf} | {md_text(e.action or '—')} | {md_text(e.quote or '—')} |"
            )
        lines.append("")
    return lines


# -- HTML ---------------------------------------------------------------------------------------------
def _finalize(value: object) -> object:
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("groundtrace.catalog.evaluation", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        finalize=_finalize,
        keep_trailing_newline=True,
    )
    env.filters["pct"] = pct
    env.globals.update(ratio=_ratio, metric=_metric, kind_titles=KIND_TITLES, headline_text=headline_text)
    return env


def to_html(report: EvaluationReport, svg: str | None = None) -> str:
    """One self-contained HTML page (inline CSS and the SVG plot ``svg`` from :mod:`.plots`)."""
    ctx = _context(report)
    ctx["svg"] = Markup(_strip_xml_header(svg)) if svg else None
    ctx["metrics"] = [(name, m, METRICS.get(name).formula) for name, m in report.overall.metrics.items()]
    ctx["policy"] = policy_thresholds(report)
    return _environment().get_template("report.html.j2").render(**ctx)


def _strip_xml_header(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else ""
