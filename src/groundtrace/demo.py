"""The end-to-end demo behind ``groundtrace demo``: every capability, offline, on generated data.

Steps (all deterministic for a seed, no network, no model download):

1. TRACE-CRS knowledge base: the generated demo city, saved as SQLite with its content hash.
2. TRACE-CRS dataset: the five-stage builder (offline template realiser) → train/validation/test JSONL,
   JSON Schema, manifest and build report; then ``validate`` against the schema and the KB.
3. TRACE-CRS evaluation: the ``oracle`` and ``random`` reference systems and the offline baselines +
   ``trace-hybrid`` on the closed set, scored on the default metrics; the three axes printed — accuracy
   (R@1), grounding (the paper's CGS *and* ``evidence_support``: CGS saturates at ~1.0 on extractive
   answers, which quote reviews verbatim near every attribute word, so it cannot rank these systems) and
   rejection recovery — with each column's discrimination (oracle − random) under the table; a leaderboard
   (Markdown/CSV/LaTeX/JSON with bootstrap CIs), plots and the HTML report.
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

from groundtrace.crs.build.builder import build_dataset
from groundtrace.crs.dataset.validate import validate_path
from groundtrace.crs.evaluation.loading import load_split
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.systems import OFFLINE_SYSTEMS

DEMO_SYSTEMS: tuple[str, ...] = ("oracle", "random")
"""The reference systems; the demo also runs every offline system but ``dense`` (see :func:`demo_systems`)."""


def demo_systems() -> list[str]:
    """Oracle and random, then the offline systems. ``dense`` is left out and the hybrids run without the
    encoder: encoding the demo KB on 2 CPU cores costs minutes (``crs leaderboard`` runs them all)."""
    return [*DEMO_SYSTEMS, *(s for s in OFFLINE_SYSTEMS if s != "dense")]


#: the printed summary's metric columns: (heading, metric name in the run's table)
SUMMARY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("R@1 (accuracy)", "R@1"),
    ("CGS (grounding, paper)", "cgs"),
    ("evidence support (grounding)", "evidence_support"),
    ("recovery", "rejection_recovery"),
)

BoardRow = tuple[str, tuple[float | None, ...], float]


def summary_table(rows: list[BoardRow]) -> Table:
    """The demo's printed leaderboard: one row per system (``(name, values of SUMMARY_COLUMNS, seconds)``)
    in the report's order (:func:`_board_order`)."""
    board = Table(title="leaderboard (closed set, by R@1; bounds at the ends): the three axes")
    for col in ("system", *(head for head, _ in SUMMARY_COLUMNS), "seconds"):
        board.add_column(col, justify="left" if col == "system" else "right")
    for name, cells, seconds in sorted(rows, key=_board_order):  # as report.html orders them
        board.add_row(name, *(f"{v:.3f}" if v is not None else "-" for v in cells), f"{seconds:.1f}")
    return board


def discrimination_text(rows: list[BoardRow]) -> str:
    """``discrimination (oracle − random): R@1 0.875 · CGS 0.000 · ...`` (a column near 0 cannot tell the
    gold reader from chance on this data); ``""`` without both the oracle and the random row."""
    by_name = {name: cells for name, cells, _ in rows}
    if "oracle" not in by_name or "random" not in by_name:
        return ""
    parts = []
    for i, (head, _metric) in enumerate(SUMMARY_COLUMNS):
        a, b = by_name["oracle"][i], by_name["random"][i]
        parts.append(f"{head.split(' (')[0]} {a - b:.3f}" if a is not None and b is not None else f"{head} -")
    return "discrimination (oracle − random): " + " · ".join(parts)


def _value(table: Any, metric: str) -> float | None:
    """The run's aggregate of ``metric``; None when it was not scored or is unavailable."""
    try:
        return table.value(metric)  # type: ignore[no-any-return]
    except KeyError:
        return None


def _board_order(row: BoardRow) -> tuple[int, float, str]:
    """The report's order: the upper bound (oracle), the systems by R@1 best first, the lower bound."""
    name, (r1, *_), _ = row
    group = 0 if name == "oracle" else 2 if name == "random" else 1
    return (group, -(r1 if r1 is not None else -1.0), name)


def run_crs_demo(out_dir: Path, n_dialogues: int, seed: int, console: Console) -> dict[str, Path]:
    """Steps 1–3: KB, dataset, validation, reference-system runs and the report."""
    # deferred: the report suite loads scipy and jinja2 (~0.9 s); the demo's table helpers do not need them
    from groundtrace.crs.report.suite import run_suite

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
    rows: list[BoardRow] = []

    def show(name: str, _setting: str, run: Any, seconds: float) -> None:
        t = run.table
        rows.append((name, tuple(_value(t, metric) for _, metric in SUMMARY_COLUMNS), seconds))

    report_dir = out_dir / "report"
    run_suite(
        demo_systems(),
        dialogues,
        kb,
        report_dir,
        settings=("closed",),
        split="all",
        options={"hybrid-rrf": {"dense": False}, "trace-hybrid": {"dense": False}},
        dataset=str(dataset_dir),
        on_run=show,
    )
    console.print(summary_table(rows))
    spread = discrimination_text(rows)
    if spread:
        console.print(spread, markup=False)
    artefacts["leaderboard"] = report_dir / "leaderboard.md"
    artefacts["html_report"] = report_dir / "report.html"
    return artefacts


def run_catalog_step(out_dir: Path, console: Console) -> dict[str, Path]:
    """Step 4: the demo catalog enriched offline and evaluated."""
    # deferred: the catalog demo loads scipy (~0.3 s) and the catalog stages; only step 4 needs them
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
