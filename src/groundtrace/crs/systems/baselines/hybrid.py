"""``hybrid-rrf``: reciprocal rank fusion of sparse, dense and structured rankings (the fusion
``trace-hybrid`` builds on, :mod:`.trace_hybrid`)."""

from __future__ import annotations

from typing import Any

from groundtrace.crs.systems.baselines.dense import QUERY_MODES, dense_scores
from groundtrace.crs.systems.baselines.lexical import sparse_scores
from groundtrace.crs.systems.toolkit.base import RankingSystem, Turn
from groundtrace.crs.systems.toolkit.dense import DenseUnavailable, Encoder, bundled_loader
from groundtrace.crs.systems.toolkit.scoring import rank_by, rrf
from groundtrace.crs.systems.toolkit.structured import anchor_of, constraint_match


def _encoder(dense: bool | str, cache_dir: str | None) -> Encoder | None:
    """The encoder for ``dense``: ``"auto"`` uses it when the extra is installed, ``True`` requires it."""
    if dense is False or dense == "off":
        return None
    try:
        return Encoder(bundled_loader("cpu"), cache_dir=cache_dir)  # loaded on the first uncached text
    except DenseUnavailable:
        if dense is True or dense == "on":
            raise
        return None


class _Fused(RankingSystem):
    def __init__(
        self,
        *,
        dense: bool | str = "auto",
        cache_dir: str | None = None,
        rrf_k: int = 60,
        max_quotes: int = 2,
        dense_query: str = "turns",
    ) -> None:
        super().__init__(max_quotes=max_quotes)
        if dense not in (True, False, "auto", "on", "off"):
            raise ValueError("dense must be true, false or 'auto'")
        if dense_query not in QUERY_MODES:
            raise ValueError(f"dense_query must be one of {', '.join(QUERY_MODES)}, not {dense_query!r}")
        self.encoder = _encoder(dense, cache_dir)
        self.rrf_k = rrf_k
        self.dense_query = dense_query

    def config(self) -> dict[str, Any]:
        out = {**super().config(), "dense": self.encoder is not None, "rrf_k": self.rrf_k}
        if self.encoder is not None:
            out["dense_query"] = self.dense_query
        return out

    def rankings(self, turn: Turn) -> list[list[str]]:
        """The rankings fused: sparse, dense (when available) and structured."""
        out = [rank_by(sparse_scores(self, turn, 0.5), turn.pool)]
        if self.encoder is not None:
            out.append(rank_by(dense_scores(self.encoder, turn, 0.5, self.dense_query), turn.pool))
        anchor = anchor_of(turn.inp.anchor)
        structured = {
            c.poi_id: constraint_match(c, turn.state.constraints, anchor) + 0.1 * c.stars / 5
            for c in turn.inp.candidates
        }
        out.append(rank_by(structured, turn.pool))
        return out

    def close(self) -> None:
        if self.encoder is not None:
            self.encoder.save()


class HybridRRFSystem(_Fused):
    """Reciprocal rank fusion ``Σ 1/(k + rank)`` (k = ``rrf_k``, 60) of the sparse (TF-IDF), dense
    (MiniLM) and structured (constraint share + stars) rankings. ``dense="auto"`` (default) drops the
    dense ranking when the ``[dense]`` extra is absent (sparse + structured only, recorded in ``config``);
    ``dense_query`` is the dense ranking's query (``dense``'s ``query`` option: "turns" or "joined")."""

    def score(self, turn: Turn) -> dict[str, float]:
        return rrf(self.rankings(turn), self.rrf_k)
