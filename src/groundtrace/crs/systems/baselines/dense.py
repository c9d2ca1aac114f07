"""``dense``: bi-encoder similarity of POI documents to the user's turns, negative preferences subtracted."""

from __future__ import annotations

from typing import Any

import numpy as np

from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.dense import Encoder, bundled_loader
from groundtrace.crs.systems.toolkit.documents import document_key

QUERY_MODES = ("turns", "joined")


class DenseSystem(RankingSystem):
    """``score = cos(e(doc), q⁺) − negative_weight · cos(e(doc), q⁻)`` with the bundled all-MiniLM-L6-v2
    (``toolkit.dense``; documents truncated by the model at 256 word pieces).

    ``query`` says what ``q⁺`` / ``q⁻`` are (:func:`query_vector`): ``"turns"`` (default) — the mean
    direction of the user's positive (negative) turn texts, each encoded on its own,
    ``q = Σ e(tᵢ) / ‖Σ e(tᵢ)‖``; ``"joined"`` — the encoding of those texts joined into one (the first
    release's query). Per turn the system then encodes only the user's newest text, once per distinct
    text in a run (earlier turns' texts are cached), instead of the whole history again.

    Options: ``negative_weight`` (0.5), ``query`` ("turns"), ``cache_dir`` (embedding cache),
    ``device`` ("cpu").
    """

    def __init__(
        self,
        *,
        negative_weight: float = 0.5,
        query: str = "turns",
        cache_dir: str | None = None,
        device: str = "cpu",
        max_quotes: int = 2,
        encoder: Encoder | None = None,
    ) -> None:
        super().__init__(max_quotes=max_quotes)
        if query not in QUERY_MODES:
            raise ValueError(f"query must be one of {', '.join(QUERY_MODES)}, not {query!r}")
        self.negative_weight = negative_weight
        self.query = query
        self.device = device
        if encoder is None:
            # the model is loaded on the first text the cache lacks
            encoder = Encoder(bundled_loader(device), cache_dir=cache_dir)
        self.encoder = encoder

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "negative_weight": self.negative_weight,
            "query": self.query,
            "model": self.encoder.name,
        }

    def score(self, turn: Turn) -> dict[str, float]:
        return dense_scores(self.encoder, turn, self.negative_weight, self.query)

    def close(self) -> None:
        self.encoder.save()


def query_vector(encoder: Encoder, texts: list[str], mode: str) -> np.ndarray | None:
    """``q`` for ``texts`` (one per user turn; ``None`` when there is none): ``"joined"`` — ``e(" ".join
    (texts))``; ``"turns"`` — ``Σ e(tᵢ) / ‖Σ e(tᵢ)‖`` (the mean direction; ``e(t₀)`` itself for one
    text, and ``None`` when the sum is the zero vector)."""
    if not texts:
        return None
    if mode == "joined":
        return encoder.encode([" ".join(texts)])[0]
    vecs = encoder.encode(texts)
    if len(vecs) == 1:
        return vecs[0]
    total = vecs.sum(axis=0)
    norm = float(np.linalg.norm(total))
    return total / norm if norm > 0 else None


def dense_scores(
    encoder: Encoder, turn: Turn, negative_weight: float, query: str = "turns"
) -> dict[str, float]:
    """The dense score of every pool id (class docstring); cached on the turn."""
    key = f"dense:{negative_weight}:{query}"
    if key not in turn.cache:
        keys = [document_key(turn.cards[p], turn.reviews.get(p, [])) for p in turn.pool]
        docs = encoder.documents(keys, lambda i: turn.document(turn.pool[i]))
        if query == "joined":
            positive = [turn.query] if turn.query else []
            negative = [turn.state.negative_text.strip()] if turn.state.negative_text.strip() else []
        else:
            positive, negative = turn.state.positive_parts, turn.state.negative_parts
        pos = query_vector(encoder, positive or [turn.inp.poi_type], query)
        scores = docs @ pos if pos is not None else np.zeros(len(turn.pool), dtype=np.float32)
        neg = query_vector(encoder, negative, query) if negative_weight else None
        if neg is not None:
            scores = scores - negative_weight * (docs @ neg)
        turn.cache[key] = dict(zip(turn.pool, scores.tolist(), strict=True))
    return turn.cache[key]
