"""Confidence calibration of the learned engine: a raw span score (lowest token marginal of a CRF span,
or a lexicon entry's training precision) becomes an estimated probability that the value is right, and
thresholds θ are picked on those probabilities for a target precision.

* :class:`Curve` — a monotone step-free map ``raw → p`` (knots ``xs`` ascending, ``ys`` non-decreasing;
  linear between knots, clipped outside), stored in the model file.
* :func:`fit_curve` — isotonic regression (scikit-learn) of correctness (0/1) on the raw score of
  held-out proposals, shrunk toward a prior curve by ``strength`` pseudo-observations spread over the
  observed scores (an attribute with few held-out proposals stays near the pooled curve):
  ``p = argmin_{monotone f} Σ_i (ok_i − f(x_i))² + (strength / k) Σ_j (prior(x_j) − f(x_j))²``.
* :func:`pick_threshold` — the lowest θ at which the proposals scoring ≥ θ reach the target precision
  (optionally its Wilson lower bound at ``z`` standard errors: ``z = 1`` asks the held-out precision to
  clear the target by about one standard error, so a θ that reaches it by luck on few proposals is not
  taken).
* :func:`allocate` — θ for every attribute: ``per-attribute`` (each attribute's own kept proposals reach
  the target) or ``pooled`` (one θ on the calibrated probability for every attribute, the lowest at which
  the kept proposals of all attributes *together* reach the target: the most values at that precision,
  since a proposal is kept exactly when its estimated probability is ≥ θ).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

NEVER = 1.01  # a θ above every confidence: the attribute is never proposed
Allocation = Literal["pooled", "per-attribute"]


class Curve(BaseModel):
    """Monotone map from a raw score to an estimated probability of being right (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    xs: list[float]
    ys: list[float]

    def __call__(self, raw: float) -> float:
        xs, ys = self.xs, self.ys
        if not xs:
            return raw
        if raw <= xs[0]:
            return ys[0]
        if raw >= xs[-1]:
            return ys[-1]
        i = bisect_right(xs, raw)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (raw - x0) / (x1 - x0)


def fit_curve(scored: Sequence[tuple[float, bool]], prior: Curve | float, strength: float = 4.0) -> Curve:
    """Isotonic fit of ``ok`` on ``raw`` over ``scored``, shrunk toward ``prior`` (a curve, or a constant
    probability) by ``strength`` pseudo-observations (module docstring)."""
    # deferred: scikit-learn is heavy (~0.5 s) and only training calibrates
    from sklearn.isotonic import IsotonicRegression

    if not scored:
        return prior if isinstance(prior, Curve) else Curve(xs=[0.0, 1.0], ys=[prior, prior])
    xs = sorted({x for x, _ok in scored})
    prior_of = prior if isinstance(prior, Curve) else (lambda _x, p=prior: p)
    pseudo = strength / len(xs)
    x = [raw for raw, _ok in scored] + xs
    y = [float(ok) for _raw, ok in scored] + [prior_of(v) for v in xs]
    w = [1.0] * len(scored) + [pseudo] * len(xs)
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
    iso.fit(x, y, sample_weight=w)
    return Curve(
        xs=[round(float(v), 6) for v in iso.X_thresholds_],
        ys=[round(float(v), 6) for v in iso.y_thresholds_],
    )


def wilson_lower(right: int, total: int, z: float) -> float:
    """Wilson score lower bound of a proportion ``right / total`` at ``z`` standard errors (``z = 0``: the
    proportion itself)."""
    if total == 0:
        return 0.0
    p = right / total
    if z == 0:
        return p
    z2 = z * z
    centre = p + z2 / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    return (centre - spread) / (1 + z2 / total)


def pick_threshold(scored: Sequence[tuple[float, bool]], target: float, z: float = 0.0) -> float:
    """The lowest confidence θ such that the proposals with confidence ≥ θ have precision ≥ ``target``
    (with ``z`` > 0: their Wilson lower bound, :func:`wilson_lower`); tied confidences are kept or dropped
    together; :data:`NEVER` when no θ does."""
    theta = NEVER
    right = total = 0
    ordered = sorted(scored, key=lambda x: -x[0])
    for i, (conf, ok) in enumerate(ordered):
        right += ok
        total += 1
        if i + 1 < len(ordered) and ordered[i + 1][0] == conf:
            continue
        if wilson_lower(right, total, z) >= target - 1e-12:
            theta = conf
    return theta


def allocate(
    calibrated: Mapping[str, Sequence[tuple[float, bool]]],
    target: float,
    allocation: Allocation = "pooled",
    min_proposals: int = 8,
    z: float = 0.0,
) -> tuple[dict[str, float], float]:
    """``(θ per attribute, default θ)`` on calibrated confidences ``{slug: [(p, ok), ...]}``.

    ``pooled``: one θ for all (:func:`pick_threshold` over every attribute's proposals together).
    ``per-attribute``: :func:`pick_threshold` per attribute; an attribute with fewer than
    ``min_proposals`` proposals takes the pooled θ. The default θ (attributes never seen held out) is the
    pooled θ in both modes. ``z``: the Wilson margin of :func:`pick_threshold`."""
    pooled = [x for xs in calibrated.values() for x in xs]
    default = pick_threshold(pooled, target, z) if pooled else NEVER
    if allocation == "pooled":
        return {slug: default for slug in calibrated}, default
    thresholds = {
        slug: pick_threshold(xs, target, z) if len(xs) >= min_proposals else default
        for slug, xs in calibrated.items()
    }
    return thresholds, default
