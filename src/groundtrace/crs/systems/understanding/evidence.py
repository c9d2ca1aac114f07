"""Which review sentences express a constraint — learned from the quotes of a train split's system turns.

Training data: every quote of a system turn (its text at ``quote_spans``) that is not introduced as a
warning (no ``warn``/``caution``/``complain``/``however`` in the 40 characters before it), with the
turn's active constraints that reviews can address (not :data:`CARD_KINDS`: the card shows stars and
distance) as its candidate classes. Which of them a quote was chosen for is not written down, so it is
learned by one round of hard EM: a one-vs-rest logistic regression over word+char TF-IDF is fitted with
every candidate as a label, each quote is then re-labelled with its most probable candidate, and the
model is fitted again. Background sentences (review sentences never quoted, when the caller gives them)
are negatives for every class.

``support(sentence, c) = P(class(c) | sentence)``; a sentence *expresses* ``c`` when that is
``>= threshold``. A class never quoted in training has no model (:meth:`EvidenceModel.knows` is False):
the generic keyword rules of :mod:`.keywords` decide for it.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.understanding.parser import class_key, make_vectorizer

#: Constraint kinds the POI card states (stars, distance): no review needs to back them.
CARD_KINDS = frozenset({"min_stars", "max_distance_km"})
_WARNING_CUE = re.compile(r"warn|caution|complain|however|downside|gripe", re.IGNORECASE)


@dataclass(frozen=True)
class QuoteExample:
    """A quote and the constraints it may have been chosen for."""

    text: str
    candidates: tuple[str, ...]


def is_warning(context: str) -> bool:
    """Whether the text before a quote introduces it as a warning (module docstring)."""
    return bool(_WARNING_CUE.search(context[-40:]))


@dataclass
class EvidenceModel:
    """Sentence → constraint classifier (module docstring)."""

    threshold: float = 0.5
    C: float = 10.0
    classes: list[str] = field(default_factory=list)
    _vectorizer: object = None
    _model: object = None
    _cache: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    def fit(self, quotes: Sequence[QuoteExample], background: Iterable[str] = ()) -> EvidenceModel:
        """Train (module docstring); ``ValueError`` without a usable quote."""
        # deferred: scikit-learn costs ~1-3 s to import; only training the evidence model needs it
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        from sklearn.preprocessing import MultiLabelBinarizer

        usable = [q for q in quotes if q.candidates]
        if not usable:
            raise ValueError("no quote with a review-addressable constraint in the training turns")
        quoted = {q.text for q in usable}
        negatives = sorted({s for s in background if s not in quoted})
        texts = [q.text for q in usable] + negatives
        labels: list[list[str]] = [list(q.candidates) for q in usable] + [[] for _ in negatives]
        binarizer = MultiLabelBinarizer().fit(labels)
        self.classes = list(binarizer.classes_)
        self._vectorizer = make_vectorizer().fit(texts)
        X = self._vectorizer.transform(texts)  # type: ignore[attr-defined]

        def fitted(y_labels: list[list[str]]) -> object:
            y = binarizer.transform(y_labels)
            keep = y.sum(axis=0) > 0  # a class may lose every quote in the E step: it stays, all-negative
            if not keep.all():
                y[:, ~keep] = 0
            model = OneVsRestClassifier(LogisticRegression(C=self.C, max_iter=2000, solver="liblinear"))
            with warnings.catch_warnings():  # a class left without a quote is a constant predictor: fine
                warnings.filterwarnings("ignore", message="Label .* is present in all training examples")
                return model.fit(X, y)

        model = fitted(labels)
        if any(len(q.candidates) > 1 for q in usable):
            probs = np.asarray(model.predict_proba(X[: len(usable)]))  # type: ignore[attr-defined]
            index = {k: j for j, k in enumerate(self.classes)}
            for i, q in enumerate(usable):
                labels[i] = [max(q.candidates, key=lambda k: (probs[i, index[k]], k))]
            model = fitted(labels)
        self._model = model
        self._cache = {}
        return self

    def knows(self, c: Constraint) -> bool:
        """Whether ``c``'s class was quoted in training (else the keyword rules decide)."""
        return self._model is not None and class_key(c.kind, c.value) in self.classes

    def warm(self, texts: Iterable[str]) -> None:
        """Compute and cache ``P(class | text)`` for the uncached ``texts`` in one batch (a POI's
        sentences at once: one vectorisation and one matrix product instead of one per sentence)."""
        if self._model is None:
            return
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not todo:
            return
        X = self._vectorizer.transform(todo)  # type: ignore[union-attr]
        probs = np.asarray(self._model.predict_proba(X))  # type: ignore[union-attr]
        for text, row in zip(todo, probs, strict=True):
            self._cache[text] = row

    def probabilities(self, text: str) -> np.ndarray:
        """``P(class | text)`` over :attr:`classes` (cached per text)."""
        hit = self._cache.get(text)
        if hit is None:
            X = self._vectorizer.transform([text])  # type: ignore[union-attr]
            hit = self._cache[text] = np.asarray(self._model.predict_proba(X))[0]  # type: ignore[union-attr]
        return hit

    def support(self, text: str, c: Constraint) -> float:
        """``P(class(c) | text)`` (0.0 for an unknown class)."""
        if not self.knows(c):
            return 0.0
        return float(self.probabilities(text)[self.classes.index(class_key(c.kind, c.value))])

    def expresses(self, text: str, c: Constraint) -> bool:
        return self.support(text, c) >= self.threshold
