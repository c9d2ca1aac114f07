"""TF-IDF retrieval over the candidate pool, with term vectors computed once per text.

Terms: scikit-learn's analyzer (lower-case, ``\\b\\w\\w+\\b`` tokens, English stop words removed, unigrams +
bigrams). A text's :class:`TermVector` holds sublinear weights ``1 + ln(count)`` and their norm; it is
cached by the text itself (:class:`TermCache`), so a review, a sentence or a query is tokenised once per
run however many turns and systems see it. A POI document is the *sum of the term counts of its parts*
(card header, each tagged review — :mod:`.documents`), cached by the parts it was built from: a bigram never
spans two reviews.

At a turn the IDF is computed over the pool, ``idf(t) = ln((1 + N) / (1 + df(t))) + 1`` (scikit-learn's
smooth IDF), and

``score(d, q) = Σ_t tf_d(t)·idf(t) · tf_q(t)·idf(t) / (‖tf_d‖ · ‖tf_q·idf‖)``

(a cosine whose document norm is taken before IDF weighting, so a cached document vector never changes
with the pool). Only the query's terms enter the sum: scoring is an (N × |q|) lookup, not a pass over the
vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

CACHE_LIMIT = 200_000
"""Entries a :class:`TermCache` keeps before it starts over (bounds memory on a large KB)."""


@lru_cache(maxsize=1)
def analyzer() -> Callable[[str], list[str]]:
    """The term extractor (module docstring); the same tokens as ``CountVectorizer(ngram_range=(1, 2),
    stop_words="english")``."""
    # deferred: scikit-learn costs ~1-3 s to import; only the first tokenised text needs its analyzer
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(ngram_range=(1, 2), stop_words="english").build_analyzer()


@dataclass(frozen=True, slots=True)
class TermVector:
    """Raw term counts of a text, their sublinear weights ``1 + ln(count)`` and the weights' norm."""

    counts: dict[str, int]
    weights: dict[str, float]
    norm: float

    @classmethod
    def of_counts(cls, counts: dict[str, int]) -> TermVector:
        weights = {t: 1.0 + math.log(c) for t, c in counts.items()}
        return cls(counts, weights, math.sqrt(sum(w * w for w in weights.values())))


EMPTY = TermVector({}, {}, 0.0)


def count_terms(text: str) -> dict[str, int]:
    """Term → count in ``text``."""
    counts: dict[str, int] = {}
    for term in analyzer()(text):
        counts[term] = counts.get(term, 0) + 1
    return counts


def add_counts(parts: Iterable[TermVector]) -> TermVector:
    """The vector of the concatenation of ``parts`` (counts summed; no term spans two parts)."""
    total: dict[str, int] = {}
    for part in parts:
        for term, c in part.counts.items():
            total[term] = total.get(term, 0) + c
    return TermVector.of_counts(total)


class TermCache:
    """Key → value, computed once (thread-safe enough for the runner: a race computes a value twice)."""

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self.limit = limit
        self._data: dict[Hashable, Any] = {}

    def lookup(self, key: Hashable) -> Any:
        """The stored value, or None."""
        return self._data.get(key)

    def put(self, key: Hashable, value: Any) -> Any:
        """Store and return ``value`` (the cache starts over when full)."""
        if len(self._data) >= self.limit:
            self._data.clear()
        self._data[key] = value
        return value

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The stored value, computed by ``make()`` on first sight of ``key``."""
        hit = self._data.get(key)
        return self.put(key, make()) if hit is None else hit


class SparseIndex:
    """Pool-level TF-IDF scoring of cached term vectors (module docstring)."""

    def __init__(self) -> None:
        self._texts = TermCache()
        self._docs = TermCache()

    def vector(self, text: str) -> TermVector:
        """The cached :class:`TermVector` of ``text``."""
        hit = self._texts.lookup(text)
        if hit is None:
            hit = self._texts.put(text, TermVector.of_counts(count_terms(text)) if text else EMPTY)
        return hit

    def document(self, key: Hashable, parts: Callable[[], Sequence[str]]) -> TermVector:
        """The vector of a document made of the texts ``parts()`` (built on first sight of ``key``)."""
        return self._docs.get(key, lambda: add_counts(self.vector(p) for p in parts()))

    def scores(self, docs: Sequence[TermVector], query: str) -> np.ndarray:
        """Similarity of each of ``docs`` to ``query`` (module docstring; 0 for an empty query)."""
        return score_vectors(docs, self.vector(query))

    def scores_texts(self, texts: Sequence[str], query: str) -> np.ndarray:
        """The same score for ``texts`` (e.g. review sentences), IDF over ``texts``."""
        return score_vectors([self.vector(t) for t in texts], self.vector(query))


def score_vectors(docs: Sequence[TermVector], query: TermVector) -> np.ndarray:
    """``score(d, q)`` of the module docstring for every ``d`` of ``docs`` (IDF over ``docs``)."""
    n = len(docs)
    if n == 0 or not query.weights:
        return np.zeros(n)
    terms = list(query.weights)
    tf = np.array([[d.weights.get(t, 0.0) for t in terms] for d in docs])  # N × |q|
    idf = np.log((1 + n) / (1 + np.count_nonzero(tf, axis=0))) + 1.0
    q_w = np.fromiter((query.weights[t] for t in terms), float, len(terms)) * idf
    norms = np.fromiter((d.norm for d in docs), float, n)
    return ((tf * idf) @ q_w) / (np.maximum(norms, 1e-12) * np.linalg.norm(q_w))
