"""Product-identity precision and recall on labelled title pairs (docs/catalog-scout.md, "Product lines").

Two modes:

* ``--sample OUT`` builds unlabelled candidate pairs from real offers (seeded, reproducible): titles of
  the same brand from OA-Mine (``oa_mine/*.jsonl``, brand = the gold ``Brand``) and WDC-PAVE
  (``wdc_pave/train_large.jsonl``), half of them the most similar same-brand title (rapidfuzz
  ``token_set_ratio``, where sibling variants live) and half a random same-brand title, plus pairs of a title
  and the same title rewritten the way another retailer lists it (segments reordered, a retailer suffix, the
  brand moved to the end, case changed). Every pair gets a split: ``heldout`` for one in three (by a hash
  of its id), else ``dev``. The labels (``same`` / ``sibling_variant`` / ``other``) are then written by a
  person reading each pair; the labelled file is ``benchmarks/data/identity_pairs.jsonl``.
* default: evaluate :func:`groundtrace.catalog.identity.identity_match` on the labelled file. The SKU is
  ``SKU(title=first title, brand=brand)``, the page a web Document whose title is the second title.
  Predicted ``same`` = matched; ``sibling_variant`` = rejected with relation sibling_variant; anything else
  = ``other``. Reported per split: precision and recall of ``same`` and of ``sibling_variant``, and the
  confusion matrix.

Usage::

    python benchmarks/eval_identity.py                       # evaluate the committed labels
    python benchmarks/eval_identity.py --sample /tmp/pairs.jsonl --data ../shared/data/catalog
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from rapidfuzz import fuzz

from groundtrace.catalog.identity import identity_match
from groundtrace.catalog.model import SKU, Document

HERE = Path(__file__).resolve().parent
LABELS = HERE / "data" / "identity_pairs.jsonl"
CLASSES = ("same", "sibling_variant", "other")
RETAILER_SUFFIXES = (" | Shop.com", " - Walmart.com", " : Amazon.com", " | Target", " - BestBuy.com")


def _titles(data: Path) -> dict[str, list[tuple[str, str]]]:
    """brand (lower-case) → [(source id, title)], distinct titles only."""
    by_brand: dict[str, dict[str, str]] = defaultdict(dict)
    for split in ("train", "validation"):
        path = data / "oa_mine" / f"{split}.jsonl"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            rec = json.loads(line)
            brands = [b for b in rec.get("target_scores", {}).get("Brand", {}) if b != "n/a"]
            if brands:
                by_brand[brands[0]].setdefault(rec["input"].strip(), f"oa_mine/{split}:{n}")
    path = data / "wdc_pave" / "train_large.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        brands = [b for b in rec.get("target_scores", {}).get("Brand", {}) if b != "n/a"]
        if brands:
            by_brand[brands[0]].setdefault(rec["input_title"].strip(), f"wdc_pave:{rec['id']}")
    return {b: sorted((i, t) for t, i in titles.items()) for b, titles in by_brand.items()}


def _rewrite(title: str, brand: str, rng: random.Random) -> str:
    """The same product as another retailer might list it (no word added or dropped that names a
    product, variant or size)."""
    parts = [p.strip() for p in re.split(r",\s*", title) if p.strip()]
    if len(parts) > 2:
        head, rest = parts[0], parts[1:]
        rng.shuffle(rest)
        title = ", ".join([head, *rest])
    choice = rng.randrange(4)
    if choice == 0 and title.lower().startswith(brand.lower()):
        title = f"{title[len(brand) :].strip(' ,-')} by {brand}"
    elif choice == 1:
        title = title.upper()
    elif choice == 2:
        title = title.replace(",", " -")
    return title + rng.choice(RETAILER_SUFFIXES)


def _split(pair_id: str) -> str:
    return "heldout" if int(hashlib.sha256(pair_id.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def sample(data: Path, n_pairs: int, n_same: int, seed: int) -> list[dict]:
    """Unlabelled candidate pairs (module docstring)."""
    rng = random.Random(seed)
    by_brand = {b: t for b, t in _titles(data).items() if len(t) >= 2}
    brands = sorted(by_brand)
    out: list[dict] = []
    seen: set[tuple[str, str]] = set()
    while len(out) < n_pairs:
        brand = rng.choice(brands)
        titles = by_brand[brand]
        (id_a, a) = rng.choice(titles)
        others = [(i, t) for i, t in titles if t != a]
        if len(out) % 2 == 0:
            id_b, b = max(others, key=lambda it: (fuzz.token_set_ratio(a, it[1]), it[0]))
            how = "nearest"
        else:
            id_b, b = rng.choice(others)
            how = "random"
        key = (min(id_a, id_b), max(id_a, id_b))
        if key in seen:
            continue
        seen.add(key)
        pair_id = f"{id_a}|{id_b}"
        out.append(
            {"id": pair_id, "brand": brand, "sku_title": a, "page_title": b, "how": how, "label": None}
        )
    flat = [(b, i, t) for b in brands for i, t in by_brand[b]]
    for brand, id_a, a in rng.sample(flat, n_same):
        out.append(
            {
                "id": f"{id_a}|rewritten",
                "brand": brand,
                "sku_title": a,
                "page_title": _rewrite(a, brand, rng),
                "how": "rewritten",
                "label": None,
            }
        )
    for row in out:
        row["split"] = _split(row["id"])
    return out


def predict(brand: str, sku_title: str, page_title: str) -> str:
    """``same`` / ``sibling_variant`` / ``other`` from identity_match (module docstring)."""
    sku = SKU(sku_id="pair", title=sku_title, brand=brand, category="pairs")
    page = Document(source="web", source_type="retailer", source_ref="https://pair.example/p", text="")
    page = page.model_copy(update={"title": page_title, "metadata": {"title": page_title}})
    result = identity_match(sku, page)
    if result.matched:
        return "same"
    return "sibling_variant" if result.relation == "sibling_variant" else "other"


def _pr(rows: list[tuple[str, str]], cls: str) -> tuple[float, float, int, int, int]:
    tp = sum(1 for gold, pred in rows if gold == cls and pred == cls)
    n_pred = sum(1 for _, pred in rows if pred == cls)
    n_gold = sum(1 for gold, _ in rows if gold == cls)
    return (tp / n_pred if n_pred else 0.0, tp / n_gold if n_gold else 0.0, tp, n_pred, n_gold)


def evaluate(path: Path) -> dict[str, dict]:
    """Per split (dev, heldout, all): precision/recall of same and sibling_variant, confusion counts."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    bad = [r["id"] for r in rows if r.get("label") not in CLASSES]
    if bad:
        raise SystemExit(f"{path}: {len(bad)} pair(s) without a label in {CLASSES}, first {bad[0]}")
    report: dict[str, dict] = {}
    for split in ("dev", "heldout", "all"):
        chosen = [r for r in rows if split == "all" or r["split"] == split]
        pairs = [(r["label"], predict(r["brand"], r["sku_title"], r["page_title"])) for r in chosen]
        entry: dict = {"pairs": len(pairs), "confusion": dict(Counter(f"{g}->{p}" for g, p in pairs))}
        for cls in ("same", "sibling_variant"):
            p, r, tp, n_pred, n_gold = _pr(pairs, cls)
            entry[cls] = {
                "precision": round(p, 3),
                "recall": round(r, 3),
                "tp": tp,
                "pred": n_pred,
                "gold": n_gold,
            }
        report[split] = entry
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=Path, default=LABELS, help="Labelled pairs JSONL to evaluate.")
    parser.add_argument("--sample", type=Path, help="Write unlabelled candidate pairs here instead.")
    parser.add_argument("--data", type=Path, default=Path("../shared/data/catalog"))
    parser.add_argument("--pairs", type=int, default=240, help="Same-brand pairs to sample.")
    parser.add_argument("--same", type=int, default=90, help="Rewritten same-product pairs to add.")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--show-errors", action="store_true", help="Print every misclassified pair.")
    parser.add_argument(
        "--split",
        choices=("dev", "heldout", "all"),
        default="all",
        help="Report (and show errors of) one split.",
    )
    args = parser.parse_args(argv)
    if args.sample:
        for needed in (args.data / "oa_mine", args.data / "wdc_pave" / "train_large.jsonl"):
            if not needed.exists():
                print(f"missing data: {needed}", file=sys.stderr)
                return 2
        rows = sample(args.data, args.pairs, args.same, args.seed)
        args.sample.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        print(f"wrote {len(rows)} unlabelled pairs to {args.sample}")
        return 0
    report = evaluate(args.labels)
    for split, entry in report.items():
        if args.split != "all" and split != args.split:
            continue
        same, sib = entry["same"], entry["sibling_variant"]
        print(
            f"{split:8s} pairs={entry['pairs']:4d}  same P={same['precision']:.3f} R={same['recall']:.3f} "
            f"({same['tp']}/{same['pred']} pred, {same['gold']} gold)  sibling P={sib['precision']:.3f} "
            f"R={sib['recall']:.3f} ({sib['tp']}/{sib['pred']} pred, {sib['gold']} gold)"
        )
        print(f"         confusion (gold->pred): {dict(sorted(entry['confusion'].items()))}")
    if args.show_errors:
        rows = [json.loads(line) for line in args.labels.read_text(encoding="utf-8").splitlines() if line]
        for r in rows:
            if args.split != "all" and r["split"] != args.split:
                continue
            pred = predict(r["brand"], r["sku_title"], r["page_title"])
            if pred != r["label"]:
                print(
                    f"[{r['split']}] gold={r['label']} pred={pred}: {r['sku_title']!r} vs {r['page_title']!r}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
