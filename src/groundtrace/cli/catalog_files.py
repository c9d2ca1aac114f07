"""Helpers the catalog commands share (training sets without held-out titles, the templates a learned
model file carries), in one module the command modules import, so none imports another."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.console import print_error


def exclude_titles(sku_rows: list, gold_rows: list, held_out: Path | None) -> tuple[list, list]:
    """``--exclude-titles-of``: drop the SKUs (and their gold) whose title occurs in ``held_out``; says how
    many on stderr."""
    if held_out is None:
        return sku_rows, gold_rows
    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.importers.train_templates import without_titles
    from groundtrace.catalog.model import SKU

    held, issues = read_jsonl_models(held_out, SKU)
    for issue in issues:
        typer.echo(str(issue), err=True)
    kept, gold_kept, dropped = without_titles(sku_rows, gold_rows, held)
    typer.echo(f"left out {dropped} of {len(sku_rows)} SKUs whose title is in {held_out}", err=True)
    return kept, gold_kept


def model_templates(model_path: Path):  # type: ignore[no-untyped-def]  # -> TemplateSet | None
    """The templates stored in a learned model file (version 4), None when it has none (the note why goes
    to stderr); a file that cannot be read is a one-line error and exit 2."""
    from groundtrace.catalog.scout.learned.model import ModelFileError, load_model, notes

    try:
        model = load_model(model_path)
    except ModelFileError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from exc
    for note in notes(model, model_path):
        typer.echo(f"note: {note}", err=True)
    return model.template_set()


def model_templates_dir(model_path: Path, stack) -> Path | None:  # type: ignore[no-untyped-def]
    """:func:`model_templates` written as YAML into a temporary folder (removed when ``stack``, an
    :class:`contextlib.ExitStack`, closes) for the commands that take a template folder; None: none stored."""
    import tempfile

    from groundtrace.catalog.importers import slugify
    from groundtrace.catalog.templates import dump_template

    templates = model_templates(model_path)
    if templates is None:
        return None
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="groundtrace-model-templates-")))
    for i, template in enumerate(templates):
        name = slugify(template.category) or "category"
        (folder / f"{i:04d}-{name[:60]}.yaml").write_text(dump_template(template), encoding="utf-8")
    return folder
