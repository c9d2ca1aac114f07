"""``groundtrace crs validate|export|hydrate|schema|migrate``: check, release (redacted), restore and
upgrade dataset files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import err_console, print_error


def _load_kb_or_exit(kb: Path | None):  # returns KnowledgeBase | None
    if kb is None:
        return None

    from groundtrace.crs.kb.store import KBIntegrityError, NotAKnowledgeBaseError, load_kb

    try:
        return load_kb(kb)
    except (FileNotFoundError, NotAKnowledgeBaseError, KBIntegrityError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None


@crs_app.command("validate")
def validate(
    path: Path = typer.Argument(
        ..., help="A dataset JSONL file or a dataset folder (train/validation/test.jsonl)."
    ),
    kb: Path = typer.Option(
        None,
        "--kb",
        help="KB file: also check ids, review references, quotes and the builder's QC rules against it.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the problems as JSON lines (with the rule's code and name)."
    ),
) -> None:
    """Check a dataset against the JSON Schema and the KB; print every problem; exit 1 on any error."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.dataset.validate import validate_path

    knowledge = _load_kb_or_exit(kb)
    try:
        problems = validate_path(path, knowledge)
    except FileNotFoundError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    if as_json:
        for p in problems:
            typer.echo(p.model_dump_json())
    else:
        console = Console()
        for p in problems:
            colour = "red" if p.severity == "error" else "yellow"
            console.print(
                f"{escape(p.location())}: [{colour}]{p.severity}[/{colour}] {p.code} {p.name}: "
                f"{escape(p.message)}",
                soft_wrap=True,
            )
        note = (
            "" if knowledge is not None else " (no --kb: KB, reference, quote and builder-QC checks skipped)"
        )
        console.print(f"{errors} error(s), {warnings} warning(s){note}")
    if errors:
        raise typer.Exit(1)


@crs_app.command("schema")
def schema(
    out: Path = typer.Option(..., "--out", help="Where to write the JSON Schema of a dataset line."),
) -> None:
    """Write the versioned JSON Schema of TRACE-CRS dialogues (generated from the pydantic models)."""
    from groundtrace.crs.dataset.files import write_json_schema

    typer.echo(f"wrote {write_json_schema(out)}")


@crs_app.command("migrate")
def migrate(
    dataset: Path = typer.Argument(..., help="Dataset folder or JSONL file in any readable format version."),
    out: Path = typer.Option(..., "--out", help="Folder for the dataset in the current format."),
) -> None:
    """Rewrite a dataset in the current format (v1 files are read by migrating each line)."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.dataset.files import migrate_dataset
    from groundtrace.crs.schema import SCHEMA_VERSION

    console = Console()
    try:
        report = migrate_dataset(dataset, out)
    except (FileNotFoundError, ValueError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    old = ", ".join(f"{n} line(s) of format {v}" for v, n in sorted(report.old_versions.items()))
    for name, n in report.files.items():
        console.print(f"{escape(name)}: {n} dialogue(s)")
    console.print(f"wrote {escape(str(out))} in format {SCHEMA_VERSION} ({old or 'no old lines'})")
    for error in report.errors:
        console.print(f"  [yellow]{escape(str(error))}[/yellow]", soft_wrap=True)
    if report.errors:
        raise typer.Exit(1)


@crs_app.command("export")
def export(
    dataset: Path = typer.Argument(..., help="Dataset folder or JSONL file to release."),
    out: Path = typer.Option(..., "--out", help="Release folder to write."),
    kb: Path = typer.Option(..., "--kb", help="KB the dataset was built on (review texts for redaction)."),
    redact: bool = typer.Option(
        True, "--redact/--no-redact", help="Replace quoted review text by placeholders (Yelp terms)."
    ),
) -> None:
    """Write a release: redacted dialogues + redaction.json + schema + KB ids (never review text)."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.dataset.files import MANIFEST, read_dataset, write_dialogues, write_json_schema
    from groundtrace.crs.dataset.placeholders import RedactionError
    from groundtrace.crs.dataset.release import kb_id_export, redact_dataset

    console = Console()
    knowledge = _load_kb_or_exit(kb)
    assert knowledge is not None
    if redact:
        try:
            report = redact_dataset(dataset, out, {rid: r.text for rid, r in knowledge.reviews.items()})
        except (FileNotFoundError, RedactionError) as exc:
            print_error(exc)
            raise typer.Exit(2) from None
        problems = report.problems
        console.print(
            f"redacted {report.dialogues} dialogue(s) in {escape(', '.join(report.files))}: {report.quotes} "
            f"quote(s), {report.near_verbatim} near-verbatim"
        )
    else:
        data = read_dataset(dataset)
        out.mkdir(parents=True, exist_ok=True)
        for split, dialogues in data.splits.items():
            write_dialogues(out / f"{split}.jsonl", dialogues)
        if dataset.is_dir() and (dataset / MANIFEST).is_file():
            shutil.copyfile(dataset / MANIFEST, out / MANIFEST)
        problems = data.errors
        console.print(
            "[yellow]not redacted: this folder contains review text and must not be redistributed[/yellow]"
        )
    write_json_schema(out / "dialogue.schema.json")
    ids = kb_id_export(
        {rid: r.poi_id for rid, r in knowledge.reviews.items()}, knowledge.pois, knowledge.content_hash
    )
    (out / "kb_ids.json").write_text(json.dumps(ids, indent=1) + "\n", encoding="utf-8")
    for p in problems:
        console.print(f"  {escape(str(p))}", soft_wrap=True)
    console.print(f"wrote {escape(str(out))}")
    if any("left out" in p.message for p in problems):
        raise typer.Exit(1)


@crs_app.command("hydrate")
def hydrate(
    release: Path = typer.Argument(..., help="Redacted release folder (with redaction.json)."),
    yelp_reviews: Path = typer.Option(..., "--yelp-reviews", help="Your yelp_academic_dataset_review.json."),
    out: Path = typer.Option(..., "--out", help="Folder for the hydrated dataset."),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Show a progress bar by bytes read."
    ),
) -> None:
    """Restore quoted review text into a redacted release from your own Yelp review file."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    from groundtrace.core.files.errors import LineError
    from groundtrace.crs.dataset.placeholders import RedactionError
    from groundtrace.crs.dataset.release import (
        collect_review_slices,
        hydrate_dataset,
        needed_spans,
    )

    console = Console()
    if not yelp_reviews.is_file():
        print_error(f"{yelp_reviews} not found")
        raise typer.Exit(2)
    try:
        needed = needed_spans(release)
    except FileNotFoundError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    errors: list[LineError] = []
    with Progress(
        "{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        console=err_console(),
        disable=not progress,
    ) as bar:
        task = bar.add_task("reviews", total=yelp_reviews.stat().st_size)
        slices = collect_review_slices(yelp_reviews, needed, errors, lambda n: bar.advance(task, n))
    try:
        report = hydrate_dataset(release, slices, out)
    except (FileNotFoundError, RedactionError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    console.print(
        f"hydrated {report.dialogues} dialogue(s): {report.restored} quote(s) restored from "
        f"{len(needed)} review(s)"
    )
    for line in [*report.missing, *report.mismatched, *map(str, report.problems), *map(str, errors)]:
        console.print(f"  [yellow]{escape(line)}[/yellow]", soft_wrap=True)
    for name, same in report.identical.items():
        state = (
            "byte-identical to the original"
            if same
            else ("DIFFERS from the original" if same is False else "no original hash")
        )
        console.print(f"  {escape(name)}: {state}")
    if not report.ok:
        console.print(
            f"[red]{len(report.missing)} missing, {len(report.mismatched)} changed quote(s); see above[/red]"
        )
        raise typer.Exit(1)
