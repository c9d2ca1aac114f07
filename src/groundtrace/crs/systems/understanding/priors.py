"""Learned persona priors for the ``persona`` system: what travellers who asked for these things also
asked for, from the constraint sets of a train split's dialogues (the learned archetypes).

Each train dialogue (per leg for an itinerary) contributes its POI type and the set ``D`` of the
``(kind, value)`` classes its user turns added. For a turn whose stated classes are ``S`` (POI type
``t``), the neighbours are the train sets of type ``t`` with ``|S ∩ D| > 0``, weighted
``w_D = |S ∩ D| / |D|``; the prior of an unstated class ``c`` is

    prior(c) = Σ_D w_D · [c ∈ D] / Σ_D w_D,

kept when ``>= min_prior`` (at most ``top`` classes, most probable first). No neighbour → no prior.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class ConstraintPriors:
    """Co-occurrence priors (module docstring)."""

    min_prior: float = 0.2
    top: int = 5
    sets: dict[str, list[frozenset[str]]] = field(default_factory=dict)

    def fit(self, dialogues: Iterable[tuple[str, frozenset[str]]]) -> ConstraintPriors:
        """``dialogues``: ``(poi_type, class set)`` pairs (empty sets are skipped)."""
        self.sets = {}
        for poi_type, classes in dialogues:
            if classes:
                self.sets.setdefault(poi_type, []).append(frozenset(classes))
        return self

    def prior(self, poi_type: str, stated: set[str]) -> list[tuple[str, float]]:
        """``(class, prior)`` of the unstated classes (module docstring), highest first, ties by name."""
        weights: dict[str, float] = {}
        total = 0.0
        for d in self.sets.get(poi_type, []):
            overlap = len(stated & d)
            if not overlap:
                continue
            w = overlap / len(d)
            total += w
            for c in d - stated:
                weights[c] = weights.get(c, 0.0) + w
        if total == 0:
            return []
        ranked = sorted(((c, w / total) for c, w in weights.items()), key=lambda x: (-x[1], x[0]))
        return [(c, p) for c, p in ranked if p >= self.min_prior][: self.top]
