"""Compare the two polarity models of ``groundtrace.crs.kb.stance`` on the hand-labelled sample.

Sample: ``tests/crs/kb/fixtures/stance_sample.tsv`` (180 yelp_dense sentences, labels pos/neu/neg by hand;
see its construction script). The star classifier is trained on yelp_dense reviews as a KB build would
see them — at most ``--per-poi`` reviews per business (seeded by review id) — leaving out the reviews the
sample came from. Reports accuracy, macro-F1 and, for the use the builder makes of polarity, the share of
hand-labelled negative sentences a model lets through as non-negative (``neg_leak``: lower is better).

    python benchmarks/eval_stance.py [--per-poi 15]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from pathlib import Path

from sklearn.metrics import accuracy_score, f1_score

from groundtrace.crs.kb.stance import ConsensusPolarity, StarClassifier, VaderPolarity
from groundtrace.crs.schema import Review

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "crs" / "kb" / "fixtures" / "stance_sample.tsv"
REVIEWS = ROOT / ".." / "shared" / "data" / "yelp_dense" / "yelp_academic_dataset_review.json"
LABEL = {"pos": 1, "neu": 0, "neg": -1}


def load_sample(path: Path = SAMPLE) -> list[tuple[int, str, str]]:
    """``(label, review_id, sentence)`` rows of the labelled sample."""
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    out = []
    for row in rows:
        label, review_id, _start, _stars, sentence = row.split("\t", 4)
        out.append((LABEL[label], review_id, sentence))
    return out


def evaluate(model, rows: list[tuple[int, str, str]]) -> dict[str, float]:
    gold = [r[0] for r in rows]
    pred = [p for p, _ in model.predict([r[2] for r in rows])]
    negs = [p for g, p in zip(gold, pred, strict=True) if g == -1]
    return {
        "accuracy": round(accuracy_score(gold, pred), 3),
        "macro_f1": round(f1_score(gold, pred, average="macro"), 3),
        "neg_leak": round(sum(p >= 0 for p in negs) / len(negs), 3),
        "neg_as_pos": round(sum(p == 1 for p in negs) / len(negs), 3),
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
    rows = load_sample()
    held_out = {r[1] for r in rows}
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
    results = {
        "sample": len(rows),
        "train_reviews": len(train),
        "vader": evaluate(vader, rows),
        "stars": evaluate(stars, rows),
        "consensus": evaluate(ConsensusPolarity(vader, stars), rows),
    }
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
