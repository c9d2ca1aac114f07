"""Precision / coverage over a confidence threshold θ, and "coverage at P % precision" (the headline).

For a threshold θ on the candidate confidence (the write policy's ``threshold``), over pair outcomes:

* kept(θ) = extracted pairs with confidence ≥ θ (``written=True``: and action WRITE);
* precision(θ) = correct / kept-with-gold (value or n/a gold; a value on n/a gold is wrong);
* coverage(θ) = kept with a gold value / pairs with a gold value (``coverage_gold`` at θ).

One point per distinct confidence (tied confidences are kept or dropped together), highest θ first, so
coverage never decreases along the curve. :func:`at_precision` is the point of highest coverage whose
precision reaches the target: raising the policy threshold to its θ publishes that coverage at that
precision *on the evaluated pairs* (pick θ on labelled data you do not publish, then check it on another).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from groundtrace.catalog.evaluation.metrics import PairOutcome

MAX_POINTS = 101  # stored points per curve (the headline is computed on the full curve)


class CurvePoint(BaseModel):
    """Counts at one threshold θ (module docstring)."""

    theta: float
    kept: int  # kept pairs (extracted, confidence >= theta)
    judged: int  # kept pairs with gold (value or n/a)
    correct: int
    covered: int  # kept pairs with a gold value
    gold_values: int  # pairs with a gold value (the coverage denominator)

    @property
    def precision(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def coverage(self) -> float | None:
        return self.covered / self.gold_values if self.gold_values else None


class Headline(BaseModel):
    """Coverage at the target precision: the point and what it means for the policy."""

    target: float
    point: CurvePoint | None  # None: no θ reaches the target
    best_precision: float | None  # the highest precision of any θ (what is reachable at all)

    @property
    def coverage(self) -> float:
        return (self.point.coverage or 0.0) if self.point is not None else 0.0


def threshold_curve(outcomes: Iterable[PairOutcome], written: bool = False) -> list[CurvePoint]:
    """Every point of the curve, highest θ first (module docstring)."""
    outcomes = list(outcomes)
    gold_values = sum(o.gold == "value" for o in outcomes)
    kept = [
        o
        for o in outcomes
        if o.extracted and o.confidence is not None and (not written or o.action == "WRITE")
    ]
    kept.sort(key=lambda o: -(o.confidence or 0.0))
    points: list[CurvePoint] = []
    n = judged = correct = covered = 0
    for i, o in enumerate(kept):
        n += 1
        judged += o.judged
        correct += bool(o.correct)
        covered += o.gold == "value"
        if i + 1 < len(kept) and kept[i + 1].confidence == o.confidence:
            continue
        points.append(
            CurvePoint(
                theta=float(o.confidence or 0.0),
                kept=n,
                judged=judged,
                correct=correct,
                covered=covered,
                gold_values=gold_values,
            )
        )
    return points


def at_precision(points: list[CurvePoint], target: float) -> Headline:
    """The highest-coverage point whose precision is ≥ ``target`` (ties: the higher θ)."""
    best: CurvePoint | None = None
    for p in points:
        if p.precision is not None and p.precision >= target and (best is None or p.covered > best.covered):
            best = p
    precisions = [p.precision for p in points if p.precision is not None]
    return Headline(target=target, point=best, best_precision=max(precisions) if precisions else None)


def thin(points: list[CurvePoint], max_points: int = MAX_POINTS) -> list[CurvePoint]:
    """At most ``max_points`` points for storing and plotting: the last point of each θ bucket of width
    ``1 / (max_points - 1)`` (the lowest θ of the bucket, so every stored point is a real one)."""
    if len(points) <= max_points:
        return points
    out: dict[int, CurvePoint] = {}
    for p in points:
        out[round(p.theta * (max_points - 1))] = p
    return list(out.values())


class ThresholdReport(BaseModel):
    """The curves and headlines of one evaluation: overall (extracted values, and written values) and per
    attribute (extracted); stored curves are :func:`thin`-ned, headlines come from the full curves."""

    target: float
    overall: Headline
    overall_written: Headline
    per_attribute: dict[str, Headline]
    curve: list[CurvePoint]
    curve_written: list[CurvePoint]
    per_attribute_curves: dict[str, list[CurvePoint]]


def threshold_report(outcomes: Iterable[PairOutcome], target: float = 0.95) -> ThresholdReport:
    """Curves over θ and coverage at ``target`` precision, overall and per attribute."""
    outcomes = list(outcomes)
    by_attribute: dict[str, list[PairOutcome]] = {}
    for o in outcomes:
        by_attribute.setdefault(o.attribute, []).append(o)
    curve = threshold_curve(outcomes)
    written = threshold_curve(outcomes, written=True)
    per = {a: threshold_curve(os) for a, os in sorted(by_attribute.items())}
    return ThresholdReport(
        target=target,
        overall=at_precision(curve, target),
        overall_written=at_precision(written, target),
        per_attribute={a: at_precision(c, target) for a, c in per.items()},
        curve=thin(curve),
        curve_written=thin(written),
        per_attribute_curves={a: thin(c) for a, c in per.items()},
    )
