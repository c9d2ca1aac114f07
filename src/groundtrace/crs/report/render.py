"""Leaderboard renderers: Markdown, CSV (long format), LaTeX (booktabs) and JSON."""

from __future__ import annotations

import csv
import io
import json

from groundtrace.crs.report.leaderboard import HEADLINE, Report, all_metrics


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


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report) -> str:
    """Leaderboards per setting (headline metrics, then all metrics; value [95% CI]), tests, breakdowns
    and notes."""
    from groundtrace.crs.metrics import parse_metric

    lines = ["# TRACE-CRS leaderboard", ""]
    for setting in report.settings():
        rows = [r for r in report.rows if r.setting == setting]
        metrics = [m for m in HEADLINE[setting] if any(m in r.cells for r in rows)]
        lines += [
            f"## {setting.capitalize()} set",
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
            f"### All metrics, {setting} set",
            "",
            "| metric | axis | better | " + " | ".join(_md_escape(r.label) for r in rows) + " |",
            "|---|---|---|" + "---|" * len(rows),
        ]
        for m in all_metrics(report, setting):
            spec = parse_metric(m)
            arrow = "↑" if spec.higher_is_better else "↓"
            cells = " | ".join(_cell(report, r.label, setting, m) for r in rows)
            lines.append(f"| {m} | {spec.axis} | {arrow} | {cells} |")
        unavailable = sorted({f"{m}: {why}" for r in rows for m, why in r.unavailable.items()})
        lines += [""] + [f"Unavailable (not 0) — {u}." for u in unavailable] + ([""] if unavailable else [])
    if report.tests:
        lines += [
            "## Paired significance tests",
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
        lines += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
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
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def latex(report: Report) -> str:
    """One booktabs table per setting: headline metrics, value with ± half CI width; best value in bold."""
    from groundtrace.crs.metrics import parse_metric

    parts: list[str] = []
    for setting in report.settings():
        rows = [r for r in report.rows if r.setting == setting]
        metrics = [m for m in HEADLINE[setting] if any(m in r.cells for r in rows)]
        best: dict[str, float] = {}
        for m in metrics:
            vals = [r.cells[m].value for r in rows if m in r.cells and r.cells[m].value is not None]
            if vals:
                best[m] = max(vals) if parse_metric(m).higher_is_better else min(vals)
        head = " & ".join(latex_escape(m) for m in metrics)
        body = []
        for r in rows:
            cells = []
            for m in metrics:
                c = r.cells.get(m)
                if c is None or c.value is None:
                    cells.append("--")
                    continue
                text = f"{c.value:.3f}"
                if c.value == best.get(m) and len(rows) > 1:
                    text = rf"\textbf{{{text}}}"
                if c.ci_low is not None and c.ci_high is not None:
                    text += rf"{{\scriptsize$\pm${(c.ci_high - c.ci_low) / 2:.3f}}}"
                cells.append(text)
            body.append(latex_escape(r.label) + " & " + " & ".join(cells) + r" \\")
        parts.append(
            "\n".join(
                [
                    r"\begin{table}[t]",
                    r"\centering",
                    r"\small",
                    rf"\begin{{tabular}}{{l{'r' * len(metrics)}}}",
                    r"\toprule",
                    rf"System & {head} \\",
                    r"\midrule",
                    *body,
                    r"\bottomrule",
                    r"\end{tabular}",
                    (
                        rf"\caption{{TRACE-CRS {setting}-set results (± half-width of the bootstrap 95\% CI, "
                        rf"{report.resamples} resamples).}}"
                    ),
                    rf"\label{{tab:trace-crs-{setting}}}",
                    r"\end{table}",
                ]
            )
        )
    return "\n\n".join(parts) + "\n"


def json_text(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
