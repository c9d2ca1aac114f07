"""Scoring pieces shared by the offline systems, each a small formula checked by hand in the tests."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from groundtrace.crs.kb.geo import haversine_km

RRF_K = 60
"""The usual reciprocal-rank-fusion constant (Cormack et al., 2009)."""


def bayesian_rating(stars: float, count: int, prior_mean: float, prior_weight: float) -> float:
    """Bayesian average ``(C·m + n·s) / (C + n)``: ``n`` ratings of mean ``s`` shrunk towards the prior
    mean ``m`` with the weight of ``C`` pseudo-ratings (IMDb's weighted rating)."""
    if count < 0 or prior_weight < 0 or count + prior_weight == 0:
        raise ValueError("count and prior_weight must be >= 0 and not both 0")
    return (prior_weight * prior_mean + count * stars) / (prior_weight + count)


def popularity_score(stars: float, count: int, prior_mean: float, prior_weight: float) -> float:
    """``bayesian_rating · log(1 + n)``: a well-rated place many people reviewed ranks first."""
    return bayesian_rating(stars, count, prior_mean, prior_weight) * math.log1p(count)


def rrf(rankings: Iterable[Sequence[str]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion: ``score(d) = Σ_r 1 / (k + rank_r(d))`` with 1-based ranks; an id absent
    from a ranking gets nothing from it."""
    out: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            out[item] = out.get(item, 0.0) + 1.0 / (k + rank)
    return out


def rank_by(scores: dict[str, float], order: Sequence[str]) -> list[str]:
    """``order``'s ids sorted by descending score; ties (and ids without a score, last) keep ``order``."""
    position = {p: i for i, p in enumerate(order)}
    return sorted(order, key=lambda p: (-scores.get(p, -math.inf), position[p]))


def within_radius(
    points: dict[str, tuple[float, float]], lat: float, lon: float, radius_km: float
) -> list[str]:
    """Ids of ``points`` (id → (lat, lon)) whose haversine distance to ``(lat, lon)`` is ≤ ``radius_km``,
    nearest first (ties in input order)."""
    dist = {p: haversine_km(lat, lon, a, b) for p, (a, b) in points.items()}
    return sorted((p for p, d in dist.items() if d <= radius_km), key=lambda p: dist[p])


def greedy_route(points: dict[str, tuple[float, float]], start: tuple[float, float]) -> list[str]:
    """Greedy nearest-neighbour tour: from ``start`` repeatedly visit the nearest unvisited point
    (haversine; ties broken by input order). The classic 2-approximation-free TSP heuristic."""
    left = dict(points)
    here = start
    route: list[str] = []
    while left:
        nxt = min(left, key=lambda p: haversine_km(here[0], here[1], *left[p]))
        route.append(nxt)
        here = left.pop(nxt)
    return route
