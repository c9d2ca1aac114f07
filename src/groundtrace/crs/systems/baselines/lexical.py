"""``popularity``, ``tfidf`` and ``aspect``: rankings from ratings and review text alone."""

from __future__ import annotations

from typing import Any

from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.scoring import popularity_score


class PopularitySystem(RankingSystem):
    """Stars × review count with a Bayesian prior: ``(C·m + n·s)/(C + n) · ln(1 + n)``; ignores the user.

    ``prior_mean`` ``m`` (default 3.5 stars) and ``prior_weight`` ``C`` (default 10 pseudo-reviews). A card
    without a review count counts its tagged reviews instead.
    """

    def __init__(self, *, prior_mean: float = 3.5, prior_weight: float = 10.0, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        self.prior_mean, self.prior_weight = prior_mean, prior_weight

    def config(self) -> dict[str, Any]:
        return {**super().config(), "prior_mean": self.prior_mean, "prior_weight": self.prior_weight}

    def score(self, turn: Turn) -> dict[str, float]:
        out = {}
        for card in turn.inp.candidates:
            n = card.review_count if card.review_count is not None else len(turn.reviews.get(card.poi_id, []))
            out[card.poi_id] = popularity_score(card.stars, n, self.prior_mean, self.prior_weight)
        return out


class TfidfSystem(RankingSystem):
    """TF-IDF cosine of POI documents (name, categories, attributes, reviews) vs the user's positive turns,
    minus ``negative_weight`` × the similarity to the negative (rejection) text."""

    def __init__(self, *, negative_weight: float = 0.5, max_quotes: int = 2) -> None:
        super().__init__(max_quotes=max_quotes)
        self.negative_weight = negative_weight

    def config(self) -> dict[str, Any]:
        return {**super().config(), "negative_weight": self.negative_weight}

    def score(self, turn: Turn) -> dict[str, float]:
        return sparse_scores(self, turn, self.negative_weight)


def sparse_scores(system: RankingSystem, turn: Turn, negative_weight: float) -> dict[str, float]:
    """``sim(doc, positive) − negative_weight · sim(doc, negative)`` over the pool (cached per turn)."""
    key = f"sparse:{negative_weight}"
    if key not in turn.cache:
        docs = turn.doc_vectors()
        pos = turn.memo.index.scores(docs, turn.query)
        if negative_weight and turn.state.negative_text.strip():
            pos = pos - negative_weight * turn.memo.index.scores(docs, turn.state.negative_text)
        turn.cache[key] = dict(zip(turn.pool, pos.tolist(), strict=True))
    return turn.cache[key]


class AspectSystem(RankingSystem):
    """Aspect decomposition of reviews, aspect-weighted match to stated preferences.

    Each stated constraint reviews can address (``understanding.addressable``) is an aspect. For a POI,
    ``a(c) = (pos(c) − neg(c)) / (1 + pos(c) + neg(c))`` where ``pos``/``neg`` count its review sentences
    that mention ``c`` (the learned evidence model, else the keyword rule) with non-negative / negative
    stance (or a negation cue). ``score = Σ_c w(c)·a(c)``
    with ``w = kind_weights.get(kind, 1)``; no stated aspect → the stars break the tie.
    """

    def __init__(self, *, max_quotes: int = 2, hard_weight: float = 1.0, soft_weight: float = 0.5) -> None:
        super().__init__(max_quotes=max_quotes)
        self.hard_weight, self.soft_weight = hard_weight, soft_weight

    def config(self) -> dict[str, Any]:
        return {**super().config(), "hard_weight": self.hard_weight, "soft_weight": self.soft_weight}

    def weight(self, kind: str) -> float:
        """Constraints reviews can settle (cuisine, noise, ambience, amenities) weigh ``hard_weight``."""
        soft = kind in ("price_max", "price_min", "min_stars", "max_distance_km")
        return self.soft_weight if soft else self.hard_weight

    def score(self, turn: Turn) -> dict[str, float]:
        out: dict[str, float] = {}
        cons = [c for c in turn.state.constraints if turn.memo.understanding.addressable(c)]
        for card in turn.inp.candidates:
            view = turn.view(card.poi_id)
            total = card.stars * 1e-3
            for c in cons:
                pos, neg = view.aspect_counts(c)
                total += self.weight(c.kind) * (pos - neg) / (1 + pos + neg)
            out[card.poi_id] = total
        return out
