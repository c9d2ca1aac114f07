"""TF-IDF retrieval over the candidate pool (scikit-learn ``HashingVectorizer``: no fitting, no state).

Term counts of each POI document are hashed once (2**18 features, unigrams + bigrams, English stop words
removed, sublinear ``1 + log tf``) and cached by POI id. At a turn the IDF is computed over the pool,
``idf(t) = ln((1 + N) / (1 + df(t))) + 1`` (scikit-learn's smooth IDF), and

``score(d, q) = Σ_t tf_d(t)·idf(t) · tf_q(t)·idf(t) / (‖tf_d‖ · ‖tf_q·idf‖)``

(a cosine whose document norm is taken before IDF weighting, so cached document rows never change with the
pool). The cache is keyed by POI id, so one instance serves one KB (a run).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

N_FEATURES = 2**18
POOL_CACHE = 64


class SparseIndex:
    """Pool-level TF-IDF scoring of cached hashed POI documents (module docstring)."""

    def __init__(self) -> None:
        self._vec = HashingVectorizer(
            n_features=N_FEATURES,
            ngram_range=(1, 2),
            stop_words="english",
            alternate_sign=False,
            norm=None,
        )
        self._docs: dict[str, sp.csr_matrix] = {}
        self._pools: OrderedDict[tuple[str, ...], sp.csc_matrix] = OrderedDict()  # last POOL_CACHE pools
        self._lock = threading.Lock()

    def _counts(self, texts: list[str]) -> sp.csr_matrix:
        m = self._vec.transform(texts).tocsr()
        m.data = 1.0 + np.log(m.data)
        return m

    def doc_matrix(self, ids: list[str], text_of: Callable[[str], str]) -> sp.csc_matrix:
        """Stacked sublinear term counts of ``ids`` (documents built by ``text_of`` on first sight)."""
        missing = [p for p in ids if p not in self._docs]
        if missing:
            rows = self._counts([text_of(p) for p in missing])
            with self._lock:
                for i, p in enumerate(missing):
                    self._docs[p] = rows[i]
        key = tuple(ids)
        with self._lock:
            hit = self._pools.get(key)
        if hit is not None:
            return hit
        matrix = sp.vstack([self._docs[p] for p in ids], format="csc")  # column slices by query term
        with self._lock:
            self._pools[key] = matrix
            if len(self._pools) > POOL_CACHE:
                self._pools.popitem(last=False)
        return matrix

    def scores(self, ids: list[str], text_of: Callable[[str], str], query: str) -> np.ndarray:
        """Similarity of each of ``ids`` to ``query`` (module docstring; 0 for an empty query)."""
        if not ids:
            return np.zeros(0)
        return self._score(self.doc_matrix(ids, text_of), query)

    def scores_texts(self, texts: list[str], query: str) -> np.ndarray:
        """The same score for uncached ``texts`` (review sentences), IDF over ``texts``."""
        if not texts:
            return np.zeros(0)
        return self._score(self._counts(texts).tocsc(), query)

    def query_vector(self, query: str) -> sp.csr_matrix:
        """Hashed sublinear counts of ``query`` (the last few cached: a dialogue asks the same again)."""
        return _cached_query(self, query or "")

    def _score(self, docs: sp.csc_matrix, query: str) -> np.ndarray:
        q = self.query_vector(query)
        if q.nnz == 0:
            return np.zeros(docs.shape[0])
        df = np.diff(docs.indptr)[q.indices]  # CSC: stored entries per column = document frequency
        idf = np.log((1 + docs.shape[0]) / (1 + df)) + 1.0
        q_w = q.data * idf
        cols = docs[:, q.indices].toarray() * idf  # only the query's terms enter the dot product
        doc_norm = np.sqrt(np.asarray(docs.multiply(docs).sum(axis=1)).ravel())
        return (cols @ q_w) / (np.maximum(doc_norm, 1e-12) * np.linalg.norm(q_w))


_QUERY_CACHE: OrderedDict[tuple[int, str], sp.csr_matrix] = OrderedDict()
_QUERY_LOCK = threading.Lock()


def _cached_query(index: SparseIndex, query: str) -> sp.csr_matrix:
    key = (id(index), query)
    with _QUERY_LOCK:
        hit = _QUERY_CACHE.get(key)
    if hit is None:
        hit = index._counts([query])
        with _QUERY_LOCK:
            _QUERY_CACHE[key] = hit
            if len(_QUERY_CACHE) > 256:
                _QUERY_CACHE.popitem(last=False)
    return hit
