"""``spatial`` and ``itinerary``: distance-aware ranking around the dialogue's anchor."""

from __future__ import annotations

import math
from typing import Any

from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.systems.baselines.lexical import sparse_scores
from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.scoring import greedy_route, rank_by, within_radius
from groundtrace.crs.systems.toolkit.structured import anchor_of


def _centre(turn: Turn) -> tuple[float, float] | None:
    anchor = anchor_of(turn.inp.anchor)
    return (anchor.lat, anchor.lon) if anchor is not None else None


class SpatialSystem(RankingSystem):
    """Haversine filtering and distance-aware ranking around the anchor.

    Radius = the stated ``max_distance_km`` constraint, else ``radius_km``. Candidates inside it come
    first, scored ``tfidf · exp(−d / decay_km)``; the rest follow by distance. Without an anchor: TF-IDF.
    """

    def __init__(self, *, radius_km: float = 2.0, decay_km: float = 2.0, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        if radius_km <= 0 or decay_km <= 0:
            raise ValueError("radius_km and decay_km must be > 0")
        self.radius_km, self.decay_km = radius_km, decay_km

    def config(self) -> dict[str, Any]:
        return {**super().config(), "radius_km": self.radius_km, "decay_km": self.decay_km}

    def score(self, turn: Turn) -> dict[str, float]:
        sparse = sparse_scores(self, turn, 0.5)
        centre = _centre(turn)
        if centre is None:
            return sparse
        radius = next(
            (float(c.value) for c in turn.state.constraints if c.kind == "max_distance_km"), self.radius_km
        )
        points = {c.poi_id: (c.lat, c.lon) for c in turn.inp.candidates}
        inside = set(within_radius(points, *centre, radius))
        out = {}
        for pid, (lat, lon) in points.items():
            d = haversine_km(centre[0], centre[1], lat, lon)
            out[pid] = (1.0 + sparse[pid] * math.exp(-d / self.decay_km)) if pid in inside else -d
        return out


class ItinerarySystem(RankingSystem):
    """Cross-type planning: the best TF-IDF match first, then the other candidates within ``radius_km`` of
    it in greedy nearest-neighbour order (a walkable route), then the rest by relevance."""

    def __init__(self, *, radius_km: float = 3.0, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        self.radius_km = radius_km

    def config(self) -> dict[str, Any]:
        return {**super().config(), "radius_km": self.radius_km}

    def score(self, turn: Turn) -> dict[str, float]:
        return sparse_scores(self, turn, 0.5)

    def rank(self, turn: Turn) -> list[str]:
        by_relevance = self.final_order(turn, rank_by(self.score(turn), turn.pool))
        if not by_relevance:
            return []
        first = turn.cards[by_relevance[0]]
        points = {
            p: (turn.cards[p].lat, turn.cards[p].lon)
            for p in by_relevance[1:]
            if p not in turn.state.rejected
        }
        near = set(within_radius(points, first.lat, first.lon, self.radius_km))
        route = greedy_route({p: points[p] for p in points if p in near}, (first.lat, first.lon))
        head = [first.poi_id, *route]
        return head + [p for p in by_relevance if p not in head]
