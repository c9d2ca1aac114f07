"""``knowledge`` and ``persona``: KB attributes matched to parsed constraints, persona priors + retrieval."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

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


@lru_cache(maxsize=1)
def _personas():
    from groundtrace.crs.build.personas import bundled_personas

    return bundled_personas()


def infer_persona(turn: Turn):
    """The bundled archetype whose constraints best overlap the stated ones: ``Σ weight`` over its
    constraints whose (kind, value) was stated, among those asking about this POI type; first on ties;
    None when nothing overlaps."""
    stated = {(c.kind, str(c.value)) for c in turn.state.constraints}
    best, best_score = None, 0.0
    for p in _personas():
        if turn.inp.poi_type not in p.poi_types:
            continue
        s = sum(c.weight for c in p.constraints if (c.kind, str(c.value)) in stated)
        if s > best_score:
            best, best_score = p, s
    return best


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
        persona = infer_persona(turn)
        if persona is None:
            return sparse
        anchor = anchor_of(turn.inp.anchor)
        cons = [c for c in persona.constraints if c.types is None or turn.inp.poi_type in c.types]
        weights = [persona.priors.get(c.kind, 1.0) * c.weight for c in cons]
        total = sum(weights) or 1.0
        out = {}
        for card in turn.inp.candidates:
            met = sum(
                w
                for c, w in zip(cons, weights, strict=True)
                if card_satisfies(card, _as_constraint(c), anchor)
            )
            out[card.poi_id] = self.prior_weight * met / total + (1 - self.prior_weight) * sparse[card.poi_id]
        return out


def _as_constraint(c):
    from groundtrace.crs.schema import Constraint

    return Constraint(kind=c.kind, value=c.value, label=c.label)
