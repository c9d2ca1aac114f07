"""Accuracy metrics (10): closed R@k, MRR, nDCG@k, multi-reference hit@k, open-set R@k / MRR, top-1 CS.

Relevance is binary and single-reference unless stated: the turn's ``gold.gold_poi`` only. The
ranking is the prediction's ranking with repeats removed (see :mod:`.context`).
"""

from __future__ import annotations

import math

from groundtrace.crs.kb.constraints import satisfaction_share
from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import TurnContext


def _recall(metric: Metric, ctx: TurnContext) -> float:
    assert metric.k is not None
    return 1.0 if ctx.gold.gold_poi in ctx.ranking[: metric.k] else 0.0


def _mrr(metric: Metric, ctx: TurnContext) -> float:
    rank = ctx.rank_of(ctx.gold.gold_poi)
    return 0.0 if rank is None else 1.0 / rank


def _ndcg(metric: Metric, ctx: TurnContext) -> float:
    assert metric.k is not None
    rank = ctx.rank_of(ctx.gold.gold_poi)
    if rank is None or rank > metric.k:
        return 0.0
    return 1.0 / math.log2(rank + 1)  # IDCG = 1/log2(2) = 1 with a single relevant item


def _multi_ref_hit(metric: Metric, ctx: TurnContext) -> float:
    assert metric.k is not None
    accepted = {ctx.gold.gold_poi, *ctx.gold.multi_ref}
    return 1.0 if any(p in accepted for p in ctx.ranking[: metric.k]) else 0.0


def _constraint_satisfaction(metric: Metric, ctx: TurnContext) -> float:
    poi = ctx.top1_poi
    if poi is None:
        return 0.0
    return satisfaction_share(poi, ctx.gold.active_constraints, ctx.anchor)


RECALL = register(
    MetricFamily(
        name="recall",
        defaults=(1, 3, 5),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        takes_k=True,
        setting="closed",
        kernel=_recall,
        formula=(
            "Closed-set recall@k: R@k = 1[gold ∈ ranking[:k]], averaged over recommendation turns.\n"
            "Binary relevance: the gold POI only. A missing or errored prediction scores 0."
        ),
    ),
    aliases=("R", "r", "hits", "closed_recall"),
)

MRR = register(
    MetricFamily(
        name="mrr",
        defaults=(None,),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        setting="closed",
        kernel=_mrr,
        formula=(
            "Closed-set mean reciprocal rank: RR = 1/rank(gold) over the whole ranking, 0 when "
            "gold is absent;\n"
            "MRR = mean over turns. Missing prediction: 0."
        ),
    ),
    aliases=("rr", "closed_mrr"),
)

NDCG = register(
    MetricFamily(
        name="ndcg",
        defaults=(3,),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        takes_k=True,
        setting="closed",
        kernel=_ndcg,
        formula=(
            "Closed-set nDCG@k with binary relevance (gold POI = 1, every other POI = 0):\n"
            "nDCG@k = 1/log2(rank(gold)+1) if rank(gold) <= k else 0 (IDCG = 1). Missing prediction: 0."
        ),
    ),
    aliases=("nDCG",),
)

MULTI_REF_HIT = register(
    MetricFamily(
        name="multi_ref_hit",
        defaults=(1,),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        takes_k=True,
        setting="closed",
        kernel=_multi_ref_hit,
        formula=(
            "Multi-reference hit@k = 1[ranking[:k] ∩ ({gold} ∪ multi_ref) ≠ ∅]; hit@1 asks whether the\n"
            "top-1 is the gold or one of the turn's multi-reference POIs. Missing prediction: 0."
        ),
    ),
    aliases=("mr_hit", "multiref_hit", "hit_multi"),
)

OPEN_RECALL = register(
    MetricFamily(
        name="open_recall",
        defaults=(1, 10),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        takes_k=True,
        setting="open",
        kernel=_recall,
        formula=(
            "Open-set recall@k (setting='open', ranking over the 50-100 POI open pool):\n"
            "R@k = 1[gold ∈ ranking[:k]], the same gold POI as the closed set. Missing prediction: 0."
        ),
    ),
    aliases=("open_R", "oR", "open_hits"),
)

OPEN_MRR = register(
    MetricFamily(
        name="open_mrr",
        defaults=(None,),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        setting="open",
        kernel=_mrr,
        formula=(
            "Open-set mean reciprocal rank (setting='open'): RR = 1/rank(gold), 0 when absent; mean over\n"
            "turns. Missing prediction: 0."
        ),
    ),
    aliases=("open_rr",),
)

CONSTRAINT_SATISFACTION = register(
    MetricFamily(
        name="constraint_satisfaction",
        defaults=(None,),
        axis="accuracy",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_constraint_satisfaction,
        formula=(
            "Top-1 constraint satisfaction: CS = |{c ∈ gold.active_constraints : "
            "satisfies(top1, c, anchor)}|\n"
            "/ |active_constraints| (groundtrace.crs.kb.constraints.satisfaction_share); 1.0 when "
            "the turn has no\n"
            "active constraint; 0 when the top-1 is not a KB POI or the prediction is missing."
        ),
    ),
    aliases=("cs", "top1_cs", "constraint_sat"),
)
