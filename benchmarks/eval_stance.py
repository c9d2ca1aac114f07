"""Compare the polarity models of ``groundtrace.crs.kb.stance`` on the two hand-labelled samples.

Samples (labels pos/neu/neg by hand; see their construction scripts next to them):

* ``tests/crs/kb/fixtures/stance_sample.tsv`` — 180 yelp_dense sentences, *used to choose* the model
  and its rules (the ``tuning`` set);
* ``tests/crs/kb/fixtures/stance_heldout.tsv`` — 240 sentences of 240 reviews of other businesses
  (../shared/data/yelp, none of yelp_dense's), labelled afterwards and *never tuned on* (``held_out``).

The star classifier is trained on yelp_dense reviews as a KB build would see them — at most ``--per-poi``
reviews per business (seeded by review id) — leaving out the reviews the samples came from. The review's
stars are passed as context (the ``contextual`` model uses them, as a KB build does). Reports accuracy,
macro-F1 and, for the use the builder makes of polarity, the share of hand-labelled negative sentences a
model reads as positive or neutral (``neg_leak``: lower is better), as positive (``neg_as_pos``), and the
share of positive sentences it reads as negative (``pos_as_neg``: praise the builder cannot quote).

    python benchmarks/eval_stance.py [--per-poi 15]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

from sklearn.metrics import accuracy_score, f1_score

from groundtrace.crs.kb.stance import ConsensusPolarity, ContextualPolarity, StarClassifier, VaderPolarity
from groundtrace.crs.schema import Review

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "crs" / "kb" / "fixtures"
SAMPLES = {"tuning": FIXTURES / "stance_sample.tsv", "held_out": FIXTURES / "stance_heldout.tsv"}
REVIEWS = ROOT / ".." / "shared" / "data" / "yelp_dense" / "yelp_academic_dataset_review.json"
LABEL = {"pos": 1, "neu": 0, "neg": -1}


def load_sample(path: Path) -> list[tuple[int, str, float, str]]:
    """``(label, review_id, review stars, sentence)`` rows of a labelled sample."""
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    out = []
    for row in rows:
        label, review_id, _start, stars, sentence = row.split("\t", 4)
        out.append((LABEL[label], review_id, float(stars), sentence))
    return out


def evaluate(model, rows: list[tuple[int, str, float, str]]) -> dict[str, float]:
    gold = [r[0] for r in rows]
    pred = [p for p, _ in model.predict([r[3] for r in rows], [r[2] for r in rows])]
    negs = [p for g, p in zip(gold, pred, strict=True) if g == -1]
    poss = [p for g, p in zip(gold, pred, strict=True) if g == 1]
    return {
        "accuracy": round(accuracy_score(gold, pred), 3),
        "macro_f1": round(f1_score(gold, pred, average="macro"), 3),
        "neg_leak": round(sum(p >= 0 for p in negs) / len(negs), 3),
        "neg_as_pos": round(sum(p == 1 for p in negs) / len(negs), 3),
        "pos_as_neg": round(sum(p == -1 for p in poss) / len(poss), 3),
        "predicted_neg_precision": round(
            sum(g == -1 for g, p in zip(gold, pred, strict=True) if p == -1)
            / max(1, sum(p == -1 for p in pred)),
            3,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-poi", type=int, default=15)
    args = parser.parse_args(argv)
    samples = {name: load_sample(path) for name, path in SAMPLES.items()}
    held_out = {r[1] for rows in samples.values() for r in rows}
    by_poi: dict[str, list[Review]] = defaultdict(list)
    with open(REVIEWS, encoding="utf-8") as handle:
        for line in handle:
            obj = json.loads(line)
            if obj["review_id"] in held_out:
                continue
            by_poi[obj["business_id"]].append(
                Review(
                    review_id=obj["review_id"],
                    poi_id=obj["business_id"],
                    stars=obj["stars"],
                    text=obj["text"],
                )
            )
    key = lambda r: hashlib.sha256(r.review_id.encode()).digest()
    train = [r for rs in by_poi.values() for r in sorted(rs, key=key)[: args.per_poi]]
    vader, stars = VaderPolarity(), StarClassifier().fit(train)
    models = {
        "vader": vader,
        "stars": stars,
        "consensus": ConsensusPolarity(vader, stars),
        "contextual": ContextualPolarity(vader, stars),
    }
    results: dict[str, object] = {"train_reviews": len(train)}
    for name, rows in samples.items():
        counts = {k: sum(r[0] == v for r in rows) for k, v in LABEL.items()}
        results[name] = {"sentences": len(rows), "labels": counts}
        results[name].update({m: evaluate(model, rows) for m, model in models.items()})
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
