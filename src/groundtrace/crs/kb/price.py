"""Price level inferred from review text, learned on the KB's own POIs that have Yelp's level.

A POI without ``RestaurantsPriceRange2`` has ``price_level = None``. :func:`infer_missing_prices` fills
it when, and only when, a model trained on the *same KB's* POIs that do have a level is measured to be
clearly better than always answering the most common level, and only for answers above a confidence
floor chosen on those training POIs. Nothing is shipped pre-trained (no review text leaves the KB).

Model (:class:`PriceModel`)
---------------------------
Per POI, one document: the text of its reviews. Features: TF-IDF of word 1–2-grams (sublinear tf,
``min_df`` 3, at most 20,000 terms); menu prices written in the text (``$12``, ``$ 7.50``: whether any,
log of their median and maximum, their count per 100 words, the share >= $25); the rate of cheap and
pricey words (``review_words.CHEAP`` / ``PRICEY``) per 100 words; and the POI's Yelp categories as
tokens (they exist without attributes). Classifier: multinomial logistic regression (scikit-learn,
``C`` = :data:`C`, lbfgs: deterministic). Levels 3 and 4 are one class (3): Yelp's $$$$ is rare (11 of
the 267 priced yelp_dense restaurants), so a filled 3 means "$$$ or more".

Gate and floor (:func:`assess`), per POI type
---------------------------------------------
A model is trained per POI type on that type's priced POIs. With at least :data:`MIN_LABELLED` of them
and :data:`MIN_PER_LEVEL` of at least two levels, stratified 5-fold cross-validation (seeded) gives
accuracy, macro-F1, within-one accuracy and the majority baseline. The confidence floor is the smallest
value of :data:`FLOORS` at which the cross-validated answers with ``max P >= floor`` are right at least
:data:`TARGET_ACCURACY` of the time, beat the majority level on those same POIs by :data:`MIN_GAIN`, and
cover at least :data:`MIN_COVERAGE` of the POIs. Prices are filled only when a floor exists, the
accuracy beats the baseline by at least :data:`MIN_GAIN` and macro-F1 beats the baseline's.
Otherwise nothing is filled and the report says why.

A filled POI records how: ``attributes["mined_from_reviews"]["price_level"] =
["inferred p=0.87 (model price-lr-1)"]`` — the word ``inferred`` marks it (review evidence of mined
attributes are ``review_id:start-end`` spans; a price guess has no one sentence behind it).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.review_words import CHEAP, EVIDENCE_KEY, PRICEY
from groundtrace.crs.schema import POI

MODEL_NAME = "price-lr-1"
C = 10.0
MIN_LABELLED = 60
MIN_PER_LEVEL = 5
FOLDS = 5
FLOORS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)
TARGET_ACCURACY = 0.8
MIN_COVERAGE = 0.2
MIN_GAIN = 0.05
INFERRED = "inferred"

DOLLAR_RE = re.compile(r"\$\s?(\d{1,4}(?:\.\d{1,2})?)(?!\d)")


def level_class(level: int) -> int:
    """Yelp's 1–4 as the model's class 1–3 (3 and 4 together)."""
    return min(int(level), 3)


def price_signals(text: str) -> list[float]:
    """Menu prices and price words of a POI's review text (module docstring), 7 numbers."""
    words = max(1, len(text.split()))
    amounts = [a for a in (float(x) for x in DOLLAR_RE.findall(text)) if 0 < a < 1000]
    cheap = 100 * len(CHEAP.findall(text)) / words
    pricey = 100 * len(PRICEY.findall(text)) / words
    if not amounts:
        return [0.0, 0.0, 0.0, 0.0, 0.0, cheap, pricey]
    return [
        1.0,
        math.log1p(float(np.median(amounts))),
        math.log1p(max(amounts)),
        100 * len(amounts) / words,
        float(np.mean([a >= 25 for a in amounts])),
        cheap,
        pricey,
    ]


def _category_tokens(categories: Sequence[str]) -> list[str]:
    """A POI's categories as tokens, plus one every POI has (a KB without categories still fits)."""
    return [*categories, "<poi>"]


def poi_document(kb: KnowledgeBase, poi: POI) -> str:
    return " ".join(r.text for r in kb.reviews_of(poi.poi_id))


class PriceModel:
    """TF-IDF + price signals + categories -> multinomial logistic regression over levels 1–3."""

    def fit(
        self, docs: Sequence[str], categories: Sequence[Sequence[str]], levels: Sequence[int]
    ) -> PriceModel:
        # deferred: scikit-learn costs ~1-3 s to import and only the price model's training needs it
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        self._text = TfidfVectorizer(ngram_range=(1, 2), min_df=3, sublinear_tf=True, max_features=20000)
        self._cats = TfidfVectorizer(analyzer=_category_tokens)
        self._scale = StandardScaler()
        x = self._features(docs, categories, fit=True)
        self._clf = LogisticRegression(C=C, max_iter=3000).fit(x, np.array([level_class(v) for v in levels]))
        self.classes = [int(c) for c in self._clf.classes_]
        return self

    def _features(self, docs: Sequence[str], categories: Sequence[Sequence[str]], *, fit: bool = False):
        import scipy.sparse as sp  # deferred with scikit-learn: only the price model uses it

        signals = np.array([price_signals(d) for d in docs], dtype=float)
        if fit:
            parts = [
                self._text.fit_transform(docs),
                self._cats.fit_transform(categories),
                self._scale.fit_transform(signals),
            ]
        else:
            parts = [
                self._text.transform(docs),
                self._cats.transform(categories),
                self._scale.transform(signals),
            ]
        return sp.hstack([parts[0], parts[1], sp.csr_matrix(parts[2])]).tocsr()

    def predict(self, docs: Sequence[str], categories: Sequence[Sequence[str]]) -> list[tuple[int, float]]:
        """``(level 1–3, probability)`` per document."""
        if not docs:
            return []
        proba = self._clf.predict_proba(self._features(docs, categories))
        return [(self.classes[int(i)], float(p[i])) for p, i in zip(proba, proba.argmax(1), strict=True)]


def scores(gold: Sequence[int], pred: Sequence[int]) -> dict[str, float]:
    """Accuracy, macro-F1 (over the gold levels) and within-one accuracy."""
    from sklearn.metrics import f1_score  # deferred: scikit-learn import (~1-3 s), evaluation only

    g, p = np.array(gold), np.array(pred)
    return {
        "accuracy": round(float((g == p).mean()), 3),
        "macro_f1": round(float(f1_score(g, p, labels=sorted(set(g.tolist())), average="macro")), 3),
        "within_one": round(float((np.abs(g - p) <= 1).mean()), 3),
    }


def cross_validate(
    docs: Sequence[str], categories: Sequence[Sequence[str]], levels: Sequence[int], seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold ``(predicted level, probability)`` of every labelled POI (stratified, seeded)."""
    from sklearn.model_selection import StratifiedKFold  # deferred: scikit-learn import (~1-3 s)

    y = np.array([level_class(v) for v in levels])
    pred, conf = np.zeros(len(y), dtype=int), np.zeros(len(y))
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
    for train, test in folds.split(np.zeros(len(y)), y):
        model = PriceModel().fit([docs[i] for i in train], [categories[i] for i in train], y[train])
        out = model.predict([docs[i] for i in test], [categories[i] for i in test])
        pred[test] = [p for p, _ in out]
        conf[test] = [c for _, c in out]
    return pred, conf


def choose_floor(
    gold: np.ndarray, pred: np.ndarray, conf: np.ndarray, majority: int
) -> tuple[float | None, dict[str, Any]]:
    """The smallest :data:`FLOORS` value whose answers reach :data:`TARGET_ACCURACY`, cover >=
    :data:`MIN_COVERAGE` of the POIs and beat the majority level *on those same POIs* by >=
    :data:`MIN_GAIN` (None when none does), and the accuracy/coverage at each floor."""
    table: dict[str, Any] = {}
    chosen: float | None = None
    for floor in FLOORS:
        sure = conf >= floor
        acc = float((gold == pred)[sure].mean()) if sure.any() else None
        base = float((gold == majority)[sure].mean()) if sure.any() else None
        table[f"{floor:.2f}"] = {
            "coverage": round(float(sure.mean()), 3),
            "accuracy": None if acc is None else round(acc, 3),
            "majority_accuracy": None if base is None else round(base, 3),
        }
        good = acc is not None and base is not None and acc >= TARGET_ACCURACY and acc - base >= MIN_GAIN
        if chosen is None and good and sure.mean() >= MIN_COVERAGE:
            chosen = floor
    return chosen, table


def _labelled(pois: Sequence[POI]) -> str | None:
    """Why these labelled POIs are too few to learn from (None when enough)."""
    counts = Counter(level_class(p.price_level) for p in pois if p.price_level is not None)
    if len(pois) < MIN_LABELLED:
        return f"{len(pois)} POI(s) with Yelp's price level; at least {MIN_LABELLED} are needed to learn from"
    if sum(n >= MIN_PER_LEVEL for n in counts.values()) < 2:
        return f"fewer than two price levels with >= {MIN_PER_LEVEL} POIs ({dict(sorted(counts.items()))})"
    return None


def assess(kb: KnowledgeBase, labelled: Sequence[POI], seed: int = 0) -> tuple[float | None, dict[str, Any]]:
    """Cross-validated quality of the model on ``labelled`` POIs, and the floor to fill at (None: do not
    fill; ``report["why_not"]`` says why)."""
    why = _labelled(labelled)
    report: dict[str, Any] = {"model": MODEL_NAME, "labelled": len(labelled)}
    if why is not None:
        report["why_not"] = why
        return None, report
    docs = [poi_document(kb, p) for p in labelled]
    cats = [p.categories for p in labelled]
    gold = np.array([level_class(p.price_level) for p in labelled])  # type: ignore[arg-type]
    pred, conf = cross_validate(docs, cats, gold, seed)
    majority = Counter(gold.tolist()).most_common(1)[0][0]
    base = scores(gold, np.full(len(gold), majority))
    model = scores(gold, pred)
    floor, table = choose_floor(gold, pred, conf, majority)
    report.update(
        {
            "levels": {str(k): v for k, v in sorted(Counter(gold.tolist()).items())},
            "cross_validated": model,
            "majority_baseline": base,
            "floors": table,
            "floor": floor,
        }
    )
    if model["accuracy"] - base["accuracy"] < MIN_GAIN or model["macro_f1"] <= base["macro_f1"]:
        report["why_not"] = (
            f"cross-validated accuracy {model['accuracy']} is not {MIN_GAIN} above the majority baseline "
            f"{base['accuracy']} (or macro-F1 {model['macro_f1']} <= {base['macro_f1']})"
        )
        return None, report
    if floor is None:
        report["why_not"] = (
            f"no confidence floor reaches accuracy {TARGET_ACCURACY} on >= {MIN_COVERAGE:.0%} of the POIs "
            f"and beats the majority level there by {MIN_GAIN}"
        )
        return None, report
    return floor, report


def infer_missing_prices(kb: KnowledgeBase, seed: int = 0) -> tuple[KnowledgeBase, dict[str, Any]]:
    """The KB with inferred price levels on POIs that lack Yelp's (module docstring), and a report:
    per POI type (a model per type, trained on that type's priced POIs only: a restaurant's words say
    nothing about a hotel's price) the cross-validated quality, the floor, how many were filled (per
    level) or why none; ``filled`` and ``missing`` in all."""
    pois = [kb.pois[i] for i in sorted(kb.pois)]
    filled: dict[str, POI] = {}
    report: dict[str, Any] = {"model": MODEL_NAME, "by_type": {}}
    for poi_type in sorted({p.poi_type for p in pois}):
        of_type = [p for p in pois if p.poi_type == poi_type]
        missing = [p for p in of_type if p.price_level is None]
        if not missing:
            continue
        labelled = [p for p in of_type if p.price_level is not None and not is_inferred(p)]
        floor, part = assess(kb, labelled, seed)
        part["missing"] = len(missing)
        part["filled"] = 0
        report["by_type"][poi_type] = part
        if floor is None:
            continue
        model = PriceModel().fit(
            [poi_document(kb, p) for p in labelled],
            [p.categories for p in labelled],
            [p.price_level for p in labelled],  # type: ignore[misc]
        )
        answers = model.predict([poi_document(kb, p) for p in missing], [p.categories for p in missing])
        by_level: Counter[int] = Counter()
        for poi, (level, p) in zip(missing, answers, strict=True):
            if p < floor:
                continue
            attrs = dict(poi.attributes)
            evidence = dict(attrs.get(EVIDENCE_KEY, {}))
            evidence["price_level"] = [f"{INFERRED} p={p:.2f} (model {MODEL_NAME})"]
            attrs[EVIDENCE_KEY] = evidence
            filled[poi.poi_id] = poi.model_copy(update={"price_level": level, "attributes": attrs})
            by_level[level] += 1
        part["filled"] = sum(by_level.values())
        part["filled_levels"] = {str(k): v for k, v in sorted(by_level.items())}
    report["missing"] = sum(p.price_level is None for p in pois)
    report["filled"] = len(filled)
    if not filled:
        return kb, report
    out = KnowledgeBase([filled.get(p.poi_id, p) for p in pois], kb.reviews.values(), name=kb.name)
    out.set_stances(kb.stances, kb.stance_model or "")
    return out, report


def is_inferred(poi: POI) -> bool:
    """Whether the POI's price level was inferred from text (not Yelp's)."""
    refs = poi.attributes.get(EVIDENCE_KEY, {}).get("price_level", [])
    return any(str(r).startswith(INFERRED) for r in refs)
