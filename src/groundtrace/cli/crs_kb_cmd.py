"""``groundtrace crs kb build|info|demo``: build the TRACE-CRS knowledge base from Yelp, inspect it, or
generate the demo KB."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from groundtrace.cli.apps import kb_app
from groundtrace.cli.console import err_console, print_error

MAX_SHOWN = 200  # problems printed by `build`; all of them go to KB.summary.json


def _print_summary(summary: dict[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title=escape(title))
    table.add_column("city")
    for poi_type in ("restaurant", "hotel", "attraction"):
        table.add_column(poi_type, justify="right")
    for city, counts in (summary.get("cities") or {}).items():
        table.add_row(escape(city), *(str(counts.get(t, 0)) for t in ("restaurant", "hotel", "attraction")))
    console.print(table)
    console.print(
        escape(
            f"POIs: {summary.get('pois')}  reviews: {summary.get('reviews')}  hash: "
            f"{summary.get('content_hash')}"
        ),
        soft_wrap=True,
    )


def parse_per_type(text: str) -> dict[str, int]:
    """``"800"`` → 800 for every type; ``"restaurant=800,hotel=400"`` → those types only (others 0).

    Raises ValueError naming the bad part (unknown type, non-integer or negative count).
    """
    from groundtrace.crs.schema import POI_TYPES

    text = text.strip()
    if "=" not in text:
        try:
            count = int(text)
        except ValueError:
            raise ValueError(f"expected an integer or TYPE=N[,TYPE=N...], got {text!r}") from None
        if count < 0:
            raise ValueError(f"per-type target must be >= 0, got {count}")
        return {t: count for t in POI_TYPES}
    out: dict[str, int] = {t: 0 for t in POI_TYPES}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        if not sep or name not in POI_TYPES:
            raise ValueError(f"{part!r}: expected TYPE=N with TYPE one of {', '.join(POI_TYPES)}")
        try:
            out[name] = int(value)
        except ValueError:
            raise ValueError(f"{part!r}: {value.strip()!r} is not an integer") from None
        if out[name] < 0:
            raise ValueError(f"{part!r}: target must be >= 0")
    return out


def selection_config(config_file: Path | None, overrides: dict[str, Any]):  # -> SelectionConfig
    """The :class:`~groundtrace.crs.kb.select.SelectionConfig` of a YAML/JSON file (or the defaults),
    with every non-None ``overrides`` value replacing the file's; raises ValueError with the reason."""
    from pydantic import ValidationError

    from groundtrace.core.files.validation import validation_errors, validation_message
    from groundtrace.core.files.yaml_loader import YamlError, read_yaml
    from groundtrace.crs.kb.select import SelectionConfig

    doc = read_yaml(config_file) if config_file is not None else None  # YamlError is a ValueError
    if doc is not None and doc.data is not None and not isinstance(doc.data, dict):
        raise YamlError.at(doc.name, doc.line_of(()), "expected a mapping of SelectionConfig fields")
    data: dict[str, Any] = dict(doc.data or {}) if doc is not None else {}
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return SelectionConfig.model_validate(data)
    except ValidationError as exc:
        if doc is None:
            raise ValueError(validation_message(exc, model=SelectionConfig, limit=5)) from None
        errors = validation_errors(exc, file=doc.name, line=doc.line_of, model=SelectionConfig)
        raise YamlError(errors) from None


def _selection_defaults():  # SelectionConfig; imported lazily elsewhere, needed here for the help text
    from groundtrace.crs.kb.select import SelectionConfig

    return SelectionConfig()


_DEFAULTS = _selection_defaults()


def _per_type_default() -> str:
    targets = set(_DEFAULTS.per_type.values())
    if len(targets) == 1:
        return f"{targets.pop()} each"
    return ",".join(f"{k}={v}" for k, v in _DEFAULTS.per_type.items())


def _input_files(yelp_dir: Path | None, business: Path | None, reviews: Path | None) -> tuple[Path, Path]:
    """The business and review files: ``--yelp-dir`` (official names) or ``--business`` + ``--reviews``."""
    from groundtrace.crs.kb.yelp import yelp_files

    if yelp_dir is not None:
        if business is not None or reviews is not None:
            raise ValueError("give either --yelp-dir or --business and --reviews, not both")
        return yelp_files(yelp_dir)
    if business is None or reviews is None:
        raise ValueError("give --yelp-dir, or both --business FILE and --reviews FILE")
    for path in (business, reviews):
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
    return business, reviews


@kb_app.command("build")
def build(
    yelp_dir: Path = typer.Option(
        None,
        "--yelp-dir",
        help="Folder holding yelp_academic_dataset_{business,review}.json (or --business and --reviews).",
    ),
    business_file: Path = typer.Option(
        None,
        "--business",
        help="Yelp business JSONL file under any name (with --reviews; instead of --yelp-dir).",
    ),
    reviews_file: Path = typer.Option(
        None,
        "--reviews",
        help="Yelp review JSONL file under any name (with --business; instead of --yelp-dir).",
    ),
    out: Path = typer.Option(
        ..., "--out", help="KB file to write (SQLite); a KB.summary.json is written next to it."
    ),
    config_file: Path = typer.Option(
        None,
        "--config",
        help="YAML/JSON file of SelectionConfig fields (star_bands, band_allocation, oversample, ...); "
        "the options below override it.",
    ),
    cities: list[str] = typer.Option(
        None, "--cities", help="City to include (repeatable or comma-separated); default: top --n-cities."
    ),
    n_cities: int = typer.Option(
        None,
        "--n-cities",
        min=1,
        help=f"How many cities when --cities is not given (default: {_DEFAULTS.n_cities}).",
    ),
    per_type: str = typer.Option(
        None,
        "--per-type",
        help="Target POIs per type: N for every type, or e.g. restaurant=800,hotel=400 "
        f"(unlisted types 0) (default: {_per_type_default()}).",
    ),
    min_reviews: int = typer.Option(
        None,
        "--min-reviews",
        min=0,
        help=f"Minimum reviews kept per selected POI (default: {_DEFAULTS.min_reviews}).",
    ),
    max_reviews_per_poi: int = typer.Option(
        None,
        "--max-reviews-per-poi",
        min=1,
        help=f"Cap on reviews kept per POI (default: {_DEFAULTS.max_reviews_per_poi}).",
    ),
    min_review_chars: int = typer.Option(
        None,
        "--min-review-chars",
        min=0,
        help=f"Skip reviews shorter than this many characters (default: {_DEFAULTS.min_review_chars}).",
    ),
    seed: int = typer.Option(
        None, "--seed", help=f"Seed of the stratified POI and review sampling (default: {_DEFAULTS.seed})."
    ),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Progress by bytes read (heartbeat lines when piped)."
    ),
) -> None:
    """Build the KB from a Yelp Open Dataset download (two streaming passes; constant memory)."""
    from contextlib import ExitStack

    from rich.console import Console
    from rich.markup import escape

    from groundtrace.cli.progress import track
    from groundtrace.crs.kb.select import build_kb, summary_path

    console = err_console()
    try:
        business, review = _input_files(yelp_dir, business_file, reviews_file)
    except (FileNotFoundError, ValueError) as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    try:
        config = selection_config(
            config_file,
            {
                "cities": [c.strip() for entry in cities or [] for c in entry.split(",") if c.strip()]
                or None,
                "n_cities": n_cities,
                "per_type": parse_per_type(per_type) if per_type is not None else None,
                "min_reviews": min_reviews,
                "max_reviews_per_poi": max_reviews_per_poi,
                "min_review_chars": min_review_chars,
                "seed": seed,
            },
        )
    except ValueError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    sizes = {"reviews": review.stat().st_size}
    with ExitStack() as stages:  # one bar (heartbeat lines when piped) per file read, the last one closed

        def on_bytes(stage: str):  # a progress-callback factory, called as each read starts
            stages.close()
            total = sizes["reviews"] if stage == "reviews" else business.stat().st_size
            bar = stages.enter_context(
                track(f"crs kb build {stage}", total=total, unit="bytes", disable=not progress)
            )
            return lambda n: bar.update(advance=n)

        _, report, summary = build_kb(
            business, review, out, config, on_bytes=on_bytes, source=str((yelp_dir or business).resolve())
        )
    written = summary_path(out)
    _print_summary(summary, f"KB {out}")
    out_console = Console()
    if report.missing_cities:
        out_console.print(f"[yellow]no eligible POI in:[/yellow] {escape(', '.join(report.missing_cities))}")
    if report.empty_cities:
        out_console.print(
            f"[yellow]{len(report.empty_cities)} selected city(ies) with 0 POIs (not in the KB):[/yellow]"
        )
        for city, why in report.empty_cities.items():
            out_console.print(f"  {escape(city)}: {escape(why)}", soft_wrap=True)
    if report.shortfall:
        out_console.print(f"[yellow]shortfall vs target:[/yellow] {escape(str(report.shortfall))}")
    if report.problems:
        out_console.print(f"[yellow]{len(report.problems)} problem(s) (lines skipped):[/yellow]")
        for problem in report.problems[:MAX_SHOWN]:
            out_console.print(f"  {escape(str(problem))}", soft_wrap=True)
        if len(report.problems) > MAX_SHOWN:
            out_console.print(f"  ... {len(report.problems) - MAX_SHOWN} more in {escape(str(written))}")
    out_console.print(f"wrote {escape(str(out))} and {escape(str(written))}")
    if not summary.get("pois"):
        print_error(f"the KB is empty: no business of {business} was selected (see the problems above)")
        raise typer.Exit(1)


@kb_app.command("info")
def info(
    kb: Path = typer.Argument(..., help="KB file written by `crs kb build` or `crs kb demo`."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    verify: bool = typer.Option(False, "--verify", help="Also load the KB and check its content hash."),
) -> None:
    """Show a KB's counts per city and type, its hash, creation time, source and selection config."""
    from rich.console import Console
    from rich.markup import escape

    from groundtrace.crs.kb.store import KBIntegrityError, NotAKnowledgeBaseError, kb_summary, load_kb

    try:
        summary = kb_summary(kb)
        if verify:
            load_kb(kb)
    except (FileNotFoundError, NotAKnowledgeBaseError, KBIntegrityError) as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    _print_summary(summary, f"KB {kb}")
    console = Console()
    console.print(
        f"created: {escape(str(summary.get('created')))}  source: {escape(str(summary.get('source') or '-'))}"
    )
    if summary.get("stale"):  # readable meta, but every other command refuses the file
        print_error(f"{summary['stale']} (`crs kb info` reads the stored summary only)")
    if verify:
        console.print("[green]content hash verified[/green]")


@kb_app.command("demo")
def demo(
    out: Path = typer.Option(..., "--out", help="KB file to write (SQLite)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the demo KB generator (deterministic for a seed)."),
) -> None:
    """Generate the fictional-city demo KB (no download needed) and save it."""
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.kb.store import save_kb

    kb = generate_demo_kb(seed=seed)
    save_kb(kb, out, source=f"groundtrace.crs.kb.demo seed={seed}")
    summary = kb.summary()
    out.with_name(out.name + ".summary.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    _print_summary(summary, f"demo KB {out}")
