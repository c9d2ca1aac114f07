"""Nearest-phrasing reading of constraints: a clause piece states the class of the train phrasing whose
MiniLM embedding is nearest to it, with a probability calibrated on phrasings *held out* from the
prototypes — so it is calibrated for wordings never seen in training, which is what a user brings.

Prototypes — every label phrase of the train split (the phrase as spoken, stripped) with its classes,
the review sentences the train split's system turns quote for exactly one active constraint (how
reviewers say it: "the wifi was fast enough to stream"; at most :data:`QUOTES_PER_CLASS` per class), and
one *name phrase* per class from the KB's own vocabulary (the value's words: ``outdoor_seating`` →
"outdoor seating"; categorical kinds only, amounts are read as numbers elsewhere).

Pieces — a clause is read whole and in *pieces* (:func:`pieces`): cut at coordinating words ("and",
"or", "plus", "also") and before "with"; each piece also without a leading request frame ("I'd like",
"got anything", "we need" ...).

Score of a piece — ``s_k`` = the largest cosine similarity between the piece and a prototype of class
``k``; the piece's class is ``k* = argmax s_k``, its margin ``m = s_k* − max_{k≠k*} s_k``.

Calibration (leave-phrasing-out) — for each train label phrase ``x`` of class ``y``, the scores are
computed against the prototypes minus every prototype *near-identical* to ``x`` (the same phrase, or a
typo variant: rapidfuzz ``ratio`` ≥ 85); the pair ``(s_k*, m)`` is a positive example when ``k* = y``,
a negative one otherwise. Clauses of train turns that state nothing are negative examples too. A
logistic regression on ``(s, m, s·m)`` gives ``P(k* is stated | piece)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz, process

_CUT = re.compile(r"\b(?:and|or|plus|also|as well as)\b|(?=\bwith\b)", re.IGNORECASE)
_FRAME = re.compile(
    r"^\W*(?:(?:hello|hi|hey|hmm|well|so|ok(?:ay)?|nah)\W+)*"
    r"(?:(?:i|we)(?:'d| would| really)?\s+(?:like|love|need|want|prefer)"
    r"(?:\s+(?:it|somewhere|something|a place))?"
    r"|(?:got|have you got|do you have|is there)\s+anything"
    r"|(?:i'?m|we'?re)\s+(?:after|looking for)"
    r"|let'?s say|ideally|preferably|mostly)\b\W*",
    re.IGNORECASE,
)
NEAR_DUPLICATE = 85.0
#: Review quotes kept as prototypes per class (text order): enough to cover how reviewers say it, few
#: enough that a 10k-dialogue train split does not encode tens of thousands of sentences.
QUOTES_PER_CLASS = 40


def pieces(clause: str) -> list[str]:
    """The clause and its pieces (module docstring), stripped, without duplicates, in order."""
    out: list[str] = []

    def add(text: str) -> None:
        text = text.strip(" ,.;:!?\u2014-")
        if text and re.search(r"\w", text) and text not in out:
            out.append(text)

    add(clause)
    for part in _CUT.split(clause):
        add(part)
    for text in tuple(out):  # a snapshot: add() grows ``out``
        add(_FRAME.sub("", text))
    return out


def name_phrase(key: str) -> str | None:
    """The KB-vocabulary phrase of a class key ``kind|type|value`` (categorical kinds only)."""
    kind, value_type, value = key.split("|", 2)
    if value_type != "str" or kind in ("cuisine", "category"):
        return None
    return value.replace("_", " ").strip() or None


def _best_per_class(S: np.ndarray, proto_class: np.ndarray, n_classes: int) -> np.ndarray:
    """``best[i, k]`` = max similarity of row ``i`` to a prototype of class ``k`` (−1 when none)."""
    best = np.full((S.shape[0], n_classes), -1.0, dtype=np.float32)
    for k in range(n_classes):
        cols = proto_class == k
        if cols.any():
            best[:, k] = S[:, cols].max(axis=1)
    return best


def _features(best: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(argmax class, feature rows (s, m, s·m))`` of per-class best similarities."""
    order = np.argsort(-best, axis=1)
    top = order[:, 0]
    s = best[np.arange(len(best)), top]
    second = best[np.arange(len(best)), order[:, 1]] if best.shape[1] > 1 else np.full_like(s, -1.0)
    m = s - second
    return top, np.stack([s, m, s * m], axis=1)


@dataclass
class NeighbourReader:
    """Nearest-phrasing class reader (module docstring); ``embed`` maps texts to unit vectors."""

    classes: list[str] = field(default_factory=list)
    prototypes: list[str] = field(default_factory=list)
    proto_class: np.ndarray | None = None
    _vectors: np.ndarray | None = None
    _calibration: object = None

    def fit(
        self,
        classes: Sequence[str],
        phrases: dict[str, list[str]],
        negatives: Sequence[str],
        embed: Callable[[list[str]], np.ndarray],
        quotes: dict[str, list[str]] | None = None,
    ) -> NeighbourReader:
        """``phrases``: label phrase → class keys (train); ``negatives``: clauses that state nothing;
        ``quotes``: review sentences quoted for exactly one class (train system turns) → that class."""
        # deferred: scikit-learn costs ~1-3 s to import; only fitting the reader needs it
        from sklearn.linear_model import LogisticRegression

        self.classes = list(classes)
        index = {k: i for i, k in enumerate(self.classes)}
        protos: list[tuple[str, int]] = []
        for text, keys in phrases.items():
            protos += [(text, index[k]) for k in keys if k in index]
        per_class: dict[int, int] = {}
        for text, keys in sorted((quotes or {}).items()):  # at most QUOTES_PER_CLASS each, in text order
            for k in keys:
                if k in index and per_class.get(index[k], 0) < QUOTES_PER_CLASS:
                    per_class[index[k]] = per_class.get(index[k], 0) + 1
                    protos.append((text, index[k]))
        for k in self.classes:
            name = name_phrase(k)
            if name is not None:
                protos.append((name, index[k]))
        self.prototypes = [t for t, _ in protos]
        self.proto_class = np.array([c for _, c in protos], dtype=np.int64)
        self._vectors = np.asarray(embed(self.prototypes), dtype=np.float32)
        if len(self.classes) < 2 or not phrases:
            return self
        X_rows: list[np.ndarray] = []
        y_rows: list[np.ndarray] = []
        phrase_list = list(phrases)
        Q = np.asarray(embed(phrase_list), dtype=np.float32)
        S = Q @ self._vectors.T
        # held out: each phrase's own prototype and its near-identical variants (the phrasings come first)
        n_phrases = sum(1 for t in phrase_list for k in phrases[t] if k in index)
        near = process.cdist(
            [t.lower() for t in phrase_list],
            [t.lower() for t in self.prototypes[:n_phrases]],
            scorer=fuzz.ratio,
            dtype=np.uint8,
        )
        S[:, :n_phrases][near >= NEAR_DUPLICATE] = -1.0
        top, F = _features(_best_per_class(S, self.proto_class, len(self.classes)))
        gold = [{index[k] for k in phrases[p] if k in index} for p in phrase_list]
        X_rows.append(F)
        y_rows.append(np.array([int(top[i] in gold[i]) for i in range(len(phrase_list))]))
        if negatives:
            N = np.asarray(embed(list(negatives)), dtype=np.float32) @ self._vectors.T
            _, FN = _features(_best_per_class(N, self.proto_class, len(self.classes)))
            X_rows.append(FN)
            y_rows.append(np.zeros(len(FN), dtype=int))
        X, y = np.concatenate(X_rows), np.concatenate(y_rows)
        if len(set(y.tolist())) == 2:
            self._calibration = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
        return self

    def read(self, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> list[tuple[int, float]]:
        """``(class index, P(stated))`` of each text; ``(-1, 0.0)`` when the reader cannot say."""
        if not texts or self._vectors is None or self._calibration is None:
            return [(-1, 0.0)] * len(texts)
        S = np.asarray(embed(list(texts)), dtype=np.float32) @ self._vectors.T
        top, F = _features(_best_per_class(S, self.proto_class, len(self.classes)))
        p = self._calibration.predict_proba(F)[:, 1]  # type: ignore[union-attr]
        return [(int(k), float(q)) for k, q in zip(top, p, strict=True)]
