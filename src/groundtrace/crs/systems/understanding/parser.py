"""The learned constraint parser: clause segmentation + a multi-label classifier over word and character
n-gram TF-IDF, trained on user turns whose constraints are labelled (a dataset's train split).

Training — each user turn's text is cut into clauses (:func:`.language.clauses`); a clause is labelled
with every constraint ``(kind, value)`` whose *label* (the phrase as spoken, a substring of the turn) it
overlaps; clauses that overlap none are negatives (a ``reject_and_refine`` turn's turning-down clauses
among them). A label that does not occur in its turn (a turn reworded after labelling) is *pending*:
a first fit on the located examples assigns it to the turn's unexplained clause it scores highest
(:meth:`ConstraintParser._resolve_pending`), and the turn's other unexplained clauses are left out.

Features: ``TF-IDF(word 1-2 grams, sublinear) ⊕ TF-IDF(char_wb 2-5 grams, sublinear)``; one
``LogisticRegression(C)`` per class (one-vs-rest, scikit-learn). The classes are the ``(kind, value)``
pairs seen in training. ``features="embed"`` appends the clause's MiniLM sentence embedding (384-d, unit
length, times ``embed_weight``; :mod:`.embedding`) to those TF-IDF columns, so a paraphrase never seen in
training ("eat al fresco") lands near the phrasings that were ("with a patio"). ``augment=True`` also
trains on every label phrase alone (the span without its sentence frame) as an example of its class.

Parsing a text: ``P(class | clause)`` for every clause; a class is stated when some clause gives it
``p >= threshold``. Numeric amounts are read from the clause (:mod:`.language`): a distance, a
price level or a star floor stated as a number replaces the value of a predicted class of that kind,
and is taken on its own when no class of the kind was predicted. A :data:`SINGLE_VALUED` kind keeps its
most probable value. The label of a parsed constraint is the clause it was read from.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from groundtrace.crs.schema import Constraint, decode_value, encode_value
from groundtrace.crs.systems.understanding.embedding import embed
from groundtrace.crs.systems.understanding.language import clauses, distance_km, price_level, star_floor
from groundtrace.crs.systems.understanding.neighbours import NeighbourReader
from groundtrace.crs.systems.understanding.neighbours import pieces as reader_pieces

#: Kinds with one value at a time (a later statement replaces an earlier one); the rest accumulate.
SINGLE_VALUED = frozenset(
    {"cuisine", "category", "price_max", "price_min", "noise_max", "min_stars", "max_distance_km", "alcohol"}
)
_WISH_CUE = re.compile(r"\b(?:ideally|preferably)\b", re.IGNORECASE)
_REFINE_CUE = re.compile(r"\b(?:instead|rather)\b", re.IGNORECASE)


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")


def split_rejection(text: str, names: Iterable[str] = ()) -> tuple[str, str]:
    """``(negative, positive)`` parts of a ``reject_and_refine`` text: split at the last ``ideally`` /
    ``preferably`` (the wish follows it), else at the first ``instead`` / ``rather`` (the wish comes
    just before: "Mediterranean instead?"; the clause holding it — after the last ``—``, ``;``, ``.``,
    ``:`` or ``?`` — is positive); else, in a text of several sentences, after the last sentence that
    names a rejected place (``names``), or after the first sentence when none does ("Not X, it's too
    loud. Somewhere calm?": the turning-down comes first, the wish after); else all negative."""
    wishes = list(_WISH_CUE.finditer(text))
    if wishes:
        return text[: wishes[-1].start()], text[wishes[-1].end() :]
    cue = _REFINE_CUE.search(text)
    if cue is None:
        return _split_sentences(text, names)
    head = text[: cue.start()]
    cut = max(head.rfind(ch) for ch in "\u2014;.:?")
    return head[: cut + 1], head[cut + 1 :] + " " + text[cue.end() :]


def _split_sentences(text: str, names: Iterable[str]) -> tuple[str, str]:
    """The sentence split of :func:`split_rejection` (no cue word)."""
    ends = [m.start() for m in _SENTENCE_END.finditer(text.rstrip())]
    if not ends:
        return text, ""
    low = text.lower()
    named = [low.rfind(n.lower()) for n in names if n and n.strip()]
    last = max((at for at in named if at >= 0), default=-1)
    cut = next((e for e in ends if e > last), None) if last >= 0 else ends[0]
    if cut is None:
        return text, ""
    return text[:cut], text[cut:].strip()


def class_key(kind: str, value: object) -> str:
    """The class name of ``(kind, value)``: ``kind|value_type|value text``."""
    text, value_type = encode_value(value)  # type: ignore[arg-type]
    return f"{kind}|{value_type}|{text}"


def class_constraint(key: str, label: str) -> Constraint:
    kind, value_type, text = key.split("|", 2)
    return Constraint(kind=kind, value=decode_value(text, value_type), label=label)  # type: ignore[arg-type]


@dataclass(frozen=True)
class LabelledTurn:
    """A user turn's text (its positive part) and the constraints it adds, labels as spoken in it."""

    text: str
    constraints: tuple[Constraint, ...] = ()


@dataclass(frozen=True)
class Pending:
    """A turn's constraints whose label phrase does not occur in its text (a reworded turn whose labels
    were kept), with the clauses no located label explains: one of them states each."""

    clauses: tuple[str, ...]
    keys: tuple[str, ...]


def clause_examples(
    turns: Iterable[LabelledTurn], pending: list[Pending] | None = None
) -> tuple[list[str], list[list[str]]]:
    """``(clause texts, class keys per clause)`` (module docstring, *Training*). A constraint whose label
    is not found in the turn goes to ``pending`` (when given) with the turn's unexplained clauses, which
    are then left out of the examples (they are not known negatives)."""
    texts: list[str] = []
    labels: list[list[str]] = []
    for turn in turns:
        low = turn.text.lower()
        spans = []
        lost = []
        for c in turn.constraints:
            at = low.find(c.label.lower()) if c.label else -1
            if at >= 0:
                spans.append((at, at + len(c.label), class_key(c.kind, c.value)))
            else:
                lost.append(class_key(c.kind, c.value))
        unexplained = []
        for s, e in clauses(turn.text):
            keys = sorted({k for a, b, k in spans if a < e and s < b})
            if not keys and lost and pending is not None:
                unexplained.append(turn.text[s:e])
                continue
            texts.append(turn.text[s:e])
            labels.append(keys)
        if lost and pending is not None and unexplained:
            pending.append(Pending(tuple(unexplained), tuple(sorted(set(lost)))))
    return texts, labels


def span_examples(turns: Iterable[LabelledTurn]) -> dict[str, list[str]]:
    """Every label phrase alone (stripped) with the classes it labels, in first-seen order."""
    out: dict[str, set[str]] = {}
    for turn in turns:
        for c in turn.constraints:
            if c.label and c.label.strip():
                out.setdefault(c.label.strip(), set()).add(class_key(c.kind, c.value))
    return {text: sorted(keys) for text, keys in out.items()}


#: The parser's feature sets (:class:`ConstraintParser` ``features``).
FEATURES = ("tfidf", "embed")


@dataclass
class Parsed:
    """One parsed constraint with its probability and the clause it came from."""

    constraint: Constraint
    p: float


@dataclass
class ConstraintParser:
    """Learned clause classifier (module docstring). ``threshold``: the probability a class needs;
    ``C``: the logistic regression's inverse regularisation; ``features``: ``tfidf`` or ``embed`` (TF-IDF ⊕
    MiniLM); ``augment``: also train on the label phrases alone (module docstring)."""

    threshold: float = 0.4
    C: float = 10.0
    features: str = "tfidf"
    augment: bool = False
    embed_weight: float = 1.0
    neighbours: bool = False
    neighbour_threshold: float = 0.4
    classes: list[str] = field(default_factory=list)
    phrasings: dict[str, list[str]] = field(default_factory=dict)
    _vectorizer: object = None
    _model: object = None
    _reader: object = None

    def fit(
        self, turns: Sequence[LabelledTurn], quotes: dict[str, list[str]] | None = None
    ) -> ConstraintParser:
        """Train on labelled turns (``quotes``: review sentences → the one class each was quoted for,
        extra prototypes of the nearest-phrasing reader); ``ValueError`` when no turn has a constraint."""
        # deferred: scikit-learn costs ~1-3 s to import; systems that only parse with a loaded model skip it
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        from sklearn.preprocessing import MultiLabelBinarizer

        if self.features not in FEATURES:
            raise ValueError(f"parser features {self.features!r}: expected one of {', '.join(FEATURES)}")
        pending: list[Pending] = []
        texts, labels = clause_examples(turns, pending)
        if self.augment:
            extra = span_examples(turns)
            texts, labels = texts + list(extra), labels + list(extra.values())
        if not any(labels) and not pending:
            raise ValueError("no labelled constraint in the training turns: nothing to learn")
        said: dict[str, Counter[str]] = {}
        for turn in turns:
            for c in turn.constraints:
                said.setdefault(class_key(c.kind, c.value), Counter())[c.label.lower()] += 1
        self.phrasings = {k: [p for p, _ in v.most_common()] for k, v in sorted(said.items())}
        if pending:
            texts, labels = self._resolve_pending(texts, labels, pending)
        binarizer = MultiLabelBinarizer()
        y = binarizer.fit_transform(labels)
        self.classes = list(binarizer.classes_)
        self._vectorizer = make_vectorizer().fit(texts)
        X = self._features(texts)
        model = OneVsRestClassifier(LogisticRegression(C=self.C, max_iter=2000, solver="liblinear"))
        self._model = model.fit(X, y)
        self._reader = None
        if self.neighbours and self.features == "embed":
            negatives = sorted({t.strip() for t, keys in zip(texts, labels, strict=True) if not keys})
            self._reader = NeighbourReader().fit(
                self.classes, span_examples(turns), negatives, embed, quotes=quotes
            )
        return self

    def _resolve_pending(
        self, texts: list[str], labels: list[list[str]], pending: list[Pending]
    ) -> tuple[list[str], list[list[str]]]:
        """Each pending constraint assigned to one of its turn's unexplained clauses: the clause a parser
        fitted on the located examples gives it the highest probability, else (a class that parser does
        not know, or no located example at all) the turn's last unexplained clause — a request's frame
        comes first, its wishes after. The unexplained clauses left over stay out of training."""
        first: ConstraintParser | None = None
        if any(labels):
            first = ConstraintParser(
                threshold=self.threshold, C=self.C, features=self.features, embed_weight=self.embed_weight
            )
            first._fit_examples(texts, labels)
        texts, labels = list(texts), list(labels)
        # one batch for every pending clause (each an embedding and a classifier row), then per turn
        flat = [c for item in pending for c in item.clauses] if first is not None else []
        all_probs = first.probabilities(flat) if first is not None else None
        start = 0
        for item in pending:
            chosen: dict[int, set[str]] = {}
            probs = None
            if all_probs is not None:
                probs = all_probs[start : start + len(item.clauses)]
                start += len(item.clauses)
            for key in item.keys:
                at = len(item.clauses) - 1
                if first is not None and probs is not None and key in first.classes:
                    at = int(np.argmax(probs[:, first.classes.index(key)]))
                chosen.setdefault(at, set()).add(key)
            for at, keys in sorted(chosen.items()):
                texts.append(item.clauses[at])
                labels.append(sorted(keys))
        return texts, labels

    def _fit_examples(self, texts: list[str], labels: list[list[str]]) -> None:
        """Fit the vectoriser and the classifier on clause examples (no phrasings, no reader)."""
        # deferred: scikit-learn costs ~1-3 s to import; only training needs it
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier
        from sklearn.preprocessing import MultiLabelBinarizer

        binarizer = MultiLabelBinarizer()
        y = binarizer.fit_transform(labels)
        self.classes = list(binarizer.classes_)
        self._vectorizer = make_vectorizer().fit(texts)
        model = OneVsRestClassifier(LogisticRegression(C=self.C, max_iter=2000, solver="liblinear"))
        self._model = model.fit(self._features(texts), y)

    @property
    def fitted(self) -> bool:
        return self._model is not None

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """``P(class | text)`` per text (rows) and class (columns, :attr:`classes` order)."""
        if not texts:
            return np.zeros((0, len(self.classes)))
        return np.asarray(self._model.predict_proba(self._features(texts)))  # type: ignore[union-attr]

    def _features(self, texts: list[str]):
        """The feature rows of ``texts`` (module docstring, *Features*)."""
        X = self._vectorizer.transform(texts)  # type: ignore[union-attr]
        if getattr(self, "features", "tfidf") != "embed":
            return X
        from scipy.sparse import csr_matrix, hstack  # deferred: scipy (~0.3 s), only the embed features

        E = embed([t.strip() for t in texts]) * float(self.embed_weight)
        return hstack([X, csr_matrix(E)], format="csr")

    def parse(self, text: str, floor: float | None = None) -> list[Parsed]:
        """The constraints stated in ``text`` (module docstring, *Parsing*), one per (kind, value);
        ``floor``: also the classes read with a probability of at least ``floor`` (below the thresholds;
        :meth:`Understanding.parse_soft`)."""
        spans = clauses(text)
        pieces = [text[s:e] for s, e in spans]
        probs = self.probabilities(pieces)
        found: dict[tuple[str, str], Parsed] = {}
        near = self._neighbour_reads(pieces)
        lr_at = self.threshold if floor is None else min(floor, self.threshold)
        nb_at = getattr(self, "neighbour_threshold", self.threshold)
        nb_at = nb_at if floor is None else min(floor, nb_at)
        for row, piece, extra in zip(probs, pieces, near, strict=True):
            kinds_here = set()
            hits = {int(j): float(row[j]) for j in np.flatnonzero(row >= lr_at)}
            for j, p in extra:
                if p >= nb_at and p > hits.get(j, 0.0):
                    hits[j] = p
            for j, p in hits.items():
                c = with_amount(class_constraint(self.classes[j], piece.strip()), piece)
                kinds_here.add(c.kind)
                _keep(found, Parsed(c, p))
            for c in amounts(piece):
                if c.kind not in kinds_here and not any(k == c.kind for k, _ in found):
                    _keep(found, Parsed(c, 0.5))
        return single_valued(found.values())

    def _neighbour_reads(self, clause_texts: list[str]) -> list[list[tuple[int, float]]]:
        """Per clause, the nearest-phrasing reads ``(class index, p)`` of its pieces (none without a
        reader: :mod:`.neighbours`)."""
        reader = getattr(self, "_reader", None)
        if reader is None:
            return [[] for _ in clause_texts]
        cuts = [reader_pieces(t) for t in clause_texts]
        flat = [p for c in cuts for p in c]
        reads = reader.read(flat, embed)
        out, at = [], 0
        for c in cuts:
            out.append([r for r in reads[at : at + len(c)] if r[0] >= 0])
            at += len(c)
        return out


def _keep(found: dict[tuple[str, str], Parsed], item: Parsed) -> None:
    key = (item.constraint.kind, str(item.constraint.value))
    if key not in found or found[key].p < item.p:
        found[key] = item


def single_valued(items: Iterable[Parsed]) -> list[Parsed]:
    """``items`` with one value per :data:`SINGLE_VALUED` kind (the most probable; first on ties)."""
    best: dict[str, Parsed] = {}
    out: list[Parsed] = []
    for item in items:
        kind = item.constraint.kind
        if kind not in SINGLE_VALUED:
            out.append(item)
        elif kind not in best or item.p > best[kind].p:
            best[kind] = item
    return out + list(best.values())


def with_amount(c: Constraint, clause: str) -> Constraint:
    """``c`` with the numeric value ``clause`` states for its kind, when it states one."""
    value: object = None
    if c.kind == "max_distance_km":
        value = distance_km(clause)
    elif c.kind in ("price_max", "price_min"):
        stated = price_level(clause)
        if stated is not None:
            return Constraint(kind=stated[0], value=stated[1], label=c.label)  # type: ignore[arg-type]
    elif c.kind == "min_stars":
        value = star_floor(clause)
    return c if value is None else Constraint(kind=c.kind, value=value, label=c.label)  # type: ignore[arg-type]


_WITHIN = re.compile(r"\b(?:within|under|less than|no more than|at most|up to|max(?:imum)?)\b", re.IGNORECASE)


def amounts(clause: str) -> list[Constraint]:
    """Constraints a clause states by a number alone: "within 3 km" (a distance after a bound word),
    "$$ at most" / "under $25 a head" (a price), "4.5 stars" (a star floor)."""
    out = []
    km = distance_km(clause)
    if km is not None and _WITHIN.search(clause):
        out.append(Constraint(kind="max_distance_km", value=km, label=clause.strip()))
    price = price_level(clause)
    if price is not None:
        out.append(Constraint(kind=price[0], value=price[1], label=clause.strip()))  # type: ignore[arg-type]
    stars = star_floor(clause)
    if stars is not None:
        out.append(Constraint(kind="min_stars", value=stars, label=clause.strip()))
    return out


def make_vectorizer():
    """Word 1-2 gram ⊕ char_wb 2-5 gram TF-IDF (module docstring)."""
    # deferred: scikit-learn costs ~1-3 s to import; the vectoriser is only built to train
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import FeatureUnion

    return FeatureUnion(
        [
            ("word", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=True)),
            ("char", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)),
        ]
    )
