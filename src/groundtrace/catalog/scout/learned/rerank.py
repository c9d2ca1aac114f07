"""The candidate reranker of the learned engine (model file version 3).

The tagger and the lexicons propose *spans*; several spans of one SKU can state the same value (title and
description, tagger and lexicon) and several values can compete for one attribute ("Philips Sonicare" vs
"Philips Sonicare DiamondClean", "Black" vs "Black/White"). The reranker scores each *candidate value* —
the proposals of one attribute whose text is equal after ``norm_key`` — by a logistic regression over
features of the whole group and of its rivals (:func:`candidate_features`):

* the best tagger marginal and lexicon precision of the value, the tagger's probability that the span
  goes on past either end (boundary doubt), whether both kinds agree, how often the
  value was gold in training (log), whether title and description both state it;
* the value's length in tokens, whether it opens the title and where in the title it starts, digits;
* its rivals: how many other values compete, their best tagger and lexicon scores, and whether a rival
  span strictly contains this one or lies strictly inside it (a span-boundary disagreement);
* per attribute: an intercept and a slope on the tagger marginal (so "brand" and "size" can differ).

The reranker is fitted (scikit-learn ``LogisticRegression``, L2) on cross-fitted held-out candidates —
proposed for training SKUs by draft models that never saw them — and its score is then calibrated like
any other raw score (:mod:`.calibration`, proposal kind ``ranker``). Stored as plain weights in the JSON
model file (:class:`Ranker`); scoring is a dot product.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from groundtrace.catalog.scout.sentences import norm_key

KIND = "ranker"
_WORDS = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")


class _Span(Protocol):
    @property
    def attribute(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def confidence(self) -> float: ...
    @property
    def how(self) -> str: ...
    @property
    def extend(self) -> float: ...


class Ranker(BaseModel):
    """Logistic-regression weights over named features (:func:`candidate_features`); unknown features
    weigh 0."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    intercept: float
    weights: dict[str, float]

    def score(self, features: Mapping[str, float]) -> float:
        get = self.weights.get
        z = self.intercept + sum([get(k, 0.0) * v for k, v in features.items()])
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


_KEYS: dict[str, str] = {}  # norm_key per distinct value text (bounded: a long run stops adding)


def group(proposals: Sequence[_Span]) -> dict[str, dict[str, list[_Span]]]:
    """``attribute → norm_key(value) → proposals`` (proposals with an empty key are dropped)."""
    out: dict[str, dict[str, list[_Span]]] = {}
    keys = _KEYS
    for p in proposals:
        key = keys.get(p.value)
        if key is None:
            key = norm_key(p.value)
            if len(keys) < 200_000:
                keys[p.value] = key
        if key:
            out.setdefault(p.attribute, {}).setdefault(key, []).append(p)
    return out


def _best(spans: Sequence[_Span], how: str) -> float:
    return max((p.confidence for p in spans if p.how == how), default=0.0)


def _nesting(mine: Sequence[_Span], rivals: Sequence[_Span]) -> tuple[float, float]:
    """(a rival span strictly contains one of mine, one of mine strictly contains a rival) in one field."""
    inside = outside = 0.0
    for p in mine:
        for r in rivals:
            if r.field != p.field or (r.start, r.end) == (p.start, p.end):
                continue
            if r.start <= p.start and p.end <= r.end:
                inside = 1.0
            elif p.start <= r.start and r.end <= p.end:
                outside = 1.0
    return inside, outside


def candidate_features(
    slug: str,
    mine: Sequence[_Span],
    rivals: Sequence[Sequence[_Span]],
    title: str,
    lexicon_gold: int = 0,
    rival_best: tuple[float, float] | None = None,
) -> dict[str, float]:
    """Features of one candidate value (``mine``: its proposals) against the other values proposed for the
    same attribute (``rivals``); ``title`` is the SKU title, ``lexicon_gold`` how often the value was a
    training SKU's gold (module docstring). ``rival_best``: the rivals' best tagger and lexicon scores
    when the caller has them (:func:`featurise`), else computed here."""
    tagger, lexicon = _best(mine, "tagger"), _best(mine, "lexicon")
    if rival_best is None:
        rival_best = (
            max((_best(r, "tagger") for r in rivals), default=0.0),
            max((_best(r, "lexicon") for r in rivals), default=0.0),
        )
    rival_spans = [p for r in rivals for p in r]
    inside, outside = _nesting(mine, rival_spans)
    in_title = [p for p in mine if p.field == "title"]
    first = min((p.start for p in in_title), default=-1)
    words = len(_WORDS.findall(mine[0].value))
    f = {
        f"attr={slug}": 1.0,
        f"tagger|attr={slug}": tagger,
        "tagger": tagger,
        "has_tagger": float(any(p.how == "tagger" for p in mine)),
        "lexicon": lexicon,
        "has_lexicon": float(any(p.how == "lexicon" for p in mine)),
        "both": float(tagger > 0 and lexicon > 0),
        "tagger_x_lexicon": tagger * lexicon,
        "tagger_extend": max((p.extend for p in mine if p.how == "tagger"), default=0.0),
        "lexicon_gold_log": math.log1p(lexicon_gold),
        "both_fields": float(len({p.field for p in mine}) > 1),
        "in_title": float(bool(in_title)),
        "opens_title": float(first == 0),
        "title_position": first / max(1, len(title)) if first >= 0 else 1.0,
        "words_1": float(words <= 1),
        "words_2": float(words == 2),
        "words_3plus": float(words >= 3),
        "digits": float(bool(_DIGIT.search(mine[0].value))),
        "rivals": min(3, len(rivals)) / 3,
        "rival_tagger": rival_best[0],
        "rival_lexicon": rival_best[1],
        "inside_rival": inside,
        "contains_rival": outside,
    }
    return {k: v for k, v in f.items() if v}


def featurise(
    proposals: Sequence[_Span], title: str, lexicon_gold: Mapping[tuple[str, str], int]
) -> list[tuple[str, str, list[_Span], dict[str, float]]]:
    """``(attribute, value key, its proposals, features)`` per candidate value of one SKU;
    ``lexicon_gold[(slug, key)]``: the value's training gold count (absent: 0)."""
    out = []
    for slug, values in group(proposals).items():
        bests = {key: (_best(mine, "tagger"), _best(mine, "lexicon")) for key, mine in values.items()}
        for key, mine in values.items():
            rivals = [v for k, v in values.items() if k != key]
            rival_best = (
                max((b[0] for k, b in bests.items() if k != key), default=0.0),
                max((b[1] for k, b in bests.items() if k != key), default=0.0),
            )
            gold = lexicon_gold.get((slug, key), 0)
            out.append((slug, key, mine, candidate_features(slug, mine, rivals, title, gold, rival_best)))
    return out


#: :func:`candidate_features`' names after the two per-attribute ones, in its order
_FIXED = ("tagger", "has_tagger", "lexicon", "has_lexicon", "both", "tagger_x_lexicon", "tagger_extend",
          "lexicon_gold_log", "both_fields", "in_title", "opens_title", "title_position", "words_1",
          "words_2", "words_3plus", "digits", "rivals", "rival_tagger", "rival_lexicon", "inside_rival",
          "contains_rival")  # fmt: skip


class Scorer:
    """:meth:`Ranker.score` of every candidate of :func:`featurise`, without building the feature dicts:
    the same features, weights and terms in the same order (``weight × value`` for each non-zero value,
    summed left to right after the intercept), so the scores are bit-identical
    (tests/catalog/scout/learned/test_speed.py); the weights are looked up once per name."""

    def __init__(self, ranker: Ranker) -> None:
        self.ranker = ranker
        get = ranker.weights.get
        self._fixed = tuple(get(k, 0.0) for k in _FIXED)
        self._per_attr: dict[str, tuple[float, float]] = {}

    def _attr(self, slug: str) -> tuple[float, float]:
        found = self._per_attr.get(slug)
        if found is None:
            get = self.ranker.weights.get
            found = self._per_attr[slug] = (get(f"attr={slug}", 0.0), get(f"tagger|attr={slug}", 0.0))
        return found

    def scores(
        self, proposals: Sequence[_Span], title: str, lexicon_gold: Mapping[tuple[str, str], int]
    ) -> list[tuple[str, str, list[_Span], float]]:
        """``(attribute, value key, its proposals, ranker score)`` per candidate value, in :func:`featurise`'s
        order."""
        out = []
        intercept, n_title = self.ranker.intercept, max(1, len(title))
        for slug, values in group(proposals).items():
            w_attr, w_tagger_attr = self._attr(slug)
            keys = list(values)
            sums = [_summary(values[k]) for k in keys]
            rivals_n = min(3, len(keys) - 1) / 3
            for i, key in enumerate(keys):
                mine = values[key]
                tagger = sums[i][0]
                if len(keys) > 1:
                    rival_tagger = max([x[0] for j, x in enumerate(sums) if j != i])
                    rival_lexicon = max([x[1] for j, x in enumerate(sums) if j != i])
                    inside, outside = _nesting(mine, [p for k in keys if k != key for p in values[k]])
                else:
                    rival_tagger = rival_lexicon = inside = outside = 0.0
                terms = [w_attr, w_tagger_attr * tagger] if tagger else [w_attr]
                gold = math.log1p(lexicon_gold.get((slug, key), 0))
                rivals = (rivals_n, rival_tagger, rival_lexicon, inside, outside)
                self._terms(terms, sums[i], gold, n_title, _value_info(mine[0].value), rivals)
                z = intercept + sum(terms)
                out.append((slug, key, mine, 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))))
        return out

    def _terms(
        self,
        terms: list[float],
        summary: tuple[float, float, bool, bool, float, bool, int],
        gold: float,
        n_title: int,
        value: tuple[float, float, float, float],
        rivals: tuple[float, float, float, float, float],
    ) -> None:
        """Append to ``terms`` the ``weight × value`` of each non-zero :data:`_FIXED` feature, in that order
        (a value of 1.0 adds the weight itself: ``w × 1.0`` is ``w``) — the terms of :meth:`Ranker.score`
        after the two per-attribute ones."""
        (w_tagger, w_has_tagger, w_lexicon, w_has_lexicon, w_both, w_tagger_x_lexicon, w_extend, w_gold,
         w_both_fields, w_in_title, w_opens_title, w_title_position, *w_value, w_rivals, w_rival_tagger,
         w_rival_lexicon, w_inside, w_outside) = self._fixed  # fmt: skip
        tagger, lexicon, has_tagger, has_lexicon, extend, fields, first = summary
        add = terms.append
        if tagger:
            add(w_tagger * tagger)
        if has_tagger:
            add(w_has_tagger)
        if lexicon:
            add(w_lexicon * lexicon)
        if has_lexicon:
            add(w_has_lexicon)
        if tagger > 0 and lexicon > 0:
            add(w_both)
        if tagger * lexicon:
            add(w_tagger_x_lexicon * (tagger * lexicon))
        if extend:
            add(w_extend * extend)
        if gold:
            add(w_gold * gold)
        if fields:
            add(w_both_fields)
        if first >= 0:  # in_title, then opens_title (first 0) or title_position (first / title length)
            add(w_in_title)
            add(w_opens_title if first == 0 else w_title_position * (first / n_title))
        else:
            add(w_title_position)  # title_position 1.0 when not in the title
        terms += [w for w, v in zip(w_value, value, strict=True) if v]  # words_1/2/3plus, digits: 0 or 1
        rivals_n, rival_tagger, rival_lexicon, inside, outside = rivals
        if rivals_n:
            add(w_rivals * rivals_n)
        if rival_tagger:
            add(w_rival_tagger * rival_tagger)
        if rival_lexicon:
            add(w_rival_lexicon * rival_lexicon)
        if inside or outside:  # inside_rival, contains_rival: 0 or 1
            terms += [w for w, v in ((w_inside, inside), (w_outside, outside)) if v]


_VALUE_INFO: dict[str, tuple[float, float, float, float]] = {}


def _value_info(value: str) -> tuple[float, float, float, float]:
    """``words_1``, ``words_2``, ``words_3plus`` and ``digits`` of :func:`candidate_features` for a value
    text, cached per distinct text (bounded: a long run stops adding)."""
    found = _VALUE_INFO.get(value)
    if found is None:
        words = len(_WORDS.findall(value))
        found = (float(words <= 1), float(words == 2), float(words >= 3), float(bool(_DIGIT.search(value))))
        if len(_VALUE_INFO) < 200_000:
            _VALUE_INFO[value] = found
    return found


def _summary(mine: Sequence[_Span]) -> tuple[float, float, bool, bool, float, bool, int]:
    """One pass over a candidate's proposals: (best tagger score, best lexicon score, has a tagger span, has
    a lexicon span, largest tagger boundary doubt, in more than one field, first start in the title or -1)
    — the values of :func:`_best`, ``max`` / ``min`` with their defaults, ``any`` and the field set of
    :func:`candidate_features` (a running maximum keeps the first of equal values, as ``max`` does)."""
    tagger = lexicon = extend = 0.0
    has_tagger = has_lexicon = several = False
    field0, first = mine[0].field, -1
    for p in mine:
        if p.how == "tagger":
            if not has_tagger:
                tagger, extend, has_tagger = p.confidence, p.extend, True
            else:
                tagger = max(tagger, p.confidence)
                extend = max(extend, p.extend)
        elif p.how == "lexicon":
            if not has_lexicon:
                lexicon, has_lexicon = p.confidence, True
            elif p.confidence > lexicon:
                lexicon = p.confidence
        if p.field != field0:
            several = True
        if p.field == "title" and (first < 0 or p.start < first):
            first = p.start
    return tagger, lexicon, has_tagger, has_lexicon, extend, several, first


def fit_ranker(rows: Sequence[tuple[Mapping[str, float], bool]], c: float = 1.0) -> Ranker:
    """A logistic regression of right/wrong on the candidates' features (L2, ``C = c``); a constant
    ranker (the base rate) when only one class is present."""
    # deferred: scikit-learn is heavy (~0.5 s) and only training fits the reranker
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    ys = [int(ok) for _f, ok in rows]
    if not rows or len(set(ys)) < 2:
        rate = (sum(ys) + 0.5) / (len(ys) + 1)
        return Ranker(intercept=math.log(rate / (1 - rate)), weights={})
    vec = DictVectorizer(sparse=True)
    x = vec.fit_transform([dict(f) for f, _ok in rows])
    lr = LogisticRegression(C=c, max_iter=2000)
    lr.fit(x, ys)
    weights = {
        name: round(float(w), 6)
        for name, w in zip(vec.get_feature_names_out(), lr.coef_[0], strict=True)
        if w
    }
    return Ranker(intercept=round(float(lr.intercept_[0]), 6), weights=weights)
