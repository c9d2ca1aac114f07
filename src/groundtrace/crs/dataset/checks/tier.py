"""The difficulty tier (``GT-D004``, ``GT-D005``): recomputed from the measured features
(:mod:`groundtrace.crs.dataset.tiers`) and compared with ``difficulty`` and the stored features."""

from __future__ import annotations

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext
from groundtrace.crs.dataset.tiers import dialogue_features, tier_for, tier_points

#: feature keys a tiered dialogue stores
TIER_FEATURES = frozenset({"n_constraints", "has_rejection", "n_satisfying", "n_turns", "tier_points"})


def check_tier(ctx: CheckContext) -> None:
    """Only for a tiered dialogue whose last recommendation turn has gold (else the gold rules report)."""
    d = ctx.dialogue
    recs = d.recommendation_turns()
    if not ctx.tiered or not recs or recs[-1].gold is None:
        return
    if not TIER_FEATURES & d.features.keys():
        detail = "no tier features stored: the difficulty tier is not documented by its features"
        ctx.report(R.FEATURES, None, detail=detail)
    measured = dialogue_features(d, ctx.kb)
    points = tier_points(measured)
    expected = tier_for(points)
    if d.difficulty != expected:
        keys = ("n_constraints", "has_rejection", "n_satisfying", "n_turns")
        basis = ", ".join(f"{k}={measured[k]:g}" for k in keys)
        ctx.report(R.TIER, None, stored=d.difficulty, expected=expected, points=points, basis=basis)
    for key, value in [*measured.items(), ("tier_points", float(points))]:
        stored = d.features.get(key)
        if stored is not None and stored != value:
            detail = f"features.{key} is {stored:g} but the dialogue measures {value:g}"
            ctx.report(R.FEATURES, None, detail=detail)
