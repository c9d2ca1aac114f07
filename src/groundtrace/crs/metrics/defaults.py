"""The 27 TRACE-CRS metrics in report order, grouped by axis (the paper's 25 plus evidence_support and
constraint_evidence, issue 10)."""

from __future__ import annotations

from groundtrace.crs.metrics import (  # noqa: F401  (registers)
    accuracy,
    grounding,
    practicality,
    recovery,
    stance_evidence,
)
from groundtrace.crs.metrics.base import Axis, Metric, parse_metric

AXES: tuple[Axis, ...] = ("accuracy", "grounding", "recovery", "practicality")

DEFAULT_METRICS: tuple[Metric, ...] = tuple(
    parse_metric(name)
    for name in (
        # accuracy (10)
        "recall@1", "recall@3", "recall@5", "mrr", "ndcg@3", "multi_ref_hit@1",
        "open_recall@1", "open_recall@10", "open_mrr", "constraint_satisfaction",
        # grounding (10)
        "gs", "cd", "pc", "cgs", "nli_entailment", "citation_validity", "citation_rate",
        "hallucinated_attribute_rate", "evidence_support", "constraint_evidence",
        # recovery (4)
        "rejection_recovery", "t2r", "task_success", "rejected_repeat",
        # practicality (3)
        "spatial_coherence", "price_alignment", "proximity_alignment",
    )
)  # fmt: skip


def metrics_by_axis(metrics: tuple[Metric, ...] = DEFAULT_METRICS) -> dict[str, list[Metric]]:
    """``{axis: [metrics in report order]}`` for the four axes."""
    return {axis: [m for m in metrics if m.axis == axis] for axis in AXES}
