"""The end-to-end demo behind ``groundtrace demo``: every capability, offline, on generated data.

Steps (all deterministic for a seed, no network, no model download):

1. TRACE-CRS knowledge base: the generated demo city, saved as SQLite with its content hash.
2. TRACE-CRS dataset: the five-stage builder (offline template realiser) → train/validation/test JSONL,
   JSON Schema, manifest and build report; then ``validate`` against the schema and the KB.
3. TRACE-CRS evaluation: the ``oracle`` and ``random`` reference systems on the closed set, scored on
   the 25 metrics; a leaderboard (Markdown/CSV/LaTeX/JSON with bootstrap CIs), plots and the HTML report.
4. TRACE-Catalog: the demo catalog enriched offline (Scout → Judge → write policy) and evaluated
   against its gold labels.

This module sits above ``crs`` and ``catalog`` (they never import each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

DEMO_SYSTEMS: tuple[str, ...] = ("oracle", "random")


def run_crs_demo(out_dir: Path, n_dialogues: int, seed: int, console: Console) -> dict[str, Path]:
    """Steps 1–3: KB, dataset, validation, reference-system runs and the report."""
    from groundtrace.crs.build.builder import build_dataset
    from groundtrace.crs.dataset.validate import validate_path
    from groundtrace.crs.evaluation.loading import load_split
    from groundtrace.crs.evaluation.runner import run_system
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.kb.store import save_kb
    from groundtrace.crs.report import build_report
    from groundtrace.crs.systems.base import build_system

    artefacts: dict[str, Path] = {}
    console.rule("[bold]TRACE-CRS[/bold]")
    kb = generate_demo_kb(seed=seed)
    artefacts["kb"] = save_kb(kb, out_dir / "kb.sqlite", source=f"demo city (seed {seed})")
    console.print(
        f"knowledge base: {len(kb.pois)} POIs, {len(kb.reviews)} reviews → {artefacts['kb']}", markup=False
    )

    dataset_dir = out_dir / "dataset"
    report = build_dataset(kb, n_dialogues, seed, dataset_dir)
    artefacts["dataset"] = dataset_dir
    console.print(f"dataset: {_summarise(report)} → {dataset_dir}", markup=False)

    problems = validate_path(dataset_dir, kb)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise RuntimeError(f"demo dataset failed validation: {errors[0]}")
    console.print(f"validate: 0 errors ({len(problems)} warnings)")

    dialogues = load_split(dataset_dir, "all").dialogues
    run_dirs: list[Path] = []
    for name in DEMO_SYSTEMS:
        run_dir = out_dir / "runs" / name
        result = run_system(
            build_system(name),
            dialogues,
            kb,
            run_dir,
            setting="closed",
            split="all",
            dataset=str(dataset_dir),
        )
        run_dirs.append(run_dir)
        console.print(
            f"run {name}: R@1={result.table.value('R@1'):.3f}  "
            f"CGS={result.table.value('cgs'):.3f} → {run_dir}",
            markup=False,
        )
    report_dir = out_dir / "report"
    build_report(run_dirs, report_dir, dataset=dataset_dir, knowledge_base=kb, dialogues=dialogues)
    artefacts["leaderboard"] = report_dir / "leaderboard.md"
    artefacts["html_report"] = report_dir / "report.html"
    return artefacts


def run_catalog_step(out_dir: Path, console: Console) -> dict[str, Path]:
    """Step 4: the demo catalog enriched offline and evaluated."""
    from groundtrace.catalog.demo_catalog import run_catalog_demo

    console.rule("[bold]TRACE-Catalog[/bold]")
    outcome = run_catalog_demo(out_dir)
    for line in outcome.get("summary_lines", []):
        console.print(line, markup=False)
    metrics = outcome.get("metrics", {})
    if metrics:
        console.print(
            "evaluation: " + ", ".join(f"{k}={v:.3f}" for k, v in metrics.items() if isinstance(v, float))
        )
    return {k: Path(v) for k, v in outcome.get("paths", {}).items()}


def run_demo(
    out_dir: Path, n_dialogues: int = 200, seed: int = 7, console: Console | None = None
) -> dict[str, Path]:
    """Run every step offline into ``out_dir``; return the artefacts written, by name."""
    console = console or Console()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    console.print(Text.assemble(("groundtrace demo", "bold"), f" → {out_dir}"))
    artefacts = run_crs_demo(out_dir / "crs", n_dialogues, seed, console)
    artefacts.update({f"catalog_{k}": v for k, v in run_catalog_step(out_dir / "catalog", console).items()})
    table = Table(title="demo artefacts")
    table.add_column("what")
    table.add_column("where")
    for name, path in artefacts.items():
        table.add_row(name, Text(str(path)))  # a user's path is never markup
    console.print(table)
    if "catalog_store" in artefacts:
        for line in review_page_lines(artefacts["catalog_store"]):
            console.print(line, markup=False, soft_wrap=True)
    return artefacts


def review_page_lines(store_path: Path) -> list[str]:
    """How to open the review page (``catalog serve``, extra ``[web]``) on the demo's catalog store."""
    db = f"sqlite:///{Path(store_path).resolve()}"
    return [
        "review page for the demo's REVIEW items (pip install 'groundtrace[web]'):",
        f"  groundtrace catalog user add reviewer --db {db}",
        f"  groundtrace catalog serve --db {db}",
        "  then open http://127.0.0.1:8000/ and log in as reviewer",
    ]


def _summarise(report: Any) -> str:
    data = report.model_dump() if hasattr(report, "model_dump") else dict(report)
    keys = ("built", "rejection_share", "tiers", "qc_failures", "distinct_reviews_quoted")
    return ", ".join(f"{k}={data[k]}" for k in keys if k in data)
