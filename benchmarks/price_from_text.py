"""Can review text carry a POI's price level? Measured on a KB whose POIs have Yelp's level.

For every POI with ``price_level`` (levels 3 and 4 compared as 3): the always-majority baseline, the text
rule ``groundtrace.crs.kb.mining.infer_price`` (all answers, and its confident ones: levels 1 and 3), and
supervised scikit-learn models cross-validated on the same POIs (5 folds, seeded): logistic regression on
TF-IDF of the POI's reviews, on its categories, on both — with the accuracy and coverage of answers whose
predicted probability is >= 0.7. The builder fills no price from text (docs/crs-kb.md says why).

    groundtrace crs kb build --yelp-dir ../shared/data/yelp_dense --out /tmp/dense.sqlite
    python benchmarks/price_from_text.py --kb /tmp/dense.sqlite
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict

from groundtrace.crs.kb.mining import EVIDENCE_KEY, _sentences, infer_price
from groundtrace.crs.kb.store import load_kb


def _cv(x, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    proba = cross_val_predict(LogisticRegression(C=c, max_iter=2000), x, y, cv=folds, method="predict_proba")
    labels = np.array(sorted(set(y)))
    return labels[proba.argmax(1)], proba.max(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", required=True)
    args = parser.parse_args(argv)
    kb = load_kb(args.kb)
    pois = [  # Yelp's level only (a KB built before price mining was dropped may hold mined levels)
        p
        for p in sorted(kb.pois.values(), key=lambda p: p.poi_id)
        if p.price_level is not None and "price_level" not in p.attributes.get(EVIDENCE_KEY, {})
    ]
    y = np.array([min(p.price_level, 3) for p in pois])
    rule = np.array([infer_price(_sentences(kb, p.poi_id))[0] for p in pois])
    confident = rule != 2
    docs = [" ".join(r.text for r in kb.reviews_of(p.poi_id)) for p in pois]
    cats = [" ".join(c.replace(" ", "_") for c in p.categories) for p in pois]
    text = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(docs)
    categories = TfidfVectorizer(token_pattern=r"\S+").fit_transform(cats)
    out: dict[str, object] = {
        "pois": len(pois),
        "levels": dict(sorted(Counter(int(v) for v in y).items())),
        "majority_baseline": round(Counter(y).most_common(1)[0][1] / len(y), 3),
        "text_rule": round(float((rule == y).mean()), 3),
        "text_rule_confident": {
            "n": int(confident.sum()),
            "accuracy": round(float((rule == y)[confident].mean()), 3),
        },
    }
    for name, x, c in (
        ("lr_text", text, 10.0),
        ("lr_categories", categories, 1.0),
        ("lr_text_and_categories", sp.hstack([text, categories]).tocsr(), 1.0),
    ):
        pred, conf = _cv(x, y, c)
        sure = conf >= 0.7
        out[name] = {
            "accuracy": round(float((pred == y).mean()), 3),
            "at_0.7": {
                "coverage": round(float(sure.mean()), 3),
                "accuracy": round(float((pred == y)[sure].mean()), 3) if sure.any() else None,
            },
        }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
