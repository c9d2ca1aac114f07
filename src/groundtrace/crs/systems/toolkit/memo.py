"""What an offline system derives from a POI's reviews once and reuses on every later turn: a :class:`Memo`.

A run shows the same POIs again and again (every turn of a dialogue; every dialogue whose pool holds the
POI). :meth:`Memo.poi` builds, per POI document — the card plus the ids of the tagged reviews shown, in
order (``documents.document_key``) — a :class:`PoiView`: its quotable sentences
(``reference.quotable_sentences``: verbatim sentences of 12+ characters with their stored polarity), its
TF-IDF term vector (:class:`~.sparse.SparseIndex`), and lazily, per constraint, which sentences *support*
it (the memo's :class:`~groundtrace.crs.systems.understanding.Understanding`: ``expresses``) and the
(supporting, contradicting) counts the ``aspect`` score reads (``mentions``, split by stance).
Tags are not part of it (a review's ``[Rn]`` differs between dialogues): they are applied per turn.

Everything is keyed by content, never by the order of calls, so answers do not depend on which turns came
first or on threads. One memo per system instance (one instance serves one KB).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import CandidateCard, TaggedReview
from groundtrace.crs.systems.reference import TaggedSentence, quotable_sentences
from groundtrace.crs.systems.toolkit.documents import document_key, document_parts
from groundtrace.crs.systems.toolkit.sparse import SparseIndex, TermCache, TermVector
from groundtrace.crs.systems.understanding.language import NEGATION_RE
from groundtrace.crs.systems.understanding.model import GENERIC, Understanding


def constraint_key(c: Constraint) -> tuple[str, str]:
    return (c.kind, str(c.value))


@dataclass
class PoiView:
    """One POI document's derived data (module docstring). ``sentences[i] = (review position, text,
    polarity)`` in input order; ``stance_order`` = the indices of the non-negative ones, positive first."""

    key: tuple[str, ...]
    vector: TermVector
    sentences: tuple[tuple[int, str, int], ...]
    stance_order: tuple[int, ...]
    understanding: Understanding = GENERIC
    _support: dict[tuple[str, str], frozenset[int]] = field(default_factory=dict)
    _aspects: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)

    def tagged(
        self, reviews: Sequence[TaggedReview], indices: Sequence[int] | None = None
    ) -> list[TaggedSentence]:
        """The sentences (all, or ``indices``) as :class:`TaggedSentence` under this turn's tags."""
        idx = range(len(self.sentences)) if indices is None else indices
        return [
            TaggedSentence(reviews[self.sentences[i][0]].tag, self.sentences[i][1], self.sentences[i][2])
            for i in idx
        ]

    def supporting(self, c: Constraint) -> frozenset[int]:
        """Indices of the sentences that support ``c`` (``understanding.expresses``)."""
        key = constraint_key(c)
        hit = self._support.get(key)
        if hit is None:
            hit = self._support[key] = frozenset(
                i for i, (_r, text, _p) in enumerate(self.sentences) if self.understanding.expresses(text, c)
            )
        return hit

    def aspect_counts(self, c: Constraint) -> tuple[int, int]:
        """``(pos, neg)``: sentences that mention ``c`` (``understanding.mentions``) with a non-negative
        stance and no negation cue / with a negative stance or a negation cue (``(0, 0)`` when reviews
        cannot address ``c``)."""
        key = constraint_key(c)
        hit = self._aspects.get(key)
        if hit is None:
            pos = neg = 0
            if self.understanding.addressable(c):
                for _r, text, polarity in self.sentences:
                    if self.understanding.mentions(text, c):
                        if polarity < 0 or NEGATION_RE.search(text):
                            neg += 1
                        else:
                            pos += 1
            hit = self._aspects[key] = (pos, neg)
        return hit


class Memo:
    """Per-POI-document views and per-text term vectors, computed once (module docstring)."""

    def __init__(self, understanding: Understanding = GENERIC) -> None:
        self.index = SparseIndex()
        self._views = TermCache()
        self.understanding = understanding

    def set_understanding(self, understanding: Understanding) -> None:
        """Use ``understanding`` from now on (the views, which cache its answers, are rebuilt)."""
        if understanding is not self.understanding:
            self.understanding = understanding
            self._views = TermCache()

    def poi(self, card: CandidateCard, reviews: Sequence[TaggedReview]) -> PoiView:
        """The :class:`PoiView` of ``card`` with these tagged ``reviews`` (input order)."""
        key = document_key(card, list(reviews))
        view = self._views.lookup(key)
        if view is None:
            view = self._views.put(key, self._build(key, card, reviews))
        return view

    def _build(self, key: tuple[str, ...], card: CandidateCard, reviews: Sequence[TaggedReview]) -> PoiView:
        sentences = tuple(
            (pos, s.text, s.polarity)
            for pos, review in enumerate(reviews)
            for s in quotable_sentences([review], card.poi_id)
        )
        # stable: input order within a polarity, positive first (the old sorted(..., key=-polarity))
        order = sorted((i for i, s in enumerate(sentences) if s[2] >= 0), key=lambda i: -sentences[i][2])
        vector = self.index.document(key, lambda: document_parts(card, list(reviews)))
        self.understanding.warm([s[1] for s in sentences])
        return PoiView(key, vector, sentences, tuple(order), self.understanding)
