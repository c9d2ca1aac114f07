"""``groundtrace catalog db upgrade|status``, ``catalog export``, and ``catalog enrich|evaluate --db``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from groundtrace.cli.apps import catalog_app
from groundtrace.cli.console import err_console, print_error

DB_HELP = (
    "Store URL: sqlite:///PATH.db (default file groundtrace.db) or postgresql+psycopg2://user@host:port/db."
)

db_app = typer.Typer(help="The catalog store: migrations and status.", no_args_is_help=True)
catalog_app.add_typer(db_app, name="db")


def _open(db: str, migrate: bool = True) -> Any:
    from groundtrace.catalog.store import CatalogStore, StoreError

    try:
        return CatalogStore(db, migrate=migrate)
    except StoreError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


@db_app.command("upgrade")
def db_upgrade(db: str = typer.Option("sqlite:///groundtrace.db", "--db", help=DB_HELP)) -> None:
    """Create the store or bring its schema to the newest migration."""
    from groundtrace.catalog.store import StoreError
    from groundtrace.catalog.store.migrate import current_revision, make_engine, redact, upgrade

    try:
        engine = make_engine(db)
        before = current_revision(engine)
        after = upgrade(engine)
    except StoreError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    typer.echo(f"{redact(db)}: schema {before or 'empty'} -> {after}")


@db_app.command("status")
def db_status(
    db: str = typer.Option("sqlite:///groundtrace.db", "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the runs as JSON."),
) -> None:
    """Show the schema revision and the runs of a store (SKUs done / failed, LLM calls, cost)."""
    store = _open(db, migrate=False)
    runs = store.runs()
    if as_json:
        typer.echo(json.dumps(runs, indent=2, default=str))
        return
    for r in runs:
        typer.echo(
            f"{r['id']} {r['name']} [{r['status']}] engine={r['engine']} judge={r['judge']} "
            f"model={r['model'] or '-'}: {r['skus_done']} SKUs done, {r['skus_failed']} failed, "
            f"{r['llm_calls']} LLM calls, ${r['cost_usd']:.6f}"
        )
    if not runs:
        typer.echo("no runs")


@catalog_app.command("export")
def export_cmd(
    db: str = typer.Option(..., "--db", help=DB_HELP),
    out: Path = typer.Option(..., "--out", help="JSONL file, or Parquet when it ends in .parquet."),
    run: str = typer.Option(
        None, "--run", help="Run name or id whose decisions are exported (default: newest)."
    ),
) -> None:
    """Export published values with their evidence and the run's decisions, sorted (two exports diff)."""
    from groundtrace.catalog.store import StoreError
    from groundtrace.catalog.store.export import export_rows, write_export

    store = _open(db, migrate=False)
    try:
        rows = export_rows(store, run)
        path = write_export(rows, out)
    except (StoreError, ImportError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    typer.echo(f"{len(rows)} rows -> {path}")


def enrich_into_store(
    skus: Path,
    db: str,
    config: Any,
    comp: Any,
    options: Any,
    *,
    gold: Path | None,
    templates: Path | None,
    as_json: bool,
    no_progress: bool,
) -> None:
    """``catalog enrich --db``: run :func:`enrich_to_store` with a progress bar (rate and ETA)."""
    from groundtrace.catalog.store import StoreError
    from groundtrace.catalog.store.runner import enrich_to_store
    from groundtrace.cli.progress import track

    err = err_console()
    store = _open(db)

    def show(text: str) -> None:
        err.print(text, markup=False, highlight=False, soft_wrap=True)

    with track("catalog enrich --db", unit="SKUs", disable=no_progress or as_json) as bar:

        def started(n: int) -> None:
            bar.update(total=n)

        def progress(_outcome: object) -> None:
            bar.update(advance=1)

        try:
            summary = enrich_to_store(
                skus,
                store,
                config,
                options,
                components=comp,
                progress=progress,
                on_issue=show,
                on_start=started,
            )
        except (StoreError, ImportError) as exc:
            print_error(exc)
            raise typer.Exit(2) from None
    report = None
    if gold is not None:
        from groundtrace.catalog.store.evaluate import evaluate_store
        from groundtrace.catalog.templates import load_templates

        report = evaluate_store(store, gold, templates=load_templates(templates), runs=[summary.run_name])
    if as_json:
        payload = summary.model_dump(mode="json")
        if report is not None:
            payload["evaluation"] = report.to_dict()
        typer.echo(json.dumps(payload, indent=2))
    else:
        for line in summary.lines():
            typer.echo(line)
        if report is not None:
            report.print()
    if summary.skus_failed:
        print_error(
            f"{summary.skus_failed} SKUs failed (listed above); run the same command again to retry them"
        )
        raise typer.Exit(1)


def evaluate_store_cmd(
    db: str,
    gold: Path,
    templates: Path | None,
    runs: list[str] | None,
    json_out: Path | None,
    html_out: Path | None,
) -> None:
    """``catalog evaluate --db``: score the store's runs and print / write the report."""
    from groundtrace.catalog.store import StoreError
    from groundtrace.catalog.store.evaluate import evaluate_store
    from groundtrace.catalog.templates import TemplateError, load_templates

    store = _open(db, migrate=False)
    try:
        template_set = load_templates(templates)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--templates") from exc
    try:
        report = evaluate_store(store, gold, templates=template_set, runs=runs)
    except StoreError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    if not report.runs:
        print_error(f"{db}: the store holds no run to evaluate")
        raise typer.Exit(1)
    for issue in report.issues:
        typer.echo(issue, err=True)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    if html_out is not None:
        html_out.parent.mkdir(parents=True, exist_ok=True)
        html_out.write_text(report.to_html(), encoding="utf-8")
    report.print()
    for path in (json_out, html_out):
        if path is not None:
            typer.echo(f"wrote {path}")
