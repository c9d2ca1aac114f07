"""``knowledge`` and ``persona``: KB attributes matched to parsed constraints, learned priors + retrieval."""

from __future__ import annotations

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


def learned_priors(turn: Turn) -> list[tuple[Constraint, float]]:
    """The priors of the system's understanding for this turn: the unstated constraints that train
    dialogues of this POI type stating the same things also stated, with their probability
    (:mod:`groundtrace.crs.systems.understanding.priors`); none untrained or with nothing stated."""
    return turn.memo.understanding.prior_constraints(turn.inp.poi_type, turn.state.constraints)


class PersonaSystem(RankingSystem):
    """Learned persona priors combined with retrieval.

    The "persona" is learned, not read from the builder: the stated constraints ``S`` (weight 1 each)
    plus the learned priors ``P`` (:func:`learned_priors`: what train travellers who stated the same
    things also wanted, weight = its probability). A card's prior is
    ``Σ_{c ∈ S ∪ P} w(c)·[card meets c] / Σ w(c)``;
    ``score = prior_weight · prior + (1 − prior_weight) · tfidf``. With no prior (untrained, or nothing
    stated that a train dialogue shares) the score is the TF-IDF one.
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
        priors = learned_priors(turn)
        if not priors:
            return sparse
        anchor = anchor_of(turn.inp.anchor)
        cons = [(c, 1.0) for c in turn.state.constraints] + priors
        total = sum(w for _c, w in cons) or 1.0
        out = {}
        for card in turn.inp.candidates:
            met = sum(w for c, w in cons if card_satisfies(card, c, anchor))
            out[card.poi_id] = self.prior_weight * met / total + (1 - self.prior_weight) * sparse[card.poi_id]
        return out
