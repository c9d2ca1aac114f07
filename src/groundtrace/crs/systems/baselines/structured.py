"""``knowledge`` and ``persona``: KB attributes matched to parsed constraints, persona priors + retrieval."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.baselines.lexical import sparse_scores
from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.structured import anchor_of, card_satisfies, constraint_match


class KnowledgeSystem(RankingSystem):
    """KB attributes (price, noise, accessibility, kids, WiFi, ...) matched to the parsed constraints.

    ``score = share of constraints met + stars_weight · stars/5`` (the stars break ties).
    """

    def __init__(self, *, stars_weight: float = 0.1, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        self.stars_weight = stars_weight

    def config(self) -> dict[str, Any]:
        return {**super().config(), "stars_weight": self.stars_weight}

    def score(self, turn: Turn) -> dict[str, float]:
        anchor = anchor_of(turn.inp.anchor)
        cons = turn.state.constraints
        return {
            c.poi_id: constraint_match(c, cons, anchor) + self.stars_weight * c.stars / 5
            for c in turn.inp.candidates
        }


@dataclass(frozen=True)
class Archetype:
    """A bundled persona as the ``persona`` system reads it: per POI type, its constraints (as
    :class:`Constraint`) with weight ``priors[kind] · weight``; the overlap weights by (kind, value)."""

    persona: Any
    overlap: tuple[tuple[tuple[str, str], float], ...]
    by_type: dict[str, tuple[tuple[Constraint, float], ...]]


@lru_cache(maxsize=1)
def archetypes() -> tuple[Archetype, ...]:
    """The bundled archetypes, converted once."""
    from groundtrace.crs.build.personas import bundled_personas

    out = []
    for p in bundled_personas():
        by_type = {
            t: tuple(
                (Constraint(kind=c.kind, value=c.value, label=c.label), p.priors.get(c.kind, 1.0) * c.weight)
                for c in p.constraints
                if c.types is None or t in c.types
            )
            for t in p.poi_types
        }
        overlap = tuple(((c.kind, str(c.value)), c.weight) for c in p.constraints)
        out.append(Archetype(p, overlap, by_type))
    return tuple(out)


def infer_archetype(turn: Turn) -> Archetype | None:
    """The bundled archetype whose constraints best overlap the stated ones: ``Σ weight`` over its
    constraints whose (kind, value) was stated, among those asking about this POI type; first on ties;
    None when nothing overlaps."""
    stated = {(c.kind, str(c.value)) for c in turn.state.constraints}
    best, best_score = None, 0.0
    for a in archetypes():
        if turn.inp.poi_type not in a.by_type:
            continue
        s = sum(w for key, w in a.overlap if key in stated)
        if s > best_score:
            best, best_score = a, s
    return best


def infer_persona(turn: Turn):
    """The inferred archetype's persona (:func:`infer_archetype`), or None."""
    a = infer_archetype(turn)
    return a.persona if a is not None else None


class PersonaSystem(RankingSystem):
    """Persona preference priors combined with retrieval.

    The archetype is inferred from the stated constraints (:func:`infer_persona`). Its prior for a card is
    ``Σ priors[kind]·weight·[card meets c] / Σ priors[kind]·weight`` over the archetype's constraints for
    this POI type (the things such a traveller usually wants, stated or not);
    ``score = prior_weight · prior + (1 − prior_weight) · tfidf``.
    """

    def __init__(self, *, prior_weight: float = 0.5, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        if not 0 <= prior_weight <= 1:
            raise ValueError("prior_weight must be in [0, 1]")
        self.prior_weight = prior_weight

    def config(self) -> dict[str, Any]:
        return {**super().config(), "prior_weight": self.prior_weight}

    def score(self, turn: Turn) -> dict[str, float]:
        sparse = sparse_scores(self, turn, 0.5)
        archetype = infer_archetype(turn)
        if archetype is None:
            return sparse
        anchor = anchor_of(turn.inp.anchor)
        cons = archetype.by_type[turn.inp.poi_type]
        total = sum(w for _c, w in cons) or 1.0
        out = {}
        for card in turn.inp.candidates:
            met = sum(w for c, w in cons if card_satisfies(card, c, anchor))
            out[card.poi_id] = self.prior_weight * met / total + (1 - self.prior_weight) * sparse[card.poi_id]
        return out
