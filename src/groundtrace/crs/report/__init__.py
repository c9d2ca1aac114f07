"""TRACE-CRS reports: leaderboards with bootstrap CIs, paired tests, breakdowns, plots, HTML, calibration.

``build_report(run_dirs, out)`` writes ``leaderboard.md``, ``leaderboard.csv``, ``leaderboard.tex``,
``leaderboard.json``, ``axes_radar.{png,svg}``, ``axes_bar.{png,svg}``, ``report.html`` and
``dialogues/*.html`` (one page per dialogue, :mod:`.dialogue_page`) into ``out``.
Numbers: :mod:`.leaderboard` and :mod:`.stats`; renderers: :mod:`.render`, :mod:`.plots`, :mod:`.html`;
human calibration: :mod:`.calibrate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from groundtrace.crs.evaluation.loading import load_records, report_dialogues, resolve_kb
from groundtrace.crs.report.dialogue_page import write_dialogue_pages
from groundtrace.crs.report.html import render_html, select_turns
from groundtrace.crs.report.leaderboard import Report, build
from groundtrace.crs.report.load import RunData, label_runs, load_run
from groundtrace.crs.report.plots import plot_axes
from groundtrace.crs.report.render import csv_text, json_text, latex, markdown

__all__ = ["Report", "RunData", "build", "build_report", "load_run"]


def _evidence_sources(runs: list[RunData], dataset: Path | None, kb: str | None, notes: list[str]):
    """Dialogues by id and the KB for the HTML evidence view (best effort: a note when unavailable).

    The dataset is read once by the lean reader (``load_records``: ids, manifest, KB hash); the dialogues
    the pages show are parsed from their lines when asked for (``report_dialogues``: a ``DialogueLines``
    mapping), as ``crs leaderboard`` does."""
    path = dataset or next((Path(r.info["dataset"]) for r in runs if r.info.get("dataset")), None)
    if path is None or not path.exists():
        notes.append("HTML: no dataset available (pass --dataset): responses shown without evidence links")
        return {}, None
    try:
        data = load_records(path, "all")
        knowledge = resolve_kb(kb, data.manifest, data)
    except (ValueError, FileNotFoundError) as exc:
        notes.append(f"HTML: evidence view unavailable: {exc}")
        return {}, None
    return report_dialogues(data, path) or {}, knowledge


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
    sort_by: str | None = None,
    baseline: str | None = None,
    all_pairs: bool = False,
    test_bounds: bool = False,
    dialogue_pages: int | None = 50,
) -> list[Path]:
    """Compute and write every report artefact into ``out``; returns the written paths.

    ``dialogues`` (with ``knowledge_base``): the dialogues for the evidence view and the dialogue pages,
    a list or a mapping by id (e.g. ``crs.dataset.lean_reader.DialogueLines``, parsed on demand).

    ``sort_by``, ``baseline``, ``all_pairs``, ``test_bounds``: :func:`.leaderboard.build`.
    ``dialogue_pages``: how many dialogue pages (:mod:`.dialogue_page`) to write — the dialogues of the
    turns ``report.html`` shows, in order, at most this many (``None``: every dialogue of the runs; 0:
    none).
    """
    if not run_dirs:
        raise ValueError("no run folders given")
    runs = [load_run(p) for p in run_dirs]
    label_runs(runs)
    report: Report = build(
        runs,
        resamples=resamples,
        seed=seed,
        sort_by=sort_by,
        baseline=baseline,
        all_pairs=all_pairs,
        test_bounds=test_bounds,
    )
    by_label = {(r.setting, r.label): r for r in runs}
    runs = [by_label[(row.setting, row.label)] for row in report.rows]  # pages list runs in table order
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
        by_id = dialogues if isinstance(dialogues, Mapping) else {d.dialogue_id: d for d in dialogues}
        kb_obj = knowledge_base
    else:
        by_id, kb_obj = _evidence_sources(runs, dataset, kb, report.notes)
    predictions = [r.predictions() for r in runs]
    values = [
        {(t["dialogue_id"], int(t["turn_index"])): t["values"] for t in r.scores["turns"]} for r in runs
    ]
    if dialogue_pages is None:
        wanted = [d for r in runs for d in r.dialogue_ids()]
    else:
        shown = [
            p.dialogue_id
            for ps, v in zip(predictions, values, strict=True)
            for p in select_turns(ps, v, html_turns)
        ]
        wanted = list(dict.fromkeys(shown))[:dialogue_pages]
    per_turn = [
        (r.label, r.setting, {(p.dialogue_id, p.turn_index): p for p in ps}, v)
        for r, ps, v in zip(runs, predictions, values, strict=True)
    ]
    pages = write_dialogue_pages(out, wanted, by_id, per_turn, kb_obj) if wanted and by_id else {}
    written += [out / href for href in pages.values()]
    page = render_html(
        report,
        [(r.label, r.setting, ps) for r, ps in zip(runs, predictions, strict=True)],
        by_id,
        kb_obj,
        plots,
        turns_per_run=html_turns,
        turn_values=values,
        pages=pages,
    )
    (out / "report.html").write_text(page, encoding="utf-8")
    written.append(out / "report.html")
    return written
