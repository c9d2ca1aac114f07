"""``groundtrace catalog enrich`` and ``groundtrace catalog demo``: Scout → Judge → write policy over a SKU
file."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import typer

from groundtrace.cli.apps import catalog_app
from groundtrace.cli.catalog_names import names
from groundtrace.cli.console import err_console, print_error

_SOURCE_HELP = (
    "Extra evidence source by registry name (repeatable): "
    f"{names('groundtrace.catalog.sources.base:EVIDENCE_SOURCES')}; catalog is always used, "
    "syndicated/image_ocr/image_vlm join with --feed/--images/--vlm."
)
RUNNERS = ("local", "ray")


def _deprecated(message: str) -> None:
    err_console().print(f"[yellow]deprecated:[/yellow] {message}", highlight=False)


def _runner_and_extractor(
    runner: str | None, engine: str | None, extractor: str | None, model: Path | None
) -> tuple[str, str | None]:
    """(runner, extractor name) — one word per meaning: ``--runner local|ray`` is how SKUs are executed,
    ``--extractor NAME`` what proposes values. The old ``--engine`` meant both: ``--engine local|ray`` is
    ``--runner``, ``--engine learned`` is ``--extractor learned``; either way a deprecation message on
    stderr names the new spelling. ``--model`` implies ``--extractor learned``."""
    if engine is not None:
        if engine in RUNNERS:
            _deprecated(f"--engine {engine} is now --runner {engine}")
            if runner not in (None, engine):
                raise typer.BadParameter(
                    f"--engine {engine} and --runner {runner} disagree", param_hint="--runner"
                )
            runner = engine
        elif engine in ("learned", "crf"):
            _deprecated(f"--engine {engine} is now --extractor {engine}")
            extractor = extractor or engine  # as before: an explicit --extractor wins
        else:
            raise typer.BadParameter(
                "must be 'local', 'ray' or 'learned' "
                "(deprecated: use --runner local|ray or --extractor NAME)",
                param_hint="--engine",
            )
    runner = runner or "local"
    if runner not in RUNNERS:
        raise typer.BadParameter("must be 'local' or 'ray'", param_hint="--runner")
    if model is not None:
        extractor = extractor or "learned"
    if extractor in ("learned", "crf") and model is None:
        raise typer.BadParameter("the learned extractor needs --model FILE (from `catalog train`)")
    return runner, extractor


@catalog_app.command("enrich")
def enrich_cmd(
    skus: Path = typer.Argument(
        ...,
        exists=True,
        dir_okay=False,
        help="SKU records (JSONL, CSV or Parquet); malformed lines are reported as file:line and skipped.",
    ),
    out: Path = typer.Option(
        None, "--out", help="Results JSONL (one AttributeResult per line); resumed if present."
    ),
    db: str = typer.Option(
        None,
        "--db",
        help="Write into a catalog store instead of --out: sqlite:///PATH.db or postgresql+psycopg2://... "
        "(unchanged SKUs are skipped; a killed run resumes).",
    ),
    run_name: str = typer.Option(
        None, "--run-name", help="--db: name of the run (default: run-<config hash>)."
    ),
    runner: str = typer.Option(
        None,
        "--runner",
        help="--db: how SKUs are executed: local (processes / asyncio; default) or ray.",
    ),
    engine: str = typer.Option(
        None,
        "--engine",
        help="Deprecated: --engine local|ray is --runner, --engine learned is --extractor learned.",
    ),
    model: Path = typer.Option(
        None,
        "--model",
        exists=True,
        dir_okay=False,
        help="Model file of the learned extractor (from `catalog train`); implies --extractor learned.",
    ),
    ray_address: str = typer.Option(
        None, "--ray-address", help="--runner ray: an existing cluster ('auto', 'ray://head:10001')."
    ),
    fill_empty_only: bool = typer.Option(
        False, "--fill-empty-only", help="--db: publish only where no value is published yet."
    ),
    overwrite_approved: bool = typer.Option(
        False, "--overwrite-approved", help="--db: let a run replace a human-approved value (default: never)."
    ),
    batch_size: int = typer.Option(32, "--batch-size", min=1, help="--db: SKUs written per transaction."),
    llm_processes: int = typer.Option(
        1,
        "--llm-processes",
        min=1,
        max=64,
        help="--db with an LLM: split the --workers SKUs in flight over this many worker processes, so "
        "the evidence work runs on more than one core.",
    ),
    templates: Path = typer.Option(
        None,
        "--templates",
        file_okay=False,
        help="Template directory (default: the templates stored in --model, else the built-in templates).",
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="LLM for the Scout (and --judge llm): 'local', 'openai:MODEL', "
        "'http://host:port/v1#MODEL'. Default: offline engine.",
    ),
    max_prompt_tokens: int = typer.Option(
        None,
        "--max-prompt-tokens",
        min=256,
        help="Token limit (prompt + answer) of the LLM; default: the model's context for --llm "
        "local, none for endpoints. Prompts that would not fit are compacted (relevant sentences only, "
        "attributes batched).",
    ),
    judge: str = typer.Option(
        "rule",
        "--judge",
        help=f"Judge by registry name: {names('groundtrace.catalog.judge.registry:JUDGES')} "
        "(rule: deterministic, offline; llm needs --llm).",
    ),
    extractor: str = typer.Option(
        None,
        "--extractor",
        help="What proposes the values: extraction engine by registry name, "
        f"{names('groundtrace.catalog.scout.engine:EXTRACTION_ENGINES')} "
        "(offline is the rule-based one, also spelled rule; default: llm with --llm, else offline).",
    ),
    source: list[str] = typer.Option(None, "--source", help=_SOURCE_HELP),
    search: str = typer.Option(
        None,
        "--search",
        help="Search provider spec NAME:ARG, NAME one of "
        f"{names('groundtrace.catalog.sources.base:SEARCH_PROVIDERS')} "
        "(--corpus and --searxng are shortcuts).",
    ),
    feed: Path = typer.Option(
        None, "--feed", exists=True, dir_okay=False, help="Syndicated feed keyed by GTIN."
    ),
    corpus: Path = typer.Option(
        None, "--corpus", exists=True, help="Local page corpus (folder or JSONL) to search."
    ),
    searxng: str = typer.Option(None, "--searxng", help="SearxNG base URL for live web search."),
    images: Path = typer.Option(
        None,
        "--images",
        exists=True,
        file_okay=False,
        help="Folder of SKU images; enables OCR evidence (tesseract).",
    ),
    vlm: str = typer.Option(
        None,
        "--vlm",
        help="Vision LLM (OpenAI-compatible: 'http://host:port/v1#MODEL', "
        "'openai:MODEL') that also transcribes the --images.",
    ),
    policy: Path = typer.Option(
        None,
        "--policy",
        dir_okay=False,
        help="Write-policy YAML file, or a built-in policy: 'default' (UNVERIFIED at "
        "confidence >= 0.7 is written) or 'cautious' (only PASS is written; "
        "UNVERIFIED goes to REVIEW; for weak LLMs).",
    ),
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        max=64,
        help=(
            "SKUs processed at once (1: in the main thread; offline: processes, with an LLM: threads; "
            "--db: processes offline, asyncio with an LLM, Ray workers with --runner ray)."
        ),
    ),
    gold: Path = typer.Option(
        None,
        "--gold",
        exists=True,
        dir_okay=False,
        help="Gold labels JSONL: print the evaluation of this file's SKUs after the run.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the summary (and, with --gold, the evaluation) as one JSON document."
    ),
    no_progress: bool = typer.Option(False, "--no-progress", help="Hide the progress bar."),
    allow_failures: bool = typer.Option(
        False,
        "--allow-failures",
        help="Exit 0 even when SKUs failed (LLM/VLM unavailable); failed SKUs are still not written "
        "and a rerun retries them.",
    ),
) -> None:
    """Enrich SKUs: extract attributes with evidence, judge them and route each to WRITE / BLOCK / REVIEW.

    Offline by default (built-in templates, offline engine, rule judge, default policy). An existing --out
    file is resumed: complete SKUs are skipped and damaged blocks are redone. Exit 1 when any SKU failed
    (unless --allow-failures) or another run holds OUT.lock; exit 2 for a usage/config error.
    """
    from groundtrace.catalog.pipeline import (
        EnrichConfig,
        SkuFileError,
        build_components,
        read_skus,
        run_enrich,
        summary_lines,
    )
    from groundtrace.catalog.policy import PolicyError
    from groundtrace.catalog.run_meta import ResumeMismatchError
    from groundtrace.catalog.sources import SourceError
    from groundtrace.catalog.templates import TemplateError
    from groundtrace.cli.progress import track
    from groundtrace.core.files.lock import LockHeldError
    from groundtrace.core.llm.base import LLMError
    from groundtrace.core.llm.config import LLMConfigError
    from groundtrace.core.registry import UnknownNameError

    err = err_console()
    if (out is None) == (db is None):
        raise typer.BadParameter("give exactly one of --out FILE or --db URL", param_hint="--out/--db")
    runner, extractor = _runner_and_extractor(runner, engine, extractor, model)
    stack = contextlib.ExitStack()  # holds the folder of a model's stored templates until the run ends
    if model is not None and templates is None:  # the templates the model was trained with (version 4)
        from groundtrace.cli.catalog_files import model_templates_dir

        templates = model_templates_dir(model, stack)
    config = EnrichConfig(
        templates=templates,
        llm=llm,
        # the LLM client's own in-flight bound (default 8) must not cap --workers
        llm_options={"concurrency": workers} if llm and workers > 8 else {},
        judge=judge,
        extractor=extractor,
        options={extractor: {"model": str(model)}} if model is not None and extractor else {},
        sources=["catalog", *(source or [])],
        search=search,
        feed=feed,
        corpus=corpus,
        searxng=searxng,
        images=images,
        vlm=vlm,
        policy=policy,
        workers=workers,
        max_prompt_tokens=max_prompt_tokens,
    )
    try:
        comp = build_components(config)
    except (
        PolicyError,
        TemplateError,
        SourceError,
        LLMConfigError,
        LLMError,
        UnknownNameError,
        ValueError,
    ) as exc:
        print_error(exc)
        raise typer.Exit(2) from exc
    if db is not None:
        from groundtrace.catalog.store.runner import StoreRunOptions
        from groundtrace.catalog.store.store import StorePolicy
        from groundtrace.cli.catalog_store_cmd import enrich_into_store

        options = StoreRunOptions(
            run_name=run_name,
            runner=runner,
            ray_address=ray_address,
            batch_size=batch_size,
            llm_processes=llm_processes,
            policy=StorePolicy(fill_empty_only=fill_empty_only, keep_approved=not overwrite_approved),
        )
        enrich_into_store(
            skus,
            db,
            config,
            comp,
            options,
            gold=gold,
            templates=templates,
            as_json=as_json,
            no_progress=no_progress,
        )
        return
    try:
        total = len(read_skus(skus)[0])
    except SkuFileError as exc:
        print_error(exc)
        raise typer.Exit(2) from None

    def show(text: str) -> None:
        err.print(text, markup=False, highlight=False, soft_wrap=True)

    with track("catalog enrich", total=total, unit="SKUs", disable=no_progress or as_json) as bar:

        def progress(_sku: object, _n: int) -> None:
            bar.update(advance=1)

        try:
            summary = run_enrich(skus, out, config, components=comp, progress=progress, on_issue=show)
        except ResumeMismatchError as exc:
            print_error(exc)
            raise typer.Exit(2) from None
        except LockHeldError as exc:
            print_error(exc)
            raise typer.Exit(1) from None
        bar.update(done=total)
    report = _evaluate(out, gold, skus, templates) if gold is not None else None
    if as_json:  # stdout is one JSON document; with --gold the evaluation is inside it
        payload = {**summary.model_dump(mode="json"), "shares": summary.shares()}
        if report is not None:
            payload["evaluation"] = report.to_dict()
        typer.echo(json.dumps(payload, indent=2))
    else:
        for line in summary_lines(summary):
            typer.echo(line)
        if report is not None:
            from groundtrace.catalog.evaluation.report import print_report

            print_report(report)
    if summary.skus_failed and not allow_failures:
        print_error(
            f"{summary.skus_failed} SKU(s) failed and were not written ({', '.join(summary.failed_skus[:5])}"
            f"{' …' if summary.skus_failed > 5 else ''}); rerun to retry them, or pass --allow-failures"
        )
        raise typer.Exit(1)


def _evaluate(results: Path, gold: Path, skus: Path, templates: Path | None):  # -> EvaluationReport
    from groundtrace.catalog.evaluation.scoring import evaluate
    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.model import AttributeResult, GoldLabel
    from groundtrace.catalog.pipeline import read_skus
    from groundtrace.catalog.templates import load_templates

    rows, issues = read_jsonl_models(results, AttributeResult)
    gold_rows, gold_issues = read_jsonl_models(gold, GoldLabel)
    for issue in issues + gold_issues:
        typer.echo(str(issue), err=True)
    categories = {s.sku_id: s.category for s in read_skus(skus)[0]}
    gold_rows = [g for g in gold_rows if g.sku_id in categories]  # score the SKUs of this file only
    return evaluate(rows, gold_rows, templates=load_templates(templates), categories=categories)


@catalog_app.command("demo")
def catalog_demo_cmd(
    out: Path = typer.Option(
        Path("groundtrace-catalog-demo"), "--out", help="Folder for the demo catalog and results."
    ),
    workers: int = typer.Option(
        2,
        "--workers",
        min=1,
        max=64,
        help=(
            "SKUs processed at once (1: in the main thread; offline: processes, with an LLM: threads; "
            "--db: processes offline, asyncio with an LLM, Ray workers with --runner ray)."
        ),
    ),
) -> None:
    """Write the demo catalog, enrich it offline and print the summary and the evaluation."""
    from groundtrace.catalog.demo_catalog import run_catalog_demo

    result = run_catalog_demo(out, workers=workers)
    for line in result["summary_lines"]:
        typer.echo(line)
    for name, value in result["metrics"].items():
        typer.echo(f"{name}: {'-' if value is None else f'{value:.1%}'}")
    for name, path in result["paths"].items():
        typer.echo(f"{name}: {path}")
