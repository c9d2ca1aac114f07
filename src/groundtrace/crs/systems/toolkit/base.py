"""The skeleton of an offline system: state → scores → ranking (rejections last) → cited answer.

A subclass implements :meth:`RankingSystem.score` (candidate id → score, higher is better); the rest is
shared:

* **ranking** — the pool sorted by descending score, ties in pool order; every POI the user rejected in
  this dialogue (rejection memory, :func:`~.state.track_state`) is moved to the end, so a rejected POI is
  never recommended again while any other candidate is left; when the repeat memory learned from the
  train split says users move on to a new POI after the current act (:mod:`.novelty`), the POIs earlier
  system turns named go just before the rejected ones (:meth:`RankingSystem.final_order`);
* **answer** — ``I recommend NAME. Reviewers say: "q1" [Rn]. "q2" [Rm].`` with quotes chosen by
  :func:`~.citing.select_quotes` for the top-1 and checked by :func:`~.citing.verify_quotes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from groundtrace.crs.systems.base import CRSSystem
from groundtrace.crs.systems.predictions import CandidateCard, SystemInput, SystemOutput, TaggedReview
from groundtrace.crs.systems.reference import TaggedSentence, render_response
from groundtrace.crs.systems.toolkit.citing import select_quotes, verify_quotes
from groundtrace.crs.systems.toolkit.documents import poi_document, reviews_by_poi
from groundtrace.crs.systems.toolkit.learning import Learns
from groundtrace.crs.systems.toolkit.memo import Memo, PoiView
from groundtrace.crs.systems.toolkit.scoring import rank_by
from groundtrace.crs.systems.toolkit.sparse import SparseIndex, TermVector
from groundtrace.crs.systems.toolkit.state import DialogueState, track_state


@dataclass
class Turn:
    """One turn as the toolkit sees it: the input, the tracked state, the system's :class:`~.memo.Memo`
    (results per review/text, kept across turns) and per-turn lookups."""

    inp: SystemInput
    state: DialogueState
    memo: Memo = field(default_factory=Memo)
    cache: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def pool(self) -> list[str]:
        return [c.poi_id for c in self.inp.candidates]

    @cached_property
    def cards(self) -> dict[str, CandidateCard]:
        return {c.poi_id: c for c in self.inp.candidates}

    @cached_property
    def reviews(self) -> dict[str, list[TaggedReview]]:
        return reviews_by_poi(self.inp.reviews)

    def document(self, poi_id: str) -> str:
        return poi_document(self.cards[poi_id], self.reviews.get(poi_id, []))

    def view(self, poi_id: str) -> PoiView:
        """The memo's :class:`~.memo.PoiView` of ``poi_id`` with this turn's tagged reviews."""
        views = self.cache.setdefault("views", {})
        hit = views.get(poi_id)
        if hit is None:
            hit = views[poi_id] = self.memo.poi(self.cards[poi_id], self.reviews.get(poi_id, []))
        return hit

    def doc_vectors(self) -> list[TermVector]:
        """The pool's POI-document term vectors (pool order), each built once per run."""
        return [self.view(p).vector for p in self.pool]

    def sentences(self, poi_id: str) -> list[TaggedSentence]:
        """The quotable sentences of ``poi_id``'s tagged reviews under this turn's tags, in input order."""
        return self.view(poi_id).tagged(self.reviews.get(poi_id, []))

    @property
    def query(self) -> str:
        return self.state.positive_text


def move_rejected_last(ranking: list[str], rejected: set[str]) -> list[str]:
    """``ranking`` with the ``rejected`` ids moved to the end (both parts keep their order)."""
    return [p for p in ranking if p not in rejected] + [p for p in ranking if p in rejected]


class RankingSystem(Learns, CRSSystem):
    """Base of the offline systems (module docstring). Options: ``max_quotes`` (quotes per answer).
    ``learn(train_dialogues, kb)`` learns the constraint understanding (:mod:`.learning`)."""

    stance_aware: bool = False

    def __init__(self, *, max_quotes: int = 2) -> None:
        if max_quotes < 0:
            raise ValueError("max_quotes must be >= 0")
        self.max_quotes = max_quotes
        self.memo = Memo()

    @property
    def index(self) -> SparseIndex:
        return self.memo.index

    def config(self) -> dict[str, Any]:
        return {"max_quotes": self.max_quotes, **self.understanding_config()}

    def score(self, turn: Turn) -> dict[str, float]:
        """Candidate id → score (higher first); every pool id should get one."""
        raise NotImplementedError

    def final_order(self, turn: Turn, ranking: list[str]) -> list[str]:
        """``ranking`` with the rejected POIs last and, where the learned repeat memory says so, the POIs
        already recommended in this conversation just before them (:class:`~.novelty.RepeatPolicy`)."""
        state = turn.state
        return self.repeat_policy.order(ranking, state.act, state.shown, state.rejected)

    def rank(self, turn: Turn) -> list[str]:
        """The pool by :meth:`score`, already-recommended POIs after the rest when the conversations learned
        from move on, rejected POIs last."""
        return self.final_order(turn, rank_by(self.score(turn), turn.pool))

    def answer(self, turn: Turn, ranking: list[str]) -> str:
        """The extractive answer recommending ``ranking[0]`` (module docstring)."""
        if not ranking:
            return "I have no candidate to recommend."
        top = ranking[0]
        quotes = select_quotes(
            turn.view(top),
            turn.reviews.get(top, []),
            turn.state.constraints,
            turn.query,
            turn.memo,
            k=self.max_quotes,
            stance_aware=self.stance_aware,
        )
        quotes = verify_quotes(quotes, turn.reviews.get(top, []), stance_aware=self.stance_aware)
        return render_response(turn.cards.get(top), top, quotes)

    def respond(self, inp: SystemInput) -> SystemOutput:
        turn = Turn(inp, track_state(inp, self.memo.understanding), self.memo)
        ranking = self.rank(turn)
        return SystemOutput(ranking=ranking, response=self.answer(turn, ranking))
