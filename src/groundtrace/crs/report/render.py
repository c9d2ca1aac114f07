"""Leaderboard renderers: Markdown, CSV (long format), LaTeX (booktabs) and JSON.

Per setting, the **main table** holds the metrics of :data:`~.leaderboard.MAIN` (accuracy, grounding,
recovery) with latency and cost, rows in report order (:mod:`.leaderboard`: upper bounds, sorted runs,
lower bounds), each cell ``value`` with its 95% CI and, ranx-style, the letters of the runs it is
significantly better than (Markdown: Unicode superscripts ``0.300ᵇ``; LaTeX ``0.300$^{b}$``). The wide
tables (every headline metric, every metric, the tests, breakdowns) follow, folded in ``<details>`` in
Markdown.
"""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

from groundtrace.crs.metrics import parse_metric
from groundtrace.crs.report.tables import HEADLINE, LOWER, MAIN, UPPER, all_metrics, discrimination

if TYPE_CHECKING:
    from groundtrace.crs.report.leaderboard import Report, RunRow

#: ranx's superscript letters (``q`` has no Unicode superscript; ranx's stand-in is kept)
SUPERSCRIPT = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ۹ʳˢᵗᵘᵛʷˣʸᶻ", strict=True))
BOUND_NOTE = {UPPER: "upper bound", LOWER: "lower bound"}


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _cell(report: Report, label: str, setting: str, metric: str) -> str:
    row = next(r for r in report.rows if r.label == label and r.setting == setting)
    cell = row.cells.get(metric)
    if cell is None:
        return "unavailable" if metric in row.unavailable else "—"
    if cell.ci_low is None:
        return fmt(cell.value)
    return f"{fmt(cell.value)} [{fmt(cell.ci_low)}, {fmt(cell.ci_high)}]"


def latency_text(usage: dict[str, float]) -> str:
    """``0.0123 / 0.0456`` (mean / p95 seconds per turn), ``—`` when not recorded."""
    if not usage:
        return "—"
    return f"{usage['latency_mean_s']:.4f} / {usage['latency_p95_s']:.4f}"


def cost_text(usage: dict[str, float]) -> str:
    """``1.2345 (812+64 tok/turn)``-style total cost with tokens, ``—`` when not recorded."""
    if not usage:
        return "—"
    tokens = int(usage["prompt_tokens"] + usage["completion_tokens"])
    return f"{usage['cost_usd']:.4f} ({tokens} tokens)"


def _md_text(text: str) -> str:
    """Untrusted text (labels, cities, notes) for Markdown prose: ``&``, ``<`` and ``>`` as entities, so a
    viewer shows them as characters and never renders them as HTML (Markdown passes raw HTML through)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_escape(text: str) -> str:
    """Untrusted text for a Markdown table cell: :func:`_md_text`, ``|`` escaped, one line."""
    return _md_text(text).replace("|", "\\|").replace("\n", " ")


def superscript(letters: list[str]) -> str:
    """ranx-style superscript of row letters for text tables (``^(aa)`` for letters past ``z``)."""
    return "".join(SUPERSCRIPT.get(x, f"^({x})") for x in letters)


def row_name(row: RunRow) -> str:
    """The label with its role: ``oracle (upper bound)``, ``tfidf (baseline)``."""
    role = BOUND_NOTE.get(row.bound or "") or ("baseline" if row.baseline else "")
    return f"{row.label} ({role})" if role else row.label


def sort_line(report: Report, setting: str) -> str:
    """How the rows are ordered and what the superscripts mean, in one paragraph."""
    metric = report.sort_by.get(setting)
    order = f"Sorted by {metric}, best first" if metric else "Not sorted (no run has the sort metric)"
    bounds = "bounds (upper: reads the gold; lower: chance) at the ends" + (
        ", tested too" if report.test_bounds else ", not tested"
    )
    tested = [r for r in report.setting_rows(setting) if r.tested]
    mixed = report.datasets.get(setting, 1)
    warning = (
        f" Warning: these runs answer {mixed} different sets of dialogues (datasets, splits or limits; "
        "see the notes): rows of different sets do not compare."
        if mixed > 1
        else ""
    )
    if not report.tests_of(setting):
        return (
            f"{order}; {bounds}. No significance test in this setting (fewer than two runs to compare)."
            + warning
        )
    base = report.baseline.get(setting)
    against = (
        "every two lettered runs"
        if base is None
        else f"each lettered run against the baseline {base} ({next(r.letter for r in tested if r.baseline)})"
    )
    return (
        f"{order}; {bounds}. Superscripts: significantly better than the run of that letter on that column "
        f"(sign-flip permutation test per dialogue, Holm-adjusted over the {len(report.tests)} tests of "
        f"this report, p < {report.alpha:g}); tested: {against}.{warning}"
    )


def _main_cell(row: RunRow, metric: str) -> str:
    cell = row.cells.get(metric)
    if cell is None:
        return "unavailable" if metric in row.unavailable else "—"
    text = fmt(cell.value) + superscript(row.beats.get(metric, []))
    return text if cell.ci_low is None else f"{text} [{fmt(cell.ci_low)}, {fmt(cell.ci_high)}]"


def discrimination_line(report: Report, setting: str, metrics: list[str]) -> str:
    """``Discrimination on this data (oracle − random): recall@1 0.875 · cgs 0.000 · ...`` for the main
    table's metrics; ``""`` when the setting lacks the oracle or random run."""
    values = discrimination(report, setting)
    if all(values.get(m) is None for m in metrics):
        return ""
    shown = " · ".join(f"{m} {fmt(values.get(m))}" for m in metrics)
    return (
        f"Discrimination on this data (oracle − random): {shown}. A metric near 0 cannot tell the gold "
        "reader from chance here (CGS saturates on extractive answers; evidence_support does not)."
    )


def _main_markdown(report: Report, setting: str) -> list[str]:
    rows = report.setting_rows(setting)
    metrics = [m for m in MAIN[setting] if any(m in r.cells or m in r.unavailable for r in rows)]
    lines = [
        _md_text(sort_line(report, setting)),
        "",
        "| # | system | " + " | ".join(metrics) + " | latency (s) | cost (USD) |",
        "|---|---|" + "---|" * len(metrics) + "---|---|",
    ]
    for r in rows:
        cells = " | ".join(_main_cell(r, m) for m in metrics)
        latency = f"{r.usage['latency_mean_s']:.4f}" if r.usage else "—"
        cost = f"{r.usage['cost_usd']:.4f}" if r.usage else "—"
        lines.append(f"| {r.letter} | {_md_escape(row_name(r))} | {cells} | {latency} | {cost} |")
    line = discrimination_line(report, setting, metrics)
    return lines + (["", line] if line else [])


def markdown(report: Report) -> str:
    """Per setting the main table (module docstring), then — folded — every headline metric and every
    metric (value [95% CI]); then tests, breakdowns and notes."""
    lines = ["# TRACE-CRS leaderboard", ""]
    for setting in report.settings():
        rows = report.setting_rows(setting)
        metrics = [m for m in HEADLINE[setting] if any(m in r.cells for r in rows)]
        lines += [f"## {setting.capitalize()} set", "", *_main_markdown(report, setting), ""]
        lines += [
            "<details><summary>Headline metrics, usage and unscorable turns</summary>",
            "",
            "| system | "
            + " | ".join(metrics)
            + " | unscorable turns | latency mean / p95 (s) | LLM cost (USD) |",
            "|---|" + "---|" * len(metrics) + "---|---|---|",
        ]
        for r in rows:
            cells = " | ".join(_cell(report, r.label, setting, m) for m in metrics)
            lines.append(
                f"| {_md_escape(r.label)} | {cells} | {r.unscorable_turns}/{r.n_turns} | "
                f"{latency_text(r.usage)} | {cost_text(r.usage)} |"
            )
        lines += [
            "",
            (
                f"Values: run aggregate [bootstrap 95% CI, {report.resamples} resamples of dialogues, "
                f"seed {report.seed}]. t2r: lower is better."
            ),
            "",
            "</details>",
            "",
            "<details><summary>All metrics</summary>",
            "",
            f"### All metrics, {setting} set",
            "",
            "| metric | axis | better | "
            + " | ".join(_md_escape(r.label) for r in rows)
            + " | discrimination (oracle − random) |",
            "|---|---|---|" + "---|" * (len(rows) + 1),
        ]
        spread = discrimination(report, setting)
        for m in all_metrics(report, setting):
            spec = parse_metric(m)
            arrow = "↑" if spec.higher_is_better else "↓"
            cells = " | ".join(_cell(report, r.label, setting, m) for r in rows)
            lines.append(f"| {m} | {spec.axis} | {arrow} | {cells} | {fmt(spread.get(m))} |")
        unavailable = sorted({f"{m}: {why}" for r in rows for m, why in r.unavailable.items()})
        lines += [""] + [f"Unavailable (not 0) — {u}." for u in unavailable] + ([""] if unavailable else [])
        lines += ["</details>", ""]
    if report.tests:
        lines += [
            "## Paired significance tests",
            "",
            (
                f"{len(report.tests)} tests ({'all pairs' if report.all_pairs else 'against the baseline'}; "
                f"main-table metrics). Significant: p Holm < {report.alpha:g}."
            ),
            "",
            (
                "| setting | metric | A | B | units | dialogues | mean A | mean B | Δ "
                "| p perm. | p Holm | p Wilcoxon |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for t in report.tests:
            lines.append(
                f"| {t.setting} | {t.metric} | {_md_escape(t.a)} | {_md_escape(t.b)} | {t.n} | "
                f"{t.n_dialogues} | {fmt(t.mean_a)} | "
                f"{fmt(t.mean_b)} | {fmt(t.mean_diff)} | {t.p_permutation:.4g} | {t.p_holm:.4g} | "
                f"{t.p_wilcoxon:.4g} |"
            )
        lines.append("")
    for by, groups in report.breakdown.items():
        if not groups:
            continue
        lines += [f"## Breakdown by {by}", ""]
        keys = sorted({k for g in groups.values() for k in g})
        for key in keys:
            metrics = sorted(
                {m for g in groups.values() for m in g.get(key, {}) if m != "dialogues"},
                key=lambda m: list(HEADLINE["closed"] + HEADLINE["open"]).index(m),
            )
            lines += [
                f"**{_md_escape(key)}**",
                "",
                f"| {by} | dialogues | " + " | ".join(metrics) + " |",
                "|---|---|" + "---|" * len(metrics),
            ]
            for group, per_run in groups.items():
                vals = per_run.get(key)
                if vals is None:
                    continue
                lines.append(
                    f"| {_md_escape(group)} | {int(vals.get('dialogues') or 0)} | "
                    + " | ".join(fmt(vals.get(m)) for m in metrics)
                    + " |"
                )
            lines.append("")
    if report.closed_vs_open:
        cols = list(report.closed_vs_open[0])
        lines += ["## Closed vs open set", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for row in report.closed_vs_open:
            lines.append(
                "| "
                + " | ".join(_md_escape(str(row[c])) if c == "system" else fmt(row[c]) for c in cols)
                + " |"
            )
        lines.append("")
    if report.notes:
        lines += ["## Notes", ""] + [f"- {_md_text(n)}" for n in report.notes] + [""]
    return "\n".join(lines)


def csv_text(report: Report) -> str:
    """Long format: one line per (run, metric) with value, CI and n."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["system", "label", "setting", "metric", "value", "ci_low", "ci_high", "n", "run"])
    for r in report.rows:
        for metric, c in r.cells.items():
            writer.writerow(
                [
                    r.system,
                    r.label,
                    r.setting,
                    metric,
                    "" if c.value is None else repr(c.value),
                    "" if c.ci_low is None else repr(c.ci_low),
                    "" if c.ci_high is None else repr(c.ci_high),
                    c.n,
                    r.path,
                ]
            )
    return buf.getvalue()


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # OT1 fonts print a bare < > as ¡ ¿
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def _latex_cell(row: RunRow, metric: str, best: float | None, tested_letters: str) -> str:
    """``value`` (bold when ``best``), ranx superscript + phantom letters, ± half the CI width."""
    c = row.cells.get(metric)
    if c is None or c.value is None:
        return "--"
    text = f"{c.value:.3f}"
    if best is not None and c.value == best:
        text = rf"\textbf{{{text}}}"
    letters = "".join(row.beats.get(metric, []))
    if tested_letters:  # ranx: the letters not shown are phantoms, so the columns stay aligned
        phantom = "".join(x for x in tested_letters if x not in letters)
        text += rf"$^{{{letters}}}$" if letters else ""
        text += rf"\hphantom{{$^{{{phantom}}}$}}" if phantom else ""
    if c.ci_low is not None and c.ci_high is not None:
        text += rf"{{\scriptsize$\pm${(c.ci_high - c.ci_low) / 2:.3f}}}"
    return text


def latex(report: Report) -> str:
    """One booktabs table per setting: the main-table metrics (module docstring) with latency and cost,
    ``#`` letters and ranx-style superscripts, bounds in italics between rules, the best value among the
    other runs in bold, ± half the CI width."""
    parts: list[str] = [
        "% TRACE-CRS leaderboard (groundtrace crs report).",
        r"% Needs \usepackage{booktabs} in the preamble (\toprule, \midrule, \bottomrule).",
    ]
    for setting in report.settings():
        rows = report.setting_rows(setting)
        metrics = [m for m in MAIN[setting] if any(m in r.cells for r in rows)]
        best: dict[str, float] = {}
        contenders = [r for r in rows if r.bound is None] or rows  # bounds compete only among themselves
        for m in metrics:
            vals = [r.cells[m].value for r in contenders if m in r.cells]
            present = [v for v in vals if v is not None]
            if present and len(rows) > 1:
                best[m] = max(present) if parse_metric(m).higher_is_better else min(present)
        letters = "".join(r.letter for r in rows if r.tested)
        head = " & ".join(latex_escape(m) for m in metrics)
        body: list[str] = []
        for i, r in enumerate(rows):
            if i and (r.bound != rows[i - 1].bound):
                body.append(r"\midrule")
            name = latex_escape(row_name(r))
            name = rf"\textit{{{name}}}" if r.bound else name
            bold = any(r is c for c in contenders)
            cells = [_latex_cell(r, m, best.get(m) if bold else None, letters) for m in metrics]
            usage = ["--", "--"]
            if r.usage:
                usage = [f"{r.usage['latency_mean_s']:.4f}", f"{r.usage['cost_usd']:.4f}"]
            body.append(" & ".join([r.letter or "--", name, *cells, *usage]) + r" \\")
        tests = report.tests_of(setting)
        base = report.baseline.get(setting)
        against = "all pairs" if base is None else f"against {latex_escape(base)}"
        stars = (
            " Superscripts: significantly better than the system of that letter (sign-flip permutation test "
            rf"per dialogue, Holm-corrected, $p < {report.alpha:g}$; {against}"
            + ("" if report.test_bounds else "; bounds not tested")
            + ")."
            if tests
            else ""
        )
        sort = report.sort_by.get(setting)
        order = f"sorted by {latex_escape(sort)}" if sort else "unsorted"
        parts.append(
            "\n".join(
                [
                    r"\begin{table}[t]",
                    r"\centering",
                    r"\small",
                    rf"\begin{{tabular}}{{cl{'r' * len(metrics)}rr}}",
                    r"\toprule",
                    rf"\# & System & {head} & Latency (s) & Cost (USD) \\",
                    r"\midrule",
                    *body,
                    r"\bottomrule",
                    r"\end{tabular}",
                    (
                        rf"\caption{{TRACE-CRS {setting}-set results, {order} (± half-width of the bootstrap "
                        rf"95\% CI, {report.resamples} resamples; best non-bound value in bold).{stars}}}"
                    ),
                    rf"\label{{tab:trace-crs-{setting}}}",
                    r"\end{table}",
                ]
            )
        )
    return "\n".join(parts[:2]) + "\n\n" + "\n\n".join(parts[2:]) + "\n"


def json_text(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
