"""Precision / recall of the mapping-based allergen detector (``catalog.scout.ingredients``) against
hand labels of real Open Food Facts products.

Gold: ``benchmarks/data/off_allergen_labels.tsv`` — 249 products of
``../shared/data/catalog/openfoodfacts/products.tsv`` labelled by reading their ``ingredients_text``
(labelling rules: ``benchmarks/data/off_allergen_labels.md``); every third product is ``heldout``.
Prediction: the values of :func:`groundtrace.catalog.scout.ingredients.contained` on the ingredients text
(may-contain clauses excluded). Per value: TP/FP/FN, precision = TP / (TP + FP), recall = TP / (TP + FN);
micro = over all (product, value) pairs. ``contains_gluten``: accuracy of "gluten" in the prediction.

Run: ``python benchmarks/eval_allergens.py [--split dev|heldout|all] [--lang en|all] [--errors]``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from groundtrace.catalog.scout.ingredients import contained

ROOT = Path(__file__).resolve().parents[1]
PRODUCTS = ROOT.parent / "shared" / "data" / "catalog" / "openfoodfacts" / "products.tsv"
LABELS = ROOT / "benchmarks" / "data" / "off_allergen_labels.tsv"
VALUES = (
    "gluten",
    "wheat",
    "crustacean_shellfish",
    "eggs",
    "fish",
    "peanuts",
    "soybeans",
    "milk",
    "tree_nuts",
    "celery",
    "mustard",
    "sesame",
    "sulphites",
    "lupin",
    "molluscs",
)


def load(products: Path, labels: Path) -> list[dict[str, object]]:
    """``[{code, split, lang, gold: set, text}]`` for every labelled product."""
    if not products.exists():
        raise SystemExit(f"missing {products} (the shared Open Food Facts slice); nothing to evaluate")
    csv.field_size_limit(sys.maxsize)
    with products.open(encoding="utf-8", newline="") as fh:
        text = {r["code"]: r["ingredients_text"] for r in csv.DictReader(fh, delimiter="\t")}
    out = []
    with labels.open(encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.DictReader(fh, delimiter="\t"), 2):
            if row["code"] not in text:
                print(f"{labels}:{lineno}: product {row['code']} not in {products}", file=sys.stderr)
                continue
            gold = {v for v in row["allergens"].split(",") if v}
            out.append({**row, "gold": gold, "text": text[row["code"]]})
    return out


def evaluate(rows: list[dict[str, object]]) -> dict[str, dict[str, float]]:
    """Per-value and micro counts and scores (module docstring)."""
    counts = {v: [0, 0, 0] for v in VALUES}
    gluten_right = 0
    for row in rows:
        pred = set(contained(str(row["text"])))
        gold = row["gold"]
        assert isinstance(gold, set)
        for v in VALUES:
            tp, fp, fn = v in pred and v in gold, v in pred and v not in gold, v in gold and v not in pred
            counts[v][0] += tp
            counts[v][1] += fp
            counts[v][2] += fn
        gluten_right += ("gluten" in pred) == ("gluten" in gold)
    report: dict[str, dict[str, float]] = {}
    for v, (tp, fp, fn) in counts.items():
        report[v] = _scores(tp, fp, fn)
    tp, fp, fn = (sum(c[i] for c in counts.values()) for i in range(3))
    report["micro"] = _scores(tp, fp, fn)
    report["contains_gluten_accuracy"] = {"value": gluten_right / len(rows) if rows else 0.0, "n": len(rows)}
    return report


def _scores(tp: int, fp: int, fn: int) -> dict[str, float]:
    p = tp / (tp + fp) if tp + fp else float("nan")
    r = tp / (tp + fn) if tp + fn else float("nan")
    return {"tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": r}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=Path, default=PRODUCTS)
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--lang", choices=("en", "all"), default="en", help="the detector reads English")
    parser.add_argument("--errors", action="store_true", help="print each product the detector gets wrong")
    args = parser.parse_args(argv)
    rows = [
        r
        for r in load(args.products, args.labels)
        if (args.split == "all" or r["split"] == args.split) and (args.lang == "all" or r["lang"] == "en")
    ]
    report = evaluate(rows)
    print(f"{len(rows)} products (split {args.split}, lang {args.lang})")
    print(f"{'value':22} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>7}")
    for v in (*VALUES, "micro"):
        s = report[v]
        if s["tp"] + s["fp"] + s["fn"] == 0:
            continue
        print(f"{v:22} {s['tp']:4d} {s['fp']:4d} {s['fn']:4d} {s['precision']:9.3f} {s['recall']:7.3f}")
    print(f"contains_gluten accuracy {report['contains_gluten_accuracy']['value']:.3f}")
    if args.errors:
        for r in rows:
            pred = set(contained(str(r["text"])))
            gold = r["gold"]
            assert isinstance(gold, set)
            if pred != gold:
                print(f"{r['code']}: missed {sorted(gold - pred)} extra {sorted(pred - gold)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
