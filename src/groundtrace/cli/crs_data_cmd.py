"""``groundtrace crs validate|export|import-release|hydrate|schema|migrate``: check, release (redacted),
restore and upgrade dataset files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer

from groundtrace.cli.apps import crs_app
from groundtrace.cli.console import print_error


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
    fmt: str = typer.Option(
        "groundtrace",
        "--format",
        help="'groundtrace': split files with ⟦Q:…⟧ placeholders + redaction.json (crs hydrate); "
        "'trace-release': the public release layout (gzipped data/ splits with numbered Q:N quote "
        "placeholders, knowledge_base/, card; crs import-release).",
    ),
    redact: bool = typer.Option(
        True, "--redact/--no-redact", help="Replace quoted review text by placeholders (Yelp terms)."
    ),
) -> None:
    """Write a release without review text, and its dataset card (README.md)."""
    if fmt not in ("groundtrace", "trace-release"):
        raise typer.BadParameter(
            f"unknown format {fmt!r}: 'groundtrace' or 'trace-release'", param_hint="--format"
        )
    knowledge = _load_kb_or_exit(kb)
    assert knowledge is not None
    if fmt == "trace-release":
        if not redact:
            raise typer.BadParameter("a trace-release is always redacted", param_hint="--no-redact")
        _export_trace_release(dataset, out, knowledge)
    else:
        _export_groundtrace(dataset, out, knowledge, redact)


def _export_trace_release(dataset: Path, out: Path, knowledge) -> None:
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.dataset.trace_release import export_release

    console = Console()
    try:
        report = export_release(dataset, knowledge, out)
    except (FileNotFoundError, ValueError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    splits = ", ".join(f"{s} {n}" for s, n in report.splits.items())
    console.print(
        f"wrote the release layout to {escape(str(out))}: {splits} dialogue(s), {report.quotes} quote(s) "
        f"({report.near_verbatim} near-verbatim), {report.pois} POIs, {report.reviews} reviews (no text)"
    )
    for p in report.problems:
        console.print(f"  {escape(str(p))}", soft_wrap=True)
    if any("left out" in p.message for p in report.problems):
        raise typer.Exit(1)


def _export_groundtrace(dataset: Path, out: Path, knowledge, redact: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.dataset.card import write_export_card
    from groundtrace.crs.dataset.files import MANIFEST, read_dataset, write_dialogues, write_json_schema
    from groundtrace.crs.dataset.placeholders import RedactionError
    from groundtrace.crs.dataset.release import kb_id_export, redact_dataset

    console = Console()
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
        try:
            data = read_dataset(dataset)
        except FileNotFoundError as exc:
            print_error(exc)
            raise typer.Exit(2) from None
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
    write_export_card(out, knowledge, redacted=redact)
    for p in problems:
        console.print(f"  {escape(str(p))}", soft_wrap=True)
    console.print(f"wrote {escape(str(out))}")
    if any("left out" in p.message for p in problems):
        raise typer.Exit(1)


@crs_app.command("import-release")
def import_release_cmd(
    release: Path = typer.Argument(
        ..., help="A release folder (data/*.jsonl.gz, knowledge_base/*.jsonl.gz)."
    ),
    yelp_dir: Path = typer.Option(
        None, "--yelp-dir", help="Your Yelp Open Dataset folder (yelp_academic_dataset_review.json is read)."
    ),
    yelp_reviews: Path = typer.Option(
        None, "--yelp-reviews", help="Your Yelp review file itself (instead of --yelp-dir)."
    ),
    out: Path = typer.Option(..., "--out", help="Dataset folder to write (split files, kb.sqlite, card)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress by bytes read."),
) -> None:
    """Hydrate a public release from your Yelp reviews into a dataset folder with its KB (kb.sqlite).

    Exits 1 (the rest still written) when a line, review or quote could not be restored: each is listed
    as file:line."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.cli.progress import track
    from groundtrace.crs.kb.yelp import REVIEW_FILE

    console = Console()
    if (yelp_dir is None) == (yelp_reviews is None):
        raise typer.BadParameter("give --yelp-dir or --yelp-reviews (one of them)", param_hint="--yelp-dir")
    review_file = yelp_reviews if yelp_reviews is not None else yelp_dir / REVIEW_FILE
    if not review_file.is_file():
        print_error(f"{review_file} not found" + (" (expected in --yelp-dir)" if yelp_dir else ""))
        raise typer.Exit(2)
    from groundtrace.crs.dataset.trace_release import import_release

    try:
        size = review_file.stat().st_size
        with track("crs import-release reviews", total=size, unit="bytes", disable=not progress) as bar:
            report = import_release(release, review_file, out, on_bytes=lambda n: bar.update(advance=n))
    except (FileNotFoundError, ValueError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    splits = ", ".join(f"{s} {n}" for s, n in report.splits.items())
    same = {True: "identical to the released one", False: "DIFFERS from the released one", None: "not stated"}
    console.print(
        f"wrote {escape(str(out))}: {splits} dialogue(s); KB {report.pois} POIs, {report.reviews} reviews "
        f"(content hash {report.kb_hash[:12]}…, {same[report.kb_identical]}) in kb.sqlite"
    )
    for p in report.problems:
        console.print(f"  [yellow]{escape(str(p))}[/yellow]", soft_wrap=True)
    if report.problems:
        console.print(f"[red]{len(report.problems)} problem(s); see above[/red]")
        raise typer.Exit(1)


@crs_app.command("hydrate")
def hydrate(
    release: Path = typer.Argument(..., help="Redacted release folder (with redaction.json)."),
    yelp_reviews: Path = typer.Option(..., "--yelp-reviews", help="Your yelp_academic_dataset_review.json."),
    out: Path = typer.Option(..., "--out", help="Folder for the hydrated dataset."),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Progress by bytes read (heartbeat lines when piped)."
    ),
) -> None:
    """Restore quoted review text into a redacted release from your own Yelp review file."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.cli.progress import track
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
    size = yelp_reviews.stat().st_size
    with track("crs hydrate reviews", total=size, unit="bytes", disable=not progress) as bar:
        slices = collect_review_slices(yelp_reviews, needed, errors, lambda n: bar.update(advance=n))
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
