"""Rule engine vs learned engine on the shared catalog samples (issue 12): trained on each dataset's
train split, measured on its validation split (WDC-PAVE has one file: a seeded 80/20 split of its
SKUs), both engines through the full pipeline (quote, identity, reconcile, rule Judge, default policy);
Open Food Facts (no train split) with the rule engine and the built-in templates.

    PYTHONPATH=src python benchmarks/catalog_learned.py [--data DIR] [--work DIR] [--only NAME]...
        [--target-precision P]   (θ calibration target of the trained models; default 0.95)
        [--folds K]              (cross-fitting folds of the calibration; default 5)
        [--dev]                  (measure on a held-out 20 % of the TRAIN split instead of validation)
        [--no-rerank]            (train without the candidate reranker: model version 2's selection)

``--dev`` is for choosing methods and settings: the train SKUs (those kept for training) are cut into a
seeded 80 / 20 split by title (no title on both sides), the models and templates come from the 80 % and the
table is measured on the 20 %; the validation split is not read for scoring. Decide on ``--dev`` numbers,
then report the validation numbers once.

The shared OA-Mine / AE-110K validation files are subsets of their train files: the models train only on
the train SKUs whose title is not in the validation split, and the templates come from those too
(``templates from-gold``: typed, brands learned from title prefixes). WDC-PAVE templates are generated
from its ``descriptions.csv``.

Prints one Markdown table: accuracy (correct / extracted with gold), coverage of gold values, coverage at
95 % precision (``catalog evaluate``'s headline: the best coverage over a confidence threshold θ at which
precision ≥ 95 %), precision of WRITTEN values, gold values written, publish coverage (WRITE / all pairs)
and CPU time per SKU of the enrich step (one process; comparable as a ratio within one run). Writes
``WORK/<dataset>-<engine>/`` with ``results.jsonl``, ``gold.jsonl`` and the evaluation report
(``report.md`` + ``report.svg``, ``report.json``): the same files ``catalog evaluate --markdown`` writes.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from groundtrace.catalog.evaluation.matching import correct_for, equal_for, spec_of, value_matches
from groundtrace.catalog.evaluation.plots import curves_svg
from groundtrace.catalog.evaluation.render import markdown
from groundtrace.catalog.evaluation.scoring import EvaluationReport, evaluate
from groundtrace.catalog.importers import import_file, slugify
from groundtrace.catalog.importers.train_templates import templates_from_gold
from groundtrace.catalog.importers.wdc_pave import templates_from_wdc
from groundtrace.catalog.model import AttributeResult, GoldLabel
from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku
from groundtrace.catalog.scout.learned.train import train_model
from groundtrace.catalog.scout.sentences import norm_key
from groundtrace.catalog.templates import TemplateSet, dump_template, load_templates

DATASETS = ("oa-mine", "ae-110k", "wdc-pave", "openfoodfacts")


def _split(fmt: str, data: Path, name: str):  # type: ignore[no-untyped-def]
    if name == "wdc-pave":
        _r, records = import_file(fmt, data / "wdc_pave" / "train_large.jsonl")
        rng = random.Random(12)
        order = sorted(records, key=lambda r: r.sku.sku_id)
        rng.shuffle(order)
        cut = int(len(order) * 0.8)
        return order[:cut], order[cut:]
    if name == "openfoodfacts":
        return [], import_file(fmt, data / "openfoodfacts" / "products.tsv")[1]
    folder = data / name.replace("-", "_")
    train = import_file(fmt, folder / "train.jsonl")[1]
    val = import_file(fmt, folder / "validation.jsonl")[1]
    # the shared validation files are subsets of the train files (every validation title is also a train
    # title): train only on titles the validation split does not hold, or the model memorises the answers
    held = {norm_key(r.sku.title) for r in val}
    kept = [r for r in train if norm_key(r.sku.title) not in held]
    print(
        f"<!-- {name}: {len(train) - len(kept)} of {len(train)} train SKUs dropped (title in validation) -->"
    )
    return kept, val


def dev_split(train: list, share: float = 0.2, seed: int = 7) -> tuple[list, list]:  # type: ignore[type-arg]
    """A seeded split of ``train`` records by normalised title: ``share`` of the titles held out, so no
    title is on both sides (``--dev``)."""
    titles = sorted({norm_key(r.sku.title) for r in train})
    random.Random(seed).shuffle(titles)
    held = set(titles[: round(len(titles) * share)])
    return [r for r in train if norm_key(r.sku.title) not in held], [
        r for r in train if norm_key(r.sku.title) in held
    ]


def _pct(metrics: dict, name: str) -> str:  # type: ignore[type-arg]
    v = metrics[name]
    return "—" if v.value is None else f"{100 * v.value:.1f} % ({v.numerator}/{v.denominator})"


def _templates(name: str, data: Path, train: list, work: Path) -> Path | None:  # type: ignore[type-arg]
    if name == "openfoodfacts":
        return None  # the built-in templates
    if name == "wdc-pave":
        templates = templates_from_wdc(data / "wdc_pave" / "descriptions.csv")[0]
    else:
        templates = templates_from_gold([r.sku for r in train], [g for r in train for g in r.gold])
    tpl_dir = work / f"{name}-templates"
    tpl_dir.mkdir(parents=True, exist_ok=True)
    for old in tpl_dir.glob("*.yaml"):
        old.unlink()
    for t in templates:
        (tpl_dir / f"{slugify(t.category)}.yaml").write_text(dump_template(t), encoding="utf-8")
    return tpl_dir


def _written(
    results: list[AttributeResult], gold: list[GoldLabel], templates: TemplateSet
) -> tuple[int, int]:
    """(correct, all) WRITE results with gold."""
    by_pair = {(g.sku_id, g.attribute): g for g in gold}
    ok = total = 0
    for r in results:
        g = by_pair.get((r.sku_id, r.attribute))
        if r.decision.action.value != "WRITE" or g is None:
            continue
        total += 1
        equal = equal_for(spec_of(templates, r.category, r.attribute))
        ok += (not g.not_applicable) and value_matches(r.candidate.value or [], g, equal)
    return ok, total


def _save(out: Path, results: list[AttributeResult], gold: list[GoldLabel], report: EvaluationReport) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results), encoding="utf-8")
    (out / "gold.jsonl").write_text("".join(g.model_dump_json() + "\n" for g in gold), encoding="utf-8")
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=1), encoding="utf-8")
    counts = {a: g.metrics["coverage_gold"].denominator for a, g in report.per_attribute.items()}
    if report.thresholds is not None:
        (out / "report.svg").write_text(curves_svg(report.thresholds, counts), encoding="utf-8")
    (out / "report.md").write_text(markdown(report, "report.svg"), encoding="utf-8")


def run(
    name: str,
    data: Path,
    work: Path,
    target: float = 0.95,
    folds: int = 5,
    dev: bool = False,
    rerank: bool = True,
) -> list[str]:
    fmt = name
    train, val = _split(fmt, data, name)
    if dev:
        if not train:
            return []
        train, val = dev_split(train)
        work = work / "dev"
    tpl_dir = _templates(name, data, train, work)
    engines: list[tuple[str, dict]] = [("offline", {})]  # type: ignore[type-arg]
    if train:
        plain = "" if rerank else "-plain"
        model_path = work / f"{name}-{target}-{folds}-{len(train)}{plain}.model.json"
        if not model_path.is_file():
            t0 = time.process_time()
            correct = correct_for(load_templates(tpl_dir))
            skus, labels = [r.sku for r in train], [g for r in train for g in r.gold]
            model = train_model(skus, labels, target=target, folds=folds, correct=correct, rerank=rerank)
            model.save(model_path)
            print(f"<!-- {name}: trained in {time.process_time() - t0:.0f} s CPU -> {model_path} -->")
        engines.append(("learned", {"learned": {"model": str(model_path)}}))
    gold = [g for r in val for g in r.gold]
    rows = []
    for engine, options in engines:
        comp = build_components(EnrichConfig(templates=tpl_dir, extractor=engine, options=options))
        t0 = time.process_time()
        results = [res for r in val for res in process_sku(r.sku, comp).results]
        per_sku = (time.process_time() - t0) / len(val)
        report = evaluate(results, gold, templates=comp.templates, target_precision=0.95)
        _save(work / f"{name}-{engine}", results, gold, report)
        m = report.overall.metrics
        ok, written = _written(results, gold, comp.templates)
        values = m["coverage_gold"].denominator
        h = report.thresholds.overall if report.thresholds else None
        cov95 = f"{100 * h.coverage:.1f} %" + (f" (θ {h.point.theta:.2f})" if h and h.point else "")
        cells = [name, engine, str(len(val)), _pct(m, "accuracy"), _pct(m, "coverage_gold"), cov95]
        cells += [
            f"{100 * ok / written:.1f} % ({ok}/{written})" if written else "— (0 written)",
            f"{100 * ok / values:.1f} %" if values else "—",
            _pct(m, "publish_coverage"),
            f"{1000 * per_sku:.1f} ms",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/catalog"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/gt_learned"))
    parser.add_argument("--only", action="append", choices=DATASETS, help="Run only these datasets.")
    parser.add_argument("--target-precision", type=float, default=0.95, help="Calibration target of θ.")
    parser.add_argument("--folds", type=int, default=5, help="Cross-fitting folds of the calibration.")
    parser.add_argument("--no-rerank", action="store_true", help="Train without the candidate reranker.")
    parser.add_argument(
        "--dev", action="store_true", help="Measure on a held-out 20 %% of the train split (for tuning)."
    )
    args = parser.parse_args()
    print(
        "| dataset | engine | SKUs | accuracy | coverage of gold values | coverage at 95 % precision "
        "| precision of written | gold values written correctly | publish coverage | CPU time / SKU |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in DATASETS:
        if args.only and name not in args.only:
            continue
        for row in run(
            name, args.data, args.work, args.target_precision, args.folds, args.dev, not args.no_rerank
        ):
            print(row, flush=True)


if __name__ == "__main__":
    main()
