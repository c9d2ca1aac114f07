"""Good gold answers: quality floors, evidence-backed picks and near-miss distractors.

A POI may be recommended (it is the gold answer of its turn) only when it is *good* relative to its pool,
the POIs of the same city and type:

* ``stars >= max(STAR_FLOOR, median(pool stars) - STAR_MARGIN)`` and
* ``positive_share >= max(STANCE_FLOOR, median(pool positive share) - STANCE_MARGIN)``, where a POI's
  positive share is the share of its quotable review sentences whose stored stance is positive
  (``EvidenceIndex.positive_share``).

A POI is *backed* for a constraint when a non-negative sentence of its reviews expresses it
(``EvidenceIndex.support``). The planner only asks for a constraint, and only recommends a POI for it,
where the satisfying POIs it picks are backed, so every recommendation can cite support for each
constraint. Constraints shown on the POI card (:data:`CARD_KINDS`: minimum stars, distance) need no
backing: the card states them.

A *near miss* is a POI of the pool that violates exactly one of the final constraints; the closed pool
takes up to :data:`NEAR_MISSES` of them first among its distractors, so ranking needs the constraints.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from groundtrace.crs.build.evidence import EvidenceIndex, aspect_pattern
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Constraint

STAR_FLOOR = 3.0
STAR_MARGIN = 0.5
STANCE_FLOOR = 0.3
STANCE_MARGIN = 0.15
NEAR_MISSES = 2
#: Constraint kinds the POI card (stars, location) establishes: no review evidence is needed or expected.
CARD_KINDS = frozenset({"min_stars", "max_distance_km"})


class QualityIndex:
    """Per (city, type) floors and the good POIs; evidence-backed subsets (cached)."""

    def __init__(self, kb: KnowledgeBase, evidence: EvidenceIndex) -> None:
        self.kb = kb
        self.evidence = evidence
        self._good: dict[tuple[str, str], frozenset[str]] = {}
        self._floors: dict[tuple[str, str], tuple[float, float]] = {}
        self._backed: dict[tuple[str, str, str], bool] = {}

    def floors(self, city: str, poi_type: str) -> tuple[float, float]:
        """``(star floor, positive-share floor)`` of the city × type pool (module docstring)."""
        key = (city, poi_type)
        if key not in self._floors:
            pois = self.kb.pois_in(city, poi_type)
            stars = [p.stars for p in pois] or [STAR_FLOOR]
            shares = [self.evidence.positive_share(p.poi_id) for p in pois] or [STANCE_FLOOR]
            self._floors[key] = (
                max(STAR_FLOOR, statistics.median(stars) - STAR_MARGIN),
                max(STANCE_FLOOR, statistics.median(shares) - STANCE_MARGIN),
            )
        return self._floors[key]

    def good(self, city: str, poi_type: str) -> frozenset[str]:
        """POIs of the city × type pool at or above both floors."""
        key = (city, poi_type)
        hit = self._good.get(key)
        if hit is None:
            star_floor, share_floor = self.floors(city, poi_type)
            hit = frozenset(
                p.poi_id
                for p in self.kb.pois_in(city, poi_type)
                if p.stars >= star_floor and self.evidence.positive_share(p.poi_id) >= share_floor
            )
            self._good[key] = hit
        return hit

    def backed(self, poi_id: str, constraints: Iterable[Constraint]) -> bool:
        """Every constraint outside :data:`CARD_KINDS` with a lexicon pattern has a supporting
        (non-negative) sentence of the POI."""
        for c in constraints:
            if c.kind in CARD_KINDS or aspect_pattern(c.kind, c.value) is None:
                continue
            key = (poi_id, c.kind, str(c.value))
            ok = self._backed.get(key)
            if ok is None:
                ok = self._backed[key] = bool(self.evidence.support(poi_id, c))
            if not ok:
                return False
        return True

    def preferred(self, ids: Iterable[str], constraints: list[Constraint]) -> list[str]:
        """The backed POIs of ``ids`` when there are any, else all of ``ids`` (sorted)."""
        ids = sorted(ids)
        backed = [p for p in ids if self.backed(p, constraints)]
        return backed or ids


def near_misses(violators: Iterable[str], satisfying: list[frozenset[str]]) -> list[str]:
    """The ids of ``violators`` outside exactly one of the ``satisfying`` sets (sorted)."""
    return sorted(p for p in violators if sum(p not in s for s in satisfying) == 1)
