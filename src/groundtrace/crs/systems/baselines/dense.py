"""``dense``: bi-encoder similarity of POI documents to the user's turns, negative preferences subtracted."""

from __future__ import annotations

from typing import Any

from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.dense import Encoder
from groundtrace.crs.systems.toolkit.documents import document_key


class DenseSystem(RankingSystem):
    """``score = cos(e(doc), e(positive)) − negative_weight · cos(e(doc), e(negative))`` with the bundled
    all-MiniLM-L6-v2 (``toolkit.dense``; documents truncated by the model at 256 word pieces).

    Options: ``negative_weight`` (0.5), ``cache_dir`` (embedding cache), ``device`` ("cpu").
    """

    def __init__(
        self,
        *,
        negative_weight: float = 0.5,
        cache_dir: str | None = None,
        device: str = "cpu",
        max_quotes: int = 2,
        encoder: Encoder | None = None,
    ) -> None:
        super().__init__(max_quotes=max_quotes)
        self.negative_weight = negative_weight
        self.device = device
        if encoder is None:
            from groundtrace.crs.systems.toolkit.dense import bundled_loader

            # the model is loaded on the first text the cache lacks
            encoder = Encoder(bundled_loader(device), cache_dir=cache_dir)
        self.encoder = encoder

    def config(self) -> dict[str, Any]:
        return {**super().config(), "negative_weight": self.negative_weight, "model": self.encoder.name}

    def score(self, turn: Turn) -> dict[str, float]:
        return dense_scores(self.encoder, turn, self.negative_weight)

    def close(self) -> None:
        self.encoder.save()


def dense_scores(encoder: Encoder, turn: Turn, negative_weight: float) -> dict[str, float]:
    """The dense score of every pool id (class docstring); cached on the turn."""
    key = f"dense:{negative_weight}"
    if key not in turn.cache:
        keys = [document_key(turn.cards[p], turn.reviews.get(p, [])) for p in turn.pool]
        docs = encoder.documents(keys, lambda i: turn.document(turn.pool[i]))
        queries = [turn.query or turn.inp.poi_type]
        neg = turn.state.negative_text.strip()
        q = encoder.encode([*queries, neg] if neg else queries)
        scores = docs @ q[0]
        if neg and negative_weight:
            scores = scores - negative_weight * (docs @ q[1])
        turn.cache[key] = dict(zip(turn.pool, scores.tolist(), strict=True))
    return turn.cache[key]
