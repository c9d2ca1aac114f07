"""``groundtrace catalog templates|import|evaluate``: templates, dataset import and evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from groundtrace.cli.apps import catalog_app
from groundtrace.cli.catalog_files import exclude_titles
from groundtrace.cli.catalog_names import names
from groundtrace.cli.console import print_error

templates_app = typer.Typer(
    help="List, show and generate category attribute templates (YAML).", no_args_is_help=True
)
catalog_app.add_typer(templates_app, name="templates")


@templates_app.command("list")
def templates_list(
    directory: Path = typer.Option(
        None, "--dir", help="Template directory (default: the built-in templates)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the category templates with their attributes."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from groundtrace.catalog.templates import TemplateError, load_templates

    try:
        templates = load_templates(directory)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if as_json:
        typer.echo(json.dumps([t.model_dump(mode="json") for t in templates], indent=2, ensure_ascii=False))
        return
    table = Table(title=f"{len(templates)} templates")
    for column in ("category", "aliases", "attributes", "safety-critical"):
        table.add_column(column)
    for t in templates:
        table.add_row(
            *(
                escape(cell)
                for cell in (  # template files are user data: never markup
                    t.category,
                    ", ".join(t.aliases),
                    ", ".join(a.slug for a in t.attributes),
                    ", ".join(a.slug for a in t.attributes if a.safety_critical) or "-",
                )
            )
        )
    Console().print(table)


@templates_app.command("show")
def templates_show(
    category: str = typer.Argument(
        ..., help="A category, alias or taxonomy path (routed like the pipeline)."
    ),
    directory: Path = typer.Option(
        None, "--dir", help="Template directory (default: the built-in templates)."
    ),
) -> None:
    """Show which template a category routes to, as YAML."""
    from groundtrace.catalog.templates import TemplateError, dump_template, load_templates

    try:
        templates = load_templates(directory)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--dir") from exc
    template, how = templates.resolve(category)
    if template is None:
        typer.echo(f"no template for {category!r}", err=True)
        raise typer.Exit(1)
    typer.echo(f"# {category!r} -> {template.category} ({how})")
    typer.echo(dump_template(template))


@templates_app.command("coverage")
def templates_coverage(
    skus: Path = typer.Argument(..., exists=True, dir_okay=False, help="skus.jsonl (from `catalog import`)."),
    directory: Path = typer.Option(
        None, "--dir", help="Template directory (default: the built-in templates)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Which template each category of a SKU file routes to (and how), and which categories have none
    (their SKUs get no attributes). Exit 1 when some SKUs have no template."""
    from collections import Counter

    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.templates import TemplateError, load_templates

    try:
        templates = load_templates(directory)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--dir") from exc
    rows, issues = read_jsonl_models(skus, SKU)
    for issue in issues:
        typer.echo(str(issue), err=True)
    counts = Counter(s.category for s in rows)
    routed = []
    for category, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        template, how = templates.resolve(category)
        routed.append({"category": category, "skus": n, "template": template.category if template else None,
                       "how": how})  # fmt: skip
    missing = sum(r["skus"] for r in routed if r["template"] is None)
    if as_json:
        typer.echo(json.dumps({"categories": routed, "skus_without_template": missing}, indent=2))
    else:
        table = Table(title=f"{len(routed)} categories, {len(rows)} SKUs, {missing} without a template")
        for column in ("category", "SKUs", "template", "how"):
            table.add_column(column)
        for r in routed:  # category names are catalog data: never markup
            table.add_row(escape(r["category"]), str(r["skus"]), escape(r["template"] or "-"), r["how"])
        Console(width=200).print(table)
    if missing:
        raise typer.Exit(1)


def _write_templates(templates: list, out: Path, made_by: str) -> None:
    """One ``<slug>.yaml`` per template in ``out``, each headed by how it was made; one line per file."""
    from groundtrace.catalog.importers.base import slugify
    from groundtrace.catalog.templates import dump_template

    out.mkdir(parents=True, exist_ok=True)
    for template in templates:
        path = out / f"{slugify(template.category)}.yaml"
        path.write_text(f"# generated by {made_by}\n" + dump_template(template), encoding="utf-8")
        typer.echo(f"{path}: {len(template.attributes)} attributes")


@templates_app.command("generate")
def templates_generate(
    from_wdc: Path = typer.Option(
        ..., "--from-wdc", exists=True, dir_okay=False, help="WDC-PAVE descriptions.csv (';'-separated)."
    ),
    out: Path = typer.Option(..., "--out", help="Directory for one YAML template per WDC category."),
) -> None:
    """Generate templates from the WDC-PAVE attribute descriptions (one per category)."""
    from groundtrace.catalog.importers.wdc_pave import templates_from_wdc

    try:
        templates, issues = templates_from_wdc(from_wdc)
    except ValueError as exc:  # no usable header: nothing to generate from
        print_error(exc)
        raise typer.Exit(2) from None
    for issue in issues:
        typer.echo(str(issue), err=True)
    _write_templates(templates, out, f"`groundtrace catalog templates generate --from-wdc {from_wdc.name}`")


@templates_app.command("from-gold")
def templates_from_gold_cmd(
    skus: Path = typer.Option(
        ...,
        "--skus",
        exists=True,
        dir_okay=False,
        help="skus.jsonl of the TRAIN split (from `catalog import`).",
    ),
    gold: Path = typer.Option(
        ..., "--gold", exists=True, dir_okay=False, help="gold.jsonl of the same TRAIN split."
    ),
    out: Path = typer.Option(..., "--out", help="Directory for one YAML template per category."),
    max_vocab: int = typer.Option(
        15,
        "--max-vocab",
        min=0,
        help="Observed values become recommended_values when there are at most this many.",
    ),
    exclude_titles_of: Path = typer.Option(
        None,
        "--exclude-titles-of",
        exists=True,
        dir_okay=False,
        help="skus.jsonl of the split you will evaluate on: train SKUs with one of its titles are left out "
        "(the shared OA-Mine / AE-110K validation files are subsets of their train files).",
    ),
) -> None:
    """Build typed templates for schema-less datasets (OA-Mine, AE-110K) from a train split's gold.

    Use only a train split: the templates must never see the values they are evaluated on.
    """
    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.importers.train_templates import templates_from_gold
    from groundtrace.catalog.model import SKU, GoldLabel

    sku_rows, issues = read_jsonl_models(skus, SKU)
    gold_rows, gold_issues = read_jsonl_models(gold, GoldLabel)
    for issue in issues + gold_issues:
        typer.echo(str(issue), err=True)
    sku_rows, gold_rows = exclude_titles(sku_rows, gold_rows, exclude_titles_of)
    templates = templates_from_gold(sku_rows, gold_rows, max_vocab=max_vocab)
    if not templates:
        print_error("no gold label names a SKU of --skus; nothing to build")
        raise typer.Exit(1)
    _write_templates(templates, out, f"`groundtrace catalog templates from-gold` from {gold.name}")


@catalog_app.command("import")
def import_cmd(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="Dataset file to import."),
    format: str = typer.Option(
        ...,
        "--format",
        "-f",
        help=f"Importer by registry name: {names('groundtrace.catalog.importers:IMPORTERS')}.",
    ),
    out: Path = typer.Option(..., "--out", help="Output directory for skus.jsonl and gold.jsonl."),
    limit: int = typer.Option(None, "--limit", min=1, help="Import at most N SKUs."),
    as_json: bool = typer.Option(False, "--json", help="Print the import report as JSON."),
) -> None:
    """Import a product dataset into skus.jsonl + gold.jsonl (malformed lines reported, rest kept)."""
    from groundtrace.catalog.importers import IMPORTERS, import_file
    from groundtrace.core.registry import UnknownNameError

    try:
        IMPORTERS.canonical(format)
    except UnknownNameError as exc:
        raise typer.BadParameter(str(exc), param_hint="--format") from exc
    report, _ = import_file(format, file, out, limit=limit)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        for issue in report.issues:
            typer.echo(issue, err=True)
        typer.echo(
            f"{report.format}: {report.skus} SKUs, {report.gold} gold labels "
            f"({report.gold_with_value} with value, {report.gold_not_applicable} n/a), "
            f"{report.errors} errors, {report.warnings} warnings -> {out}"
        )


@catalog_app.command("evaluate")
def evaluate_cmd(
    results: Path = typer.Option(
        None, "--results", exists=True, dir_okay=False, help="AttributeResult JSONL (enrich output)."
    ),
    db: str = typer.Option(
        None,
        "--db",
        help="Evaluate the runs of a catalog store instead of --results (adds exposure-weighted coverage, "
        "runs side by side, cost per SKU and per write, the binary-judge ablation).",
    ),
    run: list[str] = typer.Option(
        None, "--run", help="--db: a run name or id (repeatable; default: every run)."
    ),
    html_out: Path = typer.Option(
        None,
        "--html",
        dir_okay=False,
        help="Also write an HTML report here: the headline (coverage at --target-precision), the "
        "precision/coverage plot over θ, per-attribute θ for the policy and the error table with examples "
        "(--db: the store report).",
    ),
    markdown_out: Path = typer.Option(
        None,
        "--markdown",
        dir_okay=False,
        help="--results: also write the report as Markdown here (the plot beside it as <name>.svg).",
    ),
    target: float = typer.Option(
        0.95, "--target-precision", min=0.5, max=1.0, help="Precision of the headline 'coverage at P'."
    ),
    gold: Path = typer.Option(
        ..., "--gold", exists=True, dir_okay=False, help="GoldLabel JSONL (import output)."
    ),
    skus: Path = typer.Option(
        None,
        "--skus",
        exists=True,
        dir_okay=False,
        help="skus.jsonl, to name the category of SKUs with gold but no result.",
    ),
    templates: Path = typer.Option(
        None,
        "--templates",
        file_okay=False,
        help="Template directory giving each attribute's kind/unit (default: the built-in templates).",
    ),
    model: Path = typer.Option(
        None,
        "--model",
        exists=True,
        dir_okay=False,
        help="Learned model file (`catalog train`): judge values with the templates stored in it "
        "(unless --templates is given).",
    ),
    scope: str = typer.Option(
        "union",
        "--scope",
        help="union: gold pairs without result count as misses; results: only pairs present in the results.",
    ),
    json_out: Path = typer.Option(None, "--json", help="Also write the full report as JSON here."),
) -> None:
    """Score results against gold: coverage at the target precision (headline) and the θ that gives it,
    accuracy, coverage, judge-supported rate, publish coverage, agreement, the error table."""
    from groundtrace.catalog.evaluation.scoring import evaluate
    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.model import SKU, AttributeResult, GoldLabel
    from groundtrace.catalog.templates import TemplateError, load_templates

    if scope not in ("union", "results"):
        raise typer.BadParameter("must be 'union' or 'results'", param_hint="--scope")
    if (results is None) == (db is None):
        raise typer.BadParameter(
            "give exactly one of --results FILE or --db URL", param_hint="--results/--db"
        )
    if db is not None and markdown_out is not None:
        raise typer.BadParameter("--markdown is written for --results only", param_hint="--markdown")
    if db is not None:
        from groundtrace.cli.catalog_store_cmd import evaluate_store_cmd

        evaluate_store_cmd(db, gold, templates, run or None, json_out, html_out)
        return
    result_rows, issues = read_jsonl_models(results, AttributeResult)
    gold_rows, gold_issues = read_jsonl_models(gold, GoldLabel)
    issues += gold_issues
    categories = None
    if skus is not None:
        sku_rows, sku_issues = read_jsonl_models(skus, SKU)
        issues += sku_issues
        categories = {s.sku_id: s.category for s in sku_rows}
    for issue in issues:
        typer.echo(str(issue), err=True)
    try:
        template_set = load_templates(templates)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--templates") from exc
    if model is not None and templates is None:  # the templates the learned model was trained with
        from groundtrace.cli.catalog_files import model_templates

        template_set = model_templates(model) or template_set
    report = evaluate(
        result_rows,
        gold_rows,
        templates=template_set,
        categories=categories,
        scope=scope,  # type: ignore[arg-type]
        target_precision=target,
    )
    report.issues = [str(i) for i in issues] + report.issues
    if json_out is not None:  # written first: the report survives whatever happens while printing
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    from groundtrace.catalog.evaluation.report import print_report

    print_report(report)
    for path in _write_documents(report, html_out, markdown_out):
        typer.echo(f"wrote {path}")
    if json_out is not None:
        typer.echo(f"wrote {json_out}")


def _write_documents(report: Any, html_out: Path | None, markdown_out: Path | None) -> list[Path]:
    """The HTML and Markdown reports (with the plot: inline SVG, resp. ``<name>.svg`` beside the file)."""
    if html_out is None and markdown_out is None:
        return []
    from groundtrace.catalog.evaluation.plots import curves_svg
    from groundtrace.catalog.evaluation.render import markdown, to_html

    counts = {a: g.metrics["coverage_gold"].denominator for a, g in report.per_attribute.items()}
    svg = curves_svg(report.thresholds, counts) if report.thresholds is not None else None
    written = []
    if html_out is not None:
        html_out.parent.mkdir(parents=True, exist_ok=True)
        html_out.write_text(to_html(report, svg), encoding="utf-8")
        written.append(html_out)
    if markdown_out is not None:
        markdown_out.parent.mkdir(parents=True, exist_ok=True)
        plot = None
        if svg is not None:
            plot_path = markdown_out.with_suffix(".svg")
            plot_path.write_text(svg, encoding="utf-8")
            written.append(plot_path)
            plot = plot_path.name
        markdown_out.write_text(markdown(report, plot), encoding="utf-8")
        written.append(markdown_out)
    return written
