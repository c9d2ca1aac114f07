"""Practicality metrics (3): spatial coherence, price alignment, proximity alignment (turn level)."""

from __future__ import annotations

from itertools import combinations

from groundtrace.crs.kb.constraints import satisfies
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import TurnContext

WALKABLE_KM = 2.0
_PRICE_KINDS = ("price_max", "price_min")


def _has_price_constraint(ctx: TurnContext) -> bool:
    return any(c.kind in _PRICE_KINDS for c in ctx.gold.active_constraints)


def _has_distance_constraint(ctx: TurnContext) -> bool:
    return ctx.anchor is not None and any(c.kind == "max_distance_km" for c in ctx.gold.active_constraints)


def _spatial(metric: Metric, ctx: TurnContext) -> float | None:
    recommended = ctx.recommended
    if len(recommended) < 2:
        return None
    pairs = list(combinations(recommended, 2))
    near = sum(_walkable(ctx, a, b) for a, b in pairs)
    return near / len(pairs)


def _walkable(ctx: TurnContext, a: str, b: str) -> bool:
    """Haversine distance of KB POIs ``a`` then ``b`` <= WALKABLE_KM (cached for the run)."""
    key = ("walkable", a, b)
    cache = ctx.run.cache
    found = cache.get(key)
    if found is None:
        pois = ctx.run.kb.pois
        pa, pb = pois[a], pois[b]
        found = cache[key] = haversine_km(pa.lat, pa.lon, pb.lat, pb.lon) <= WALKABLE_KM
    return found  # type: ignore[no-any-return]


def _price(metric: Metric, ctx: TurnContext) -> float | None:
    constraints = [c for c in ctx.gold.active_constraints if c.kind in _PRICE_KINDS]
    if not constraints:
        return None
    poi = ctx.top1_poi
    if poi is None:
        return 0.0
    return 1.0 if all(satisfies(poi, c) for c in constraints) else 0.0


def _proximity(metric: Metric, ctx: TurnContext) -> float | None:
    constraints = [c for c in ctx.gold.active_constraints if c.kind == "max_distance_km"]
    anchor = ctx.anchor
    if not constraints or anchor is None:
        return None
    poi = ctx.top1_poi
    if poi is None:
        return 0.0
    return 1.0 if all(satisfies(poi, c, anchor) for c in constraints) else 0.0


SPATIAL_COHERENCE = register(
    MetricFamily(
        name="spatial_coherence",
        defaults=(None,),
        axis="practicality",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_spatial,
        formula=(
            "Spatial coherence: among the C(m,2) pairs of the turn's recommended set (first m "
            "<= 3 ranked KB\n"
            "POIs), the share within 2 km (haversine); not applicable when m < 2; mean over turns.\n"
            "Missing prediction: 0."
        ),
    ),
    aliases=("sc", "spatial"),
)

PRICE_ALIGNMENT = register(
    MetricFamily(
        name="price_alignment",
        defaults=(None,),
        axis="practicality",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_price,
        applies=_has_price_constraint,
        formula=(
            "Price alignment: 1[top-1 satisfies every price_max / price_min constraint active at the turn]\n"
            "(unknown price level = not aligned). Turns without a price constraint are not applicable\n"
            "(excluded from the mean). Missing prediction: 0."
        ),
    ),
    aliases=("pa", "price"),
)

PROXIMITY_ALIGNMENT = register(
    MetricFamily(
        name="proximity_alignment",
        defaults=(None,),
        axis="practicality",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_proximity,
        applies=_has_distance_constraint,
        formula=(
            "Proximity alignment: 1[haversine(anchor, top-1) <= value of every max_distance_km constraint\n"
            "active at the turn]. Turns without such a constraint, or dialogues without an anchor, are not\n"
            "applicable. Missing prediction: 0."
        ),
    ),
    aliases=("proximity",),
)
