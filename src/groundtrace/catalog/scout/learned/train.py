"""Training and calibration of the learned engine.

``train_model(skus, gold)``:

1. **Lexicons** — per (category, attribute): every gold value (and alternative) keyed by ``norm_key``;
   ``gold`` = SKUs whose gold it is and whose text states it, ``seen`` = SKUs of the category whose text
   states it. A lexicon match is proposed with confidence ``gold / seen`` (its training precision).
2. **Tagger** — a linear-chain CRF (crfsuite, L-BFGS with L1 ``c1`` and L2 ``c2``) over the tokens of the
   title and the description (:mod:`.tokens`), BIO-labelled where a gold value occurs as whole tokens;
   attributes labelled fewer than ``min_spans`` times are left out. Span confidence = the lowest token
   marginal probability of the span.
3. **Calibration** — the SKUs are split by a seeded RNG: the model is first trained on ``1 - holdout`` of
   them and proposes values for the held-out rest; per attribute, the best proposal per (SKU, attribute)
   with known gold is right or wrong, and θ is the lowest confidence at which the proposals at or above it
   reach ``target_precision`` (attributes with fewer than ``min_calibration`` held-out proposals use the
   pooled θ of all attributes; θ > 1 when no confidence reaches the target: never proposed). The final
   model is then trained on every SKU and keeps those thresholds.
"""

from __future__ import annotations

import base64
import random
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from groundtrace.catalog.model import SKU, GoldLabel
from groundtrace.catalog.scout.learned.model import LearnedModel, LexiconEntry
from groundtrace.catalog.scout.learned.predict import Proposal, Tagger, crfsuite, propose
from groundtrace.catalog.scout.learned.tokens import bio_labels, features, find_value, tokenize
from groundtrace.catalog.scout.sentences import norm_key

NEVER = 1.01


def _texts(sku: SKU) -> dict[str, str]:
    return {"title": sku.title, "description": sku.description}


def _forms(label: GoldLabel) -> list[str]:
    if label.not_applicable or not isinstance(label.value, str):
        return []
    return [label.value, *label.alternatives]


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


def _train_crf(
    skus: list[SKU], gold: dict[str, dict[str, GoldLabel]], attributes: set[str], c1: float, c2: float
) -> bytes:
    trainer = crfsuite().Trainer(verbose=False)
    for sku in skus:
        labels_of = gold.get(sku.sku_id, {})
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
            trainer.append(features(tokens, sku.category, field), bio_labels(tokens, spans))
    trainer.set_params({"c1": c1, "c2": c2, "max_iterations": 60, "feature.possible_transitions": True})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.crfsuite"
        trainer.train(str(path))
        return path.read_bytes()


def _span_counts(skus: list[SKU], gold: dict[str, dict[str, GoldLabel]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for sku in skus:
        tokens = {f: tokenize(t) for f, t in _texts(sku).items()}
        for slug, label in gold.get(sku.sku_id, {}).items():
            if any(find_value(toks, form) for form in _forms(label) for toks in tokens.values()):
                counts[slug] += 1
    return counts


def _build(
    skus: list[SKU], gold: dict[str, dict[str, GoldLabel]], attributes: set[str], c1: float, c2: float
) -> LearnedModel:
    crf = _train_crf(skus, gold, attributes, c1, c2)
    return LearnedModel(
        attributes=sorted(attributes),
        lexicons=_lexicons(skus, gold),
        crf=base64.b64encode(crf).decode("ascii"),
    )


def is_correct(proposal: Proposal, label: GoldLabel) -> bool:
    """A proposal is right when its value equals a gold surface form (``norm_key``; n/a gold: wrong)."""
    return norm_key(proposal.value) in {norm_key(f) for f in _forms(label)}


def scored_proposals(
    model: LearnedModel, skus: list[SKU], gold: dict[str, dict[str, GoldLabel]]
) -> dict[str, list[tuple[float, bool]]]:
    """Per attribute: (confidence, correct) of the best proposal per (SKU, attribute) with known gold."""
    tagger = Tagger(model)
    out: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for sku in skus:
        labels = gold.get(sku.sku_id, {})
        best: dict[str, Proposal] = {}
        for p in propose(tagger, sku.category, _texts(sku)):
            if p.attribute in labels and (
                p.attribute not in best or p.confidence > best[p.attribute].confidence
            ):
                best[p.attribute] = p
        for slug, p in best.items():
            out[slug].append((p.confidence, is_correct(p, labels[slug])))
    return out


def pick_threshold(scored: list[tuple[float, bool]], target: float) -> float:
    """The lowest confidence θ such that the proposals with confidence ≥ θ have precision ≥ ``target``;
    :data:`NEVER` when no θ does."""
    theta = NEVER
    right = total = 0
    ordered = sorted(scored, key=lambda x: -x[0])
    for i, (conf, ok) in enumerate(ordered):
        right += ok
        total += 1
        if i + 1 < len(ordered) and ordered[i + 1][0] == conf:
            continue  # a threshold keeps or drops tied confidences together
        if right / total >= target:
            theta = conf
    return theta


def calibrate(
    model: LearnedModel,
    skus: list[SKU],
    gold: Iterable[GoldLabel],
    target: float = 0.95,
    min_calibration: int = 8,
) -> LearnedModel:
    """``model`` with θ per attribute picked on ``skus``/``gold`` for precision ``target`` (module doc)."""
    scored = scored_proposals(model, skus, _by_sku(gold))
    pooled = [x for xs in scored.values() for x in xs]
    default = pick_threshold(pooled, target) if pooled else 0.5
    thresholds, report = {}, {}
    for slug, xs in sorted(scored.items()):
        theta = pick_threshold(xs, target) if len(xs) >= min_calibration else default
        kept = [ok for conf, ok in xs if conf >= theta]
        thresholds[slug] = theta
        report[slug] = {
            "heldout_proposals": float(len(xs)),
            "theta": theta,
            "precision": sum(kept) / len(kept) if kept else 0.0,
            "kept": float(len(kept)),
        }
    return model.model_copy(
        update={
            "thresholds": thresholds,
            "default_threshold": default,
            "target_precision": target,
            "calibration": report,
        }
    )


def train_model(
    skus: list[SKU],
    gold: list[GoldLabel],
    *,
    holdout: float = 0.2,
    target: float = 0.95,
    seed: int = 13,
    min_spans: int = 3,
    c1: float = 0.05,
    c2: float = 0.01,
) -> LearnedModel:
    """Train and calibrate a model on labelled SKUs (module docstring)."""
    by_sku = _by_sku(gold)
    labelled = [s for s in skus if s.sku_id in by_sku]
    if not labelled:
        raise ValueError("no SKU has a gold label: nothing to learn from")
    attributes = {slug for slug, n in _span_counts(labelled, by_sku).items() if n >= min_spans}
    if not attributes:
        raise ValueError(f"no attribute has {min_spans} gold values stated in the SKU text")
    rng = random.Random(seed)
    order = sorted(labelled, key=lambda s: s.sku_id)
    rng.shuffle(order)
    cut = int(len(order) * (1 - holdout)) if len(order) >= 5 else len(order)
    fit, held = order[:cut], order[cut:]
    draft = _build(fit, by_sku, attributes, c1, c2)
    final = _build(labelled, by_sku, attributes, c1, c2)
    if held:
        calibrated = calibrate(draft, held, gold, target)
        final = final.model_copy(
            update={k: getattr(calibrated, k) for k in ("thresholds", "default_threshold", "calibration")}
        )
    return final.model_copy(
        update={
            "target_precision": target,
            "trained_on": {"skus": len(labelled), "fit": len(fit), "heldout": len(held), "seed": seed},
        }
    )
