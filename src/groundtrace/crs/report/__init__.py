"""TRACE-CRS reports: leaderboards with bootstrap CIs, paired tests, breakdowns, plots, HTML, calibration.

``build_report(run_dirs, out)`` writes ``leaderboard.md``, ``leaderboard.csv``, ``leaderboard.tex``,
``leaderboard.json``, ``axes_radar.{png,svg}``, ``axes_bar.{png,svg}`` and ``report.html`` into ``out``.
Numbers: :mod:`.leaderboard` and :mod:`.stats`; renderers: :mod:`.render`, :mod:`.plots`, :mod:`.html`;
human calibration: :mod:`.calibrate`.
"""

from __future__ import annotations

from pathlib import Path

from groundtrace.crs.report.leaderboard import Report, build
from groundtrace.crs.report.load import RunData, label_runs, load_run

__all__ = ["Report", "RunData", "build", "build_report", "load_run"]


def _evidence_sources(runs: list[RunData], dataset: Path | None, kb: str | None, notes: list[str]):
    """Dialogues by id and the KB for the HTML evidence view (best effort: a note when unavailable)."""
    from groundtrace.crs.evaluation.loading import load_split, resolve_kb

    path = dataset or next((Path(r.info["dataset"]) for r in runs if r.info.get("dataset")), None)
    if path is None or not path.exists():
        notes.append("HTML: no dataset available (pass --dataset): responses shown without evidence links")
        return {}, None
    try:
        data = load_split(path, "all")
        knowledge = resolve_kb(kb, data.manifest, data.dialogues)
    except (ValueError, FileNotFoundError) as exc:
        notes.append(f"HTML: evidence view unavailable: {exc}")
        return {}, None
    return {d.dialogue_id: d for d in data.dialogues}, knowledge


def build_report(
    run_dirs: list[Path] | list[str],
    out: Path | str,
    *,
    resamples: int = 1000,
    seed: int = 0,
    dataset: Path | None = None,
    kb: str | None = None,
    knowledge_base=None,
    dialogues=None,
    html_turns: int = 40,
) -> list[Path]:
    """Compute and write every report artefact into ``out``; returns the written paths."""
    from groundtrace.crs.report.html import render_html
    from groundtrace.crs.report.plots import plot_axes
    from groundtrace.crs.report.render import csv_text, json_text, latex, markdown

    if not run_dirs:
        raise ValueError("no run folders given")
    runs = [load_run(p) for p in run_dirs]
    label_runs(runs)
    report: Report = build(runs, resamples=resamples, seed=seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in (
        ("leaderboard.md", markdown(report)),
        ("leaderboard.csv", csv_text(report)),
        ("leaderboard.tex", latex(report)),
        ("leaderboard.json", json_text(report)),
    ):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    plots = plot_axes(report, out)
    written += plots
    if knowledge_base is not None and dialogues is not None:
        by_id, kb_obj = {d.dialogue_id: d for d in dialogues}, knowledge_base
    else:
        by_id, kb_obj = _evidence_sources(runs, dataset, kb, report.notes)
    page = render_html(
        report,
        [(r.label, r.setting, r.predictions()) for r in runs],
        by_id,
        kb_obj,
        plots,
        turns_per_run=html_turns,
        turn_values=[
            {(t["dialogue_id"], int(t["turn_index"])): t["values"] for t in r.scores["turns"]} for r in runs
        ],
    )
    (out / "report.html").write_text(page, encoding="utf-8")
    written.append(out / "report.html")
    return written
