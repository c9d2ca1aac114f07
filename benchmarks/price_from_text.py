"""Can review text carry a POI's price level? Measured on POIs that have Yelp's level.

On the POIs of one type of a KB (``--type``, default restaurant; levels 3 and 4 compared as 3):

* ``majority``: always the training part's most common level;
* ``text_rule``: the cheap/pricey sentence rule ``groundtrace.crs.kb.mining.infer_price``;
* ``learned``: ``groundtrace.crs.kb.price.PriceModel`` (TF-IDF of the reviews + menu prices + price
  words + categories, logistic regression), *nested* cross-validation: 5 outer folds (seeded); in each,
  ``price.assess`` on the training part alone picks the confidence floor (its own inner 5-fold CV) and
  decides whether it would fill at all (the floor must also beat the majority level on the POIs above
  it); the model fitted on the training part answers the test part.
  Reported: accuracy, macro-F1, within-one accuracy of every answer, and coverage/accuracy of the answers
  at or above the floor (what ``crs kb build`` would fill);
* ``cross_city``: trained (and its floor chosen) on the KB's Philadelphia POIs, tested on the others;
* ``other_slice`` (``--other-yelp-dir``): trained on the whole KB, tested on the businesses of another
  Yelp folder that have a level and at least one review there, leaving out every business of the KB.

    groundtrace crs kb build --yelp-dir ../shared/data/yelp_dense --out /tmp/dense.sqlite
    python benchmarks/price_from_text.py --kb /tmp/dense.sqlite --other-yelp-dir ../shared/data/yelp
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold

from groundtrace.crs.kb import price
from groundtrace.crs.kb.mining import _sentences, infer_price
from groundtrace.crs.kb.store import load_kb


def _evaluate(train, test, kb_train, kb_test=None, docs_test=None) -> dict[str, object]:
    """Floor and fill decision from ``train`` alone; every answer and the filled ones on ``test``."""
    floor, report = price.assess(kb_train, train)
    model = price.PriceModel().fit(
        [price.poi_document(kb_train, p) for p in train],
        [p.categories for p in train],
        [p.price_level for p in train],
    )
    docs = docs_test if docs_test is not None else [price.poi_document(kb_test, p) for p in test]
    answers = model.predict(docs, [p.categories for p in test])
    gold = np.array([price.level_class(p.price_level) for p in test])
    pred = np.array([a for a, _ in answers])
    conf = np.array([c for _, c in answers])
    majority = Counter(price.level_class(p.price_level) for p in train).most_common(1)[0][0]
    return {"gold": gold, "pred": pred, "conf": conf, "majority": majority, "floor": floor, "report": report}


def _summary(gold, pred, conf, majority, floors) -> dict[str, object]:
    sure = conf >= np.array(floors, dtype=float)
    return {
        "n": len(gold),
        "levels": {str(k): v for k, v in sorted(Counter(gold.tolist()).items())},
        "majority": price.scores(gold, majority),
        "learned": price.scores(gold, pred),
        "at_floor": {
            "coverage": round(float(sure.mean()), 3),
            "accuracy": round(float((gold == pred)[sure].mean()), 3) if sure.any() else None,
            "majority_accuracy_there": round(float((gold == majority)[sure].mean()), 3)
            if sure.any()
            else None,
        },
    }


def nested_cv(kb, pois) -> dict[str, object]:
    y = np.array([price.level_class(p.price_level) for p in pois])
    gold, pred, conf, majority, floors, fills = [], [], [], [], [], []
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y):
        r = _evaluate([pois[i] for i in train], [pois[i] for i in test], kb, kb)
        gold += r["gold"].tolist()
        pred += r["pred"].tolist()
        conf += r["conf"].tolist()
        majority += [r["majority"]] * len(test)
        # a fold whose training part would not fill contributes no filled answer
        floors += [r["floor"] if r["floor"] is not None else np.inf] * len(test)
        fills.append(r["floor"])
    out = _summary(np.array(gold), np.array(pred), np.array(conf), np.array(majority), floors)
    out["floors_per_fold"] = fills
    return out


def cross_city(kb, pois, city: str) -> dict[str, object]:
    train = [p for p in pois if p.city == city]
    test = [p for p in pois if p.city != city]
    r = _evaluate(train, test, kb, kb)
    floor = r["floor"] if r["floor"] is not None else np.inf
    out = _summary(r["gold"], r["pred"], r["conf"], np.full(len(test), r["majority"]), [floor] * len(test))
    out.update(
        {
            "train": f"{city} ({len(train)})",
            "test_cities": dict(Counter(p.city for p in test)),
            "floor": r["floor"],
        }
    )
    return out


def other_slice(kb, pois, folder: Path) -> dict[str, object]:
    from groundtrace.crs.kb.yelp import yelp_files
    from groundtrace.crs.schema import POI

    business_path, review_path = yelp_files(folder)
    known = set(kb.pois)
    business: dict[str, POI] = {}
    with open(business_path, encoding="utf-8") as handle:
        for line in handle:
            b = json.loads(line)
            level = (b.get("attributes") or {}).get("RestaurantsPriceRange2")
            if b["business_id"] in known or level in (None, "None"):
                continue
            cats = [c.strip() for c in (b.get("categories") or "").split(",") if c.strip()]
            business[b["business_id"]] = POI(
                poi_id=b["business_id"],
                name=b["name"],
                city=b.get("city") or "",
                poi_type="restaurant",
                lat=b["latitude"],
                lon=b["longitude"],
                stars=b["stars"],
                review_count=b["review_count"],
                price_level=int(level),
                categories=cats,
            )
    texts: dict[str, list[str]] = defaultdict(list)
    with open(review_path, encoding="utf-8") as handle:
        for line in handle:
            r = json.loads(line)
            if r["business_id"] in business:
                texts[r["business_id"]].append(r["text"])
    test = [business[i] for i in sorted(texts)]
    r = _evaluate(pois, test, kb, docs_test=[" ".join(texts[p.poi_id]) for p in test])
    floor = r["floor"] if r["floor"] is not None else np.inf
    out = _summary(r["gold"], r["pred"], r["conf"], np.full(len(test), r["majority"]), [floor] * len(test))
    out.update(
        {"folder": str(folder), "reviews_per_business": round(sum(map(len, texts.values())) / len(test), 2)}
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", required=True)
    parser.add_argument("--other-yelp-dir", type=Path, default=None)
    parser.add_argument("--city", default="Philadelphia", help="the training city of the cross-city test")
    parser.add_argument("--type", default="restaurant", help="the POI type measured (a model per type)")
    args = parser.parse_args(argv)
    kb = load_kb(args.kb)
    pois = [
        p
        for p in sorted(kb.pois.values(), key=lambda p: p.poi_id)
        if p.price_level is not None and not price.is_inferred(p) and p.poi_type == args.type
    ]
    y = np.array([price.level_class(p.price_level) for p in pois])
    rule = np.array([infer_price(_sentences(kb, p.poi_id))[0] for p in pois])
    _floor, report = price.assess(kb, pois)
    out: dict[str, object] = {
        "pois": len(pois),
        "text_rule": price.scores(y, rule),
        "assess_on_all": report,
        "nested_cv": nested_cv(kb, pois),
        "cross_city": cross_city(kb, pois, args.city),
    }
    if args.other_yelp_dir is not None:
        out["other_slice"] = other_slice(kb, pois, args.other_yelp_dir)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
