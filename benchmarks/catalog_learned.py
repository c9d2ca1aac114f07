"""Rule engine vs learned engine on the shared catalog samples (issue 12): trained on each dataset's
train split, measured on its validation split (WDC-PAVE has one file: a seeded 80/20 split of its
SKUs), both engines through the full pipeline (quote, identity, reconcile, rule Judge, default policy).

    PYTHONPATH=src python benchmarks/catalog_learned.py [--data DIR] [--work DIR] [--only NAME]
        [--target-precision P]   (θ calibration target of the trained models; default 0.95)

Prints one Markdown table: accuracy (correct / extracted with gold), coverage of gold values, coverage at
95 % precision (the best coverage over a confidence threshold at which precision ≥ 95 %), precision of
WRITTEN values, publish coverage (WRITE / all pairs) and wall time per SKU of the enrich step (the same
run, the same machine, so the two engines' times are comparable as a ratio).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from groundtrace.catalog.evaluation.matching import equal_for, value_matches
from groundtrace.catalog.evaluation.scoring import evaluate
from groundtrace.catalog.importers import import_file, slugify
from groundtrace.catalog.importers.train_templates import templates_from_gold
from groundtrace.catalog.importers.wdc_pave import templates_from_wdc
from groundtrace.catalog.model import GoldLabel
from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku
from groundtrace.catalog.scout.learned.train import train_model
from groundtrace.catalog.scout.sentences import norm_key
from groundtrace.catalog.templates import TemplateSet, dump_template


def _split(fmt: str, data: Path, name: str):  # type: ignore[no-untyped-def]
    if name == "wdc-pave":
        _r, records = import_file(fmt, data / "wdc_pave" / "train_large.jsonl")
        rng = random.Random(12)
        order = sorted(records, key=lambda r: r.sku.sku_id)
        rng.shuffle(order)
        cut = int(len(order) * 0.8)
        return order[:cut], order[cut:]
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


def coverage_at(results, gold: list[GoldLabel], templates: TemplateSet, target: float = 0.95) -> float:  # type: ignore[no-untyped-def]
    """Max over θ of extracted-with-confidence-≥θ / gold-value pairs, where precision ≥ ``target``."""
    by_pair = {(g.sku_id, g.attribute): g for g in gold}
    value_pairs = sum(1 for g in gold if not g.not_applicable and g.value not in (None, []))
    scored = []
    for r in results:
        g = by_pair.get((r.sku_id, r.attribute))
        if g is None or r.candidate.value is None or r.candidate.status.value != "extracted":
            continue
        template = templates.for_category(r.category)
        spec = next((a for a in template.attributes if a.slug == r.attribute), None) if template else None
        ok = (not g.not_applicable) and value_matches(r.candidate.value, g, equal_for(spec))
        scored.append((r.candidate.confidence, ok, not g.not_applicable))
    scored.sort(key=lambda x: -x[0])
    best = right = total = covered = 0
    for i, (conf, ok, has_value) in enumerate(scored):
        right, total, covered = right + ok, total + 1, covered + has_value
        if i + 1 < len(scored) and scored[i + 1][0] == conf:
            continue
        if right / total >= target:
            best = max(best, covered)
    return best / value_pairs if value_pairs else 0.0


def _pct(metrics: dict, name: str) -> str:  # type: ignore[type-arg]
    v = metrics[name]
    return "—" if v.value is None else f"{100 * v.value:.1f} % ({v.numerator}/{v.denominator})"


def run(name: str, fmt: str, data: Path, work: Path, target: float = 0.95) -> list[str]:
    train, val = _split(fmt, data, name)
    work.mkdir(parents=True, exist_ok=True)
    if name == "wdc-pave":
        templates = templates_from_wdc(data / "wdc_pave" / "descriptions.csv")[0]
    else:
        templates = templates_from_gold([r.sku for r in train], [g for r in train for g in r.gold])
    tpl_dir = work / f"{name}-templates"
    tpl_dir.mkdir(exist_ok=True)
    for t in templates:
        (tpl_dir / f"{slugify(t.category)}.yaml").write_text(dump_template(t), encoding="utf-8")
    model_path = work / f"{name}-{target}-{len(train)}.model.json"
    if not model_path.is_file():
        train_model([r.sku for r in train], [g for r in train for g in r.gold], target=target).save(
            model_path
        )
    gold = [g for r in val for g in r.gold]
    rows = []
    for engine, options in (("offline", {}), ("learned", {"learned": {"model": str(model_path)}})):
        comp = build_components(EnrichConfig(templates=tpl_dir, engine=engine, options=options))
        t0 = time.perf_counter()
        results = [res for r in val for res in process_sku(r.sku, comp).results]
        per_sku = (time.perf_counter() - t0) / len(val)
        report = evaluate(results, gold, templates=comp.templates)
        m = report.overall.metrics
        by_pair = {(g.sku_id, g.attribute): g for g in gold}
        written = [
            (r, by_pair[(r.sku_id, r.attribute)])
            for r in results
            if r.decision.action.value == "WRITE" and (r.sku_id, r.attribute) in by_pair
        ]
        ok = 0
        for r, g in written:
            template = comp.templates.for_category(r.category)
            spec = next((a for a in template.attributes if a.slug == r.attribute), None) if template else None
            ok += (not g.not_applicable) and value_matches(r.candidate.value or [], g, equal_for(spec))
        cov95 = coverage_at(results, gold, comp.templates)

        written_cell = (
            f"{100 * ok / len(written):.1f} % ({ok}/{len(written)})" if written else "— (0 written)"
        )
        cells = [name, engine, str(len(val)), _pct(m, "accuracy"), _pct(m, "coverage_gold")]
        cells += [
            f"{100 * cov95:.1f} %",
            written_cell,
            _pct(m, "publish_coverage"),
            f"{1000 * per_sku:.1f} ms",
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/catalog"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/gt_learned"))
    parser.add_argument("--only", default=None)
    parser.add_argument("--target-precision", type=float, default=0.95, help="Calibration target of θ.")
    args = parser.parse_args()
    print(
        "| dataset | engine | SKUs | accuracy | coverage of gold values | coverage at 95 % precision "
        "| precision of written | publish coverage | time / SKU |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, fmt in (("oa-mine", "oa-mine"), ("ae-110k", "ae-110k"), ("wdc-pave", "wdc-pave")):
        if args.only and args.only != name:
            continue
        for row in run(name, fmt, args.data, args.work, args.target_precision):
            print(row, flush=True)


if __name__ == "__main__":
    main()
