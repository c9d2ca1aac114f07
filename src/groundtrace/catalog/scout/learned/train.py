"""Training and calibration of the learned engine.

``train_model(skus, gold)``:

1. **Lexicons** — per (category, attribute): every gold value keyed by ``norm_key``; ``gold`` = SKUs whose
   gold it is and whose text states it, ``seen`` = SKUs of the category with known gold for the attribute
   whose text states it. A lexicon match's raw score is ``gold / (seen + 2)``.
2. **Tagger** — a linear-chain CRF (crfsuite, L-BFGS with L1 ``c1`` and L2 ``c2``) over the tokens of the
   title and the description (:mod:`.tokens`), BIO-labelled where a gold value occurs as whole tokens;
   attributes labelled fewer than ``min_spans`` times are left out. A span's raw score is its lowest token
   marginal probability.
3. **Calibration by cross-fitting** — the labelled SKUs are cut into ``folds`` parts by a seeded RNG; a
   draft model trained on the other parts proposes values for each part, so every labelled SKU gets
   proposals from a model that never saw it (``folds < 2``: one seeded held-out share ``holdout``). Each
   proposal with known gold is right or wrong by ``correct(value, label, category)`` (default: equal to a
   gold surface form after ``norm_key``; ``catalog train --templates`` passes the evaluation's typed
   comparator). :mod:`.calibration` fits per attribute and proposal kind a monotone curve raw score →
   probability of being right (isotonic, shrunk toward the pooled curve of the kind); θ is picked for
   ``target`` precision on the best calibrated proposal per (SKU, attribute) — as the engine keeps it
   (:func:`.predict.select`) — with each SKU's confidences from curves fitted on the other SKUs
   (out-of-fold, so the pick is not fitted to itself), the held-out precision at θ clearing the target by
   one standard error (Wilson lower bound, ``z = 1``); ``allocation``: ``pooled`` (one θ for every
   attribute: the most values at the target precision overall) or ``per-attribute``. Unknown gold
   (partial annotation) never counts. The final model is trained on every labelled SKU and keeps the
   curves (fitted on all held-out proposals) and thresholds.
4. **Reranker** (``rerank=True``, model version 3) — the held-out proposals of step 3 are grouped into
   candidate *values* per (SKU, attribute) and a logistic regression over features of each value and its
   rivals (:mod:`.rerank`) is fitted on whether the value is right. Its scores for each training SKU come
   from a reranker fitted on the *other* folds (stacking), and those scores — proposal kind ``ranker`` —
   are what step 3 calibrates and picks θ on; the final reranker is fitted on every held-out candidate.
"""

from __future__ import annotations

import base64
import random
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from groundtrace.catalog.model import SKU, CategoryTemplate, GoldLabel
from groundtrace.catalog.scout.learned.calibration import NEVER, Allocation, Curve, allocate, fit_curve
from groundtrace.catalog.scout.learned.model import LearnedModel, LexiconEntry
from groundtrace.catalog.scout.learned.predict import Tagger, crfsuite, gazetteer_of, propose
from groundtrace.catalog.scout.learned.rerank import KIND as RANKER
from groundtrace.catalog.scout.learned.rerank import Ranker, featurise, fit_ranker
from groundtrace.catalog.scout.learned.tokens import Gazetteer, bio_labels, features, find_value, tokenize
from groundtrace.catalog.scout.sentences import norm_key

__all__ = ["NEVER", "Correct", "calibrate", "exact_correct", "train_model"]

#: ``correct(value, gold label, category)``: is a proposed value right for a (value-carrying) gold label?
Correct = Callable[[str, GoldLabel, str], bool]
KINDS = ("tagger", "lexicon", RANKER)


def _texts(sku: SKU) -> dict[str, str]:
    return {"title": sku.title, "description": sku.description}


def _forms(label: GoldLabel) -> list[str]:
    if label.not_applicable or not isinstance(label.value, str):
        return []
    return [label.value, *label.alternatives]


def exact_correct(value: str, label: GoldLabel, category: str = "") -> bool:
    """Right when ``value`` equals a gold surface form after ``norm_key`` (n/a gold: wrong)."""
    return norm_key(value) in {norm_key(f) for f in _forms(label)}


def _by_sku(gold: Iterable[GoldLabel]) -> dict[str, dict[str, GoldLabel]]:
    out: dict[str, dict[str, GoldLabel]] = defaultdict(dict)
    for g in gold:
        out[g.sku_id].setdefault(g.attribute, g)
    return out


def _lexicons(skus: list[SKU], gold: dict[str, dict[str, GoldLabel]]) -> dict:
    lex: dict[str, dict[str, dict[str, LexiconEntry]]] = {}
    padded = {s.sku_id: f" {norm_key(s.title + ' ' + s.description)} " for s in skus}
    for sku in skus:
        cat = sku.category.lower()
        for slug, label in gold.get(sku.sku_id, {}).items():
            for form in _forms(label)[:1]:
                key = norm_key(form)
                if key:
                    lex.setdefault(cat, {}).setdefault(slug, {}).setdefault(
                        key, LexiconEntry(value=form, gold=0, seen=0)
                    )
    for sku in skus:
        cat = sku.category.lower()
        text = padded[sku.sku_id]
        for slug, entries in lex.get(cat, {}).items():
            label = gold.get(sku.sku_id, {}).get(slug)
            if label is None:
                continue  # unknown gold: neither right nor wrong
            gold_keys = {norm_key(f) for f in _forms(label)}
            for key, entry in entries.items():
                if f" {key} " in text:
                    entry.seen += 1
                    entry.gold += key in gold_keys
    return lex


def _jackknife_gazetteers(
    skus: list[SKU], gold: dict[str, dict[str, GoldLabel]], parts: int, seed: int
) -> dict[str, Callable[[str], Gazetteer]]:
    """Per SKU, its category's gazetteer built from the *other* ``parts - 1`` parts of ``skus`` (seeded
    split), so the tagger trains on gazetteer marks as unreliable as they are on unseen SKUs (a value
    known only from the SKU's own gold is not marked). ``parts < 2``: no gazetteer."""
    if parts < 2 or len(skus) < parts:
        return {}
    order = sorted(skus, key=lambda s: s.sku_id)
    random.Random(seed).shuffle(order)
    out: dict[str, Callable[[str], Gazetteer]] = {}
    for j in range(parts):
        part = order[j::parts]
        held = {s.sku_id for s in part}
        lexicons = _lexicons([s for s in order if s.sku_id not in held], gold)
        cache: dict[str, Gazetteer] = {}

        def get(category: str, lexicons: dict = lexicons, cache: dict = cache) -> Gazetteer:
            if category not in cache:
                cache[category] = gazetteer_of(lexicons, category)
            return cache[category]

        for s in part:
            out[s.sku_id] = get
    return out


def _train_crf(
    skus: list[SKU],
    gold: dict[str, dict[str, GoldLabel]],
    attributes: set[str],
    c1: float,
    c2: float,
    max_iterations: int,
    gazetteer_parts: int = 5,
) -> bytes:
    trainer = crfsuite_trainer()
    gazetteers = _jackknife_gazetteers(skus, gold, gazetteer_parts, seed=len(skus))
    for sku in skus:
        labels_of = gold.get(sku.sku_id, {})
        gazetteer = gazetteers[sku.sku_id](sku.category) if sku.sku_id in gazetteers else None
        for field, text in _texts(sku).items():
            tokens = tokenize(text)
            if not tokens:
                continue
            spans = {}
            for slug, label in labels_of.items():
                if slug not in attributes:
                    continue
                for form in _forms(label):
                    hit = find_value(tokens, form)
                    if hit:
                        spans[slug] = hit
                        break
            trainer.append(features(tokens, sku.category, field, gazetteer), bio_labels(tokens, spans))
    trainer.set_params(
        {"c1": c1, "c2": c2, "max_iterations": max_iterations, "feature.possible_transitions": True}
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.crfsuite"
        trainer.train(str(path))
        return path.read_bytes()


def crfsuite_trainer():  # type: ignore[no-untyped-def]

    return crfsuite().Trainer(verbose=False)


def _span_counts(skus: list[SKU], gold: dict[str, dict[str, GoldLabel]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for sku in skus:
        tokens = {f: tokenize(t) for f, t in _texts(sku).items()}
        for slug, label in gold.get(sku.sku_id, {}).items():
            if any(find_value(toks, form) for form in _forms(label) for toks in tokens.values()):
                counts[slug] += 1
    return counts


@dataclass(frozen=True)
class _Params:
    attributes: frozenset[str]
    c1: float
    c2: float
    max_iterations: int
    gazetteer_parts: int


def _build(skus: list[SKU], gold: dict[str, dict[str, GoldLabel]], params: _Params) -> LearnedModel:
    crf = _train_crf(
        skus,
        gold,
        set(params.attributes),
        params.c1,
        params.c2,
        params.max_iterations,
        params.gazetteer_parts,
    )
    return LearnedModel(
        attributes=sorted(params.attributes),
        lexicons=_lexicons(skus, gold),
        crf=base64.b64encode(crf).decode("ascii"),
    )


@dataclass(frozen=True)
class Scored:
    """One held-out proposal: its SKU, attribute, kind, raw score, value and whether it is right."""

    sku_id: str
    attribute: str
    kind: str
    raw: float
    value: str
    ok: bool


def heldout_proposals(
    model: LearnedModel,
    skus: list[SKU],
    gold: dict[str, dict[str, GoldLabel]],
    correct: Correct = exact_correct,
) -> list[Scored]:
    """Every proposal of ``model`` for an attribute with known, value-carrying gold on ``skus`` (n/a gold
    counts every proposal wrong; unknown gold is skipped)."""
    tagger = Tagger(model)
    out = []
    for sku in skus:
        labels = gold.get(sku.sku_id, {})
        for p in propose(tagger, sku.category, _texts(sku)):
            label = labels.get(p.attribute)
            if label is None:
                continue
            ok = (
                not label.not_applicable and label.value is not None and correct(p.value, label, sku.category)
            )
            out.append(Scored(sku.sku_id, p.attribute, p.how, p.confidence, p.value, ok))
    return out


@dataclass(frozen=True)
class Candidate:
    """One held-out candidate value (the proposals of one attribute stating one value): its SKU,
    attribute, value, reranker features and whether it is right."""

    sku_id: str
    attribute: str
    value: str
    features: dict[str, float]
    ok: bool


def heldout_candidates(
    model: LearnedModel,
    skus: list[SKU],
    gold: dict[str, dict[str, GoldLabel]],
    correct: Correct = exact_correct,
) -> list[Candidate]:
    """Every candidate value (:func:`.rerank.featurise`) of ``model`` for an attribute with known gold on
    ``skus`` (n/a gold: every value wrong; unknown gold is skipped)."""
    tagger = Tagger(model)
    out = []
    for sku in skus:
        labels = gold.get(sku.sku_id, {})
        proposals = propose(tagger, sku.category, _texts(sku))
        for slug, _key, mine, feats in featurise(proposals, sku.title, model.lexicon_gold(sku.category)):
            label = labels.get(slug)
            if label is None:
                continue
            value = mine[0].value
            ok = not label.not_applicable and label.value is not None and correct(value, label, sku.category)
            out.append(Candidate(sku.sku_id, slug, value, feats, ok))
    return out


def ranked(candidates: list[Candidate], ranker: Ranker) -> list[Scored]:
    """``candidates`` as proposals of kind ``ranker`` scored by ``ranker``."""
    return [
        Scored(c.sku_id, c.attribute, RANKER, ranker.score(c.features), c.value, c.ok) for c in candidates
    ]


def stacked(
    candidates: list[Candidate], fold_of: dict[str, int], c: float = 1.0
) -> tuple[Ranker, list[Scored]]:
    """The reranker fitted on every candidate, and each candidate scored by a reranker fitted on the
    candidates of the other folds (``fold_of``: SKU → fold), so calibration and θ see out-of-fold
    scores."""
    folds = sorted(set(fold_of.values()))
    out: list[Scored] = []
    for f in folds:
        rest = [(x.features, x.ok) for x in candidates if fold_of.get(x.sku_id) != f]
        mine = [x for x in candidates if fold_of.get(x.sku_id) == f]
        out += ranked(mine, fit_ranker(rest, c))
    return fit_ranker([(x.features, x.ok) for x in candidates], c), out


def fit_curves(scored: list[Scored], strength: float = 4.0) -> dict[str, Curve]:
    """Per kind a pooled curve (``*|kind``, shrunk toward the kind's base rate) and per attribute and kind
    a curve shrunk toward the pooled one (``slug|kind``)."""
    curves: dict[str, Curve] = {}
    for kind in KINDS:
        of_kind = [s for s in scored if s.kind == kind]
        if not of_kind:
            continue
        base = sum(s.ok for s in of_kind) / len(of_kind)
        pooled = fit_curve([(s.raw, s.ok) for s in of_kind], base, strength)
        curves[f"*|{kind}"] = pooled
        by_slug: dict[str, list[tuple[float, bool]]] = defaultdict(list)
        for s in of_kind:
            by_slug[s.attribute].append((s.raw, s.ok))
        for slug, xs in sorted(by_slug.items()):
            curves[f"{slug}|{kind}"] = fit_curve(xs, pooled, strength)
    return curves


def _best_calibrated(model: LearnedModel, scored: list[Scored]) -> dict[str, list[tuple[float, bool]]]:
    """Per attribute, ``(calibrated confidence, right)`` of the best proposal per SKU — what the engine
    keeps (:func:`.predict.select`: highest calibrated confidence)."""
    best: dict[tuple[str, str], tuple[float, bool]] = {}
    for s in scored:
        conf = model.confidence(s.attribute, s.kind, s.raw)
        key = (s.sku_id, s.attribute)
        if key not in best or conf > best[key][0]:
            best[key] = (conf, s.ok)
    out: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for (_sku, slug), x in sorted(best.items()):
        out[slug].append(x)
    return out


def _out_of_fold(
    model: LearnedModel, scored: list[Scored], folds: int, seed: int, strength: float
) -> dict[str, list[tuple[float, bool]]]:
    """:func:`_best_calibrated` with each SKU's proposals calibrated by curves fitted on the *other*
    ``folds - 1`` parts of the SKUs (seeded), so θ is picked on confidences that were not fitted to the
    proposals they rank — an in-sample isotonic fit is optimistic where it selects (on the OA-Mine train
    split, θ picked in-sample for 95 % gave 91 % on held-out train SKUs)."""
    skus = sorted({s.sku_id for s in scored})
    if folds < 2 or len(skus) < 2 * folds:
        return _best_calibrated(model.model_copy(update={"curves": fit_curves(scored, strength)}), scored)
    random.Random(seed).shuffle(skus)
    fold_of = {sku: i % folds for i, sku in enumerate(skus)}
    out: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for f in range(folds):
        rest = [s for s in scored if fold_of[s.sku_id] != f]
        fitted = model.model_copy(update={"curves": fit_curves(rest, strength)})
        for slug, xs in _best_calibrated(fitted, [s for s in scored if fold_of[s.sku_id] == f]).items():
            out[slug] += xs
    return dict(out)


def calibrate_from(
    model: LearnedModel,
    scored: list[Scored],
    target: float,
    allocation: Allocation = "pooled",
    *,
    folds: int = 5,
    seed: int = 13,
    strength: float = 4.0,
    z: float = 1.0,
) -> LearnedModel:
    """``model`` with curves fitted on every proposal of ``scored`` and θ picked for ``target`` on
    out-of-fold calibrated confidences (:func:`_out_of_fold`; module docstring)."""
    fitted = model.model_copy(update={"curves": fit_curves(scored, strength)})
    calibrated = _out_of_fold(model, scored, folds, seed, strength)
    thresholds, default = allocate(calibrated, target, allocation, z=z)
    report = {}
    for slug, xs in sorted(calibrated.items()):
        theta = thresholds[slug]
        kept = [ok for conf, ok in xs if conf >= theta]
        report[slug] = {
            "heldout_proposals": float(len(xs)),
            "theta": theta,
            "precision": sum(kept) / len(kept) if kept else 0.0,
            "kept": float(len(kept)),
        }
    return fitted.model_copy(
        update={
            "thresholds": thresholds,
            "default_threshold": default,
            "target_precision": target,
            "calibration": report,
            "allocation": allocation,
        }
    )


def calibrate(
    model: LearnedModel,
    skus: list[SKU],
    gold: Iterable[GoldLabel],
    target: float = 0.95,
    correct: Correct = exact_correct,
    allocation: Allocation = "pooled",
) -> LearnedModel:
    """``model`` re-calibrated on labelled SKUs it was not trained on (``catalog calibrate``)."""
    if model.ranker is not None:
        scored = ranked(heldout_candidates(model, skus, _by_sku(gold), correct), model.ranker)
    else:
        scored = heldout_proposals(model, skus, _by_sku(gold), correct)
    return calibrate_from(model, scored, target, allocation)


def train_model(
    skus: list[SKU],
    gold: list[GoldLabel],
    *,
    folds: int = 5,
    holdout: float = 0.2,
    target: float = 0.95,
    seed: int = 13,
    min_spans: int = 3,
    c1: float = 0.05,
    c2: float = 0.01,
    max_iterations: int = 60,
    gazetteer_parts: int = 5,
    correct: Correct = exact_correct,
    allocation: Allocation = "pooled",
    rerank: bool = True,
    progress: Callable[[int, int], None] | None = None,
    templates: Sequence[CategoryTemplate] = (),
    templates_from: str = "",
) -> LearnedModel:
    """Train and calibrate a model on labelled SKUs (module docstring). ``progress(done, total)`` counts
    the models trained: one per cross-fitting fold, then the final one (called at the start and after each).
    ``templates`` (with ``templates_from``: ``templates`` or ``gold``) are stored in the model file
    (version 4) so enrich and evaluate can use them without a template folder.
    """
    by_sku = _by_sku(gold)
    labelled = [s for s in skus if s.sku_id in by_sku]
    if not labelled:
        raise ValueError("no SKU has a gold label: nothing to learn from")
    attributes = {slug for slug, n in _span_counts(labelled, by_sku).items() if n >= min_spans}
    if not attributes:
        raise ValueError(f"no attribute has {min_spans} gold values stated in the SKU text")
    params = _Params(frozenset(attributes), c1, c2, max_iterations, gazetteer_parts)
    order = sorted(labelled, key=lambda s: s.sku_id)
    random.Random(seed).shuffle(order)
    if folds >= 2 and len(order) >= folds:
        parts = [order[i::folds] for i in range(folds)]
    else:
        cut = int(len(order) * (1 - holdout)) if len(order) >= 5 else len(order)
        parts = [order[cut:]] if cut < len(order) else []
    scored: list[Scored] = []
    candidates: list[Candidate] = []
    fold_of: dict[str, int] = {}
    step = progress or (lambda done, total: None)
    step(0, len(parts) + 1)
    for i, part in enumerate(parts):
        held = {s.sku_id for s in part}
        draft = _build([s for s in order if s.sku_id not in held], by_sku, params)
        if rerank:
            candidates += heldout_candidates(draft, part, by_sku, correct)
            fold_of.update(dict.fromkeys(held, i))
        else:
            scored += heldout_proposals(draft, part, by_sku, correct)
        step(i + 1, len(parts) + 1)
    final = _build(labelled, by_sku, params)
    if rerank and candidates and len(parts) >= 2:
        ranker, scored = stacked(candidates, fold_of)
        final = final.model_copy(update={"ranker": ranker})
    elif rerank and candidates:  # one held-out part: no out-of-fold scores for the reranker to stack on
        scored = heldout_proposals(draft, parts[0], by_sku, correct)
    step(len(parts) + 1, len(parts) + 1)
    if scored:
        final = calibrate_from(final, scored, target, allocation)
    heldout = sum(len(p) for p in parts)
    return final.model_copy(
        update={
            "target_precision": target,
            "trained_on": {"skus": len(labelled), "folds": len(parts), "heldout": heldout, "seed": seed},
            "templates": [t.model_dump(mode="json") for t in templates],
            "templates_from": templates_from if templates else "",
        }
    )
