"""``groundtrace catalog train|calibrate``: the learned offline extractor (thin layer over
:mod:`groundtrace.catalog.scout.learned`)."""

from __future__ import annotations

from pathlib import Path

import typer

from groundtrace.cli.apps import catalog_app
from groundtrace.cli.catalog_files import exclude_titles
from groundtrace.cli.console import print_error

_SKUS = typer.Option(..., "--skus", exists=True, dir_okay=False, help="skus.jsonl (from `catalog import`).")
_GOLD = typer.Option(..., "--gold", exists=True, dir_okay=False, help="gold.jsonl of the same SKUs.")
_TARGET = typer.Option(0.95, "--target-precision", min=0.5, max=1.0, help="Precision θ is picked for.")
_TEMPLATES = typer.Option(
    None,
    "--templates",
    file_okay=False,
    exists=True,
    help="Templates (e.g. from `templates from-gold`): a proposal counts right as `catalog evaluate` with "
    "these templates would count it (typed: '12 oz' = '12 Ounce Bag'); default: equal after normalising.",
)
_ALLOCATION = typer.Option(
    "pooled",
    "--allocation",
    help="pooled: one θ on the calibrated confidence for every attribute (most values at the target "
    "precision overall); per-attribute: each attribute reaches the target on its own.",
)


def _correct(templates: Path | None):  # type: ignore[no-untyped-def]
    """The calibration comparator: the evaluation's typed one with --templates, else exact."""
    from groundtrace.catalog.scout.learned.train import exact_correct

    if templates is None:
        return exact_correct
    from groundtrace.catalog.evaluation.matching import correct_for

    return correct_for(_load_templates(templates))


def _load_templates(templates: Path):  # type: ignore[no-untyped-def]  # -> TemplateSet
    from groundtrace.catalog.templates import TemplateError, load_templates

    try:
        return load_templates(templates)
    except TemplateError as exc:
        raise typer.BadParameter(str(exc), param_hint="--templates") from exc


def _train_templates(templates: Path | None, sku_rows: list, gold_rows: list) -> tuple[list, str]:  # type: ignore[type-arg]
    """The templates a model is trained with and stores: ``--templates``, else inferred from the training
    gold (as ``catalog templates from-gold`` builds them: the attribute set and value type per category)."""
    if templates is not None:
        return list(_load_templates(templates)), "templates"
    from groundtrace.catalog.importers.train_templates import templates_from_gold

    return templates_from_gold(sku_rows, gold_rows), "gold"


def _allocation(value: str) -> str:
    if value not in ("pooled", "per-attribute"):
        raise typer.BadParameter("must be 'pooled' or 'per-attribute'", param_hint="--allocation")
    return value


def _read(skus: Path, gold: Path) -> tuple[list, list]:
    from groundtrace.catalog.importers.base import read_jsonl_models
    from groundtrace.catalog.model import SKU, GoldLabel

    sku_rows, issues = read_jsonl_models(skus, SKU)
    gold_rows, gold_issues = read_jsonl_models(gold, GoldLabel)
    for issue in issues + gold_issues:
        typer.echo(str(issue), err=True)
    return sku_rows, gold_rows


def _summary(model: object) -> None:
    calibration = getattr(model, "calibration", {})
    usable = {k: v for k, v in calibration.items() if v["theta"] <= 1.0}
    typer.echo(
        f"attributes tagged: {len(getattr(model, 'attributes', []))}; θ ({getattr(model, 'allocation', '')}) "
        f"reaches the target precision for {len(usable)} of {len(calibration)} (others are never proposed)"
    )
    ranker = getattr(model, "ranker", None)
    if ranker is not None:
        typer.echo(f"candidate reranker: {len(ranker.weights)} weighted features")
    for slug, row in sorted(usable.items()):
        typer.echo(
            f"  {slug}: θ={row['theta']:.3f} precision={row['precision']:.3f} "
            f"kept {int(row['kept'])}/{int(row['heldout_proposals'])} held-out proposals"
        )


@catalog_app.command("train")
def train_cmd(
    skus: Path = _SKUS,
    gold: Path = _GOLD,
    out: Path = typer.Option(..., "--out", dir_okay=False, help="Model file to write (JSON, versioned)."),
    folds: int = typer.Option(
        5, "--folds", min=0, help="Cross-fitting folds for calibration (0 or 1: one --holdout split)."
    ),
    holdout: float = typer.Option(
        0.2, "--holdout", min=0.0, max=0.5, help="With --folds 0: share of the SKUs held out to calibrate θ."
    ),
    target: float = _TARGET,
    templates: Path = _TEMPLATES,
    allocation: str = _ALLOCATION,
    seed: int = typer.Option(13, "--seed", help="Seed of the folds / held-out split."),
    exclude_titles_of: Path = typer.Option(
        None,
        "--exclude-titles-of",
        exists=True,
        dir_okay=False,
        help="skus.jsonl of the split you will evaluate on: train SKUs with one of its titles are left out.",
    ),
    rerank: bool = typer.Option(
        True,
        "--rerank/--no-rerank",
        help="Fit the candidate reranker (model version 3; --no-rerank: the best calibrated span wins).",
    ),
    policy_out: Path = typer.Option(
        None,
        "--policy-out",
        dir_okay=False,
        help="Also write the printed write-policy snippet (θ per learned attribute) here.",
    ),
) -> None:
    """Train the learned extractor (CRF tagger + per-category lexicons and gazetteers) on a TRAIN split;
    confidences calibrated and θ picked on held-out proposals (cross-fitting). The model file stores the
    templates it was trained with (--templates, else inferred from the gold: attribute set and value
    types), so `catalog enrich --extractor learned --model FILE` and `catalog evaluate --model FILE` need no
    --templates. Prints a write-policy snippet (θ per learned attribute) for `catalog enrich --policy`."""
    from groundtrace.catalog.evaluation.matching import correct_for
    from groundtrace.catalog.scout.learned.snippet import policy_snippet
    from groundtrace.catalog.scout.learned.train import train_model
    from groundtrace.catalog.templates import TemplateSet
    from groundtrace.cli.progress import track

    sku_rows, gold_rows = exclude_titles(*_read(skus, gold), exclude_titles_of)
    template_list, templates_from = _train_templates(templates, sku_rows, gold_rows)
    correct = correct_for(TemplateSet(template_list))
    try:
        with track("catalog train", unit="models") as bar:  # the cross-fitting folds, then the final model
            model = train_model(
                sku_rows,
                gold_rows,
                folds=folds,
                holdout=holdout,
                target=target,
                seed=seed,
                correct=correct,
                allocation=_allocation(allocation),  # type: ignore[arg-type]
                rerank=rerank,
                progress=lambda done, total: bar.update(done=done, total=total),
                templates=template_list,
                templates_from=templates_from,
            )
    except ValueError as exc:
        print_error(str(exc))
        raise typer.Exit(1) from exc
    model.save(out)
    _summary(model)
    typer.echo(f"wrote {out} ({out.stat().st_size // 1024} KiB)")
    attrs = sum(len(t.attributes) for t in template_list)
    typer.echo(
        f"templates stored in the model: {len(template_list)} categories, {attrs} attributes "
        f"(from {'--templates' if templates_from == 'templates' else 'the gold'})"
    )
    snippet = policy_snippet(model)
    if policy_out is not None:
        policy_out.write_text(snippet, encoding="utf-8")
        typer.echo(f"wrote {policy_out} (catalog enrich --policy {policy_out})")
    typer.echo("policy snippet (catalog enrich --policy FILE):")
    typer.echo(snippet.rstrip("\n"))


@catalog_app.command("calibrate")
def calibrate_cmd(
    model_path: Path = typer.Option(..., "--model", exists=True, dir_okay=False, help="Model file."),
    skus: Path = _SKUS,
    gold: Path = _GOLD,
    target: float = _TARGET,
    templates: Path = _TEMPLATES,
    allocation: str = _ALLOCATION,
    out: Path = typer.Option(None, "--out", dir_okay=False, help="Write here (default: --model in place)."),
) -> None:
    """Re-fit the confidence curves and re-pick θ on labelled SKUs the model was NOT trained on."""
    from groundtrace.catalog.scout.learned.model import ModelFileError, load_model
    from groundtrace.catalog.scout.learned.train import calibrate

    try:
        model = load_model(model_path)
    except ModelFileError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from exc
    correct = _correct(templates)
    if templates is None and model.templates:  # the templates the model was trained with (version 4)
        from groundtrace.catalog.evaluation.matching import correct_for

        correct = correct_for(model.template_set())
    sku_rows, gold_rows = _read(skus, gold)
    model = calibrate(model, sku_rows, gold_rows, target, correct, _allocation(allocation))  # type: ignore[arg-type]
    model.save(out or model_path)
    _summary(model)
