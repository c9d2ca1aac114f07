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
from groundtrace.crs.metrics.base import METRICS, Axis, Metric

AXES: tuple[Axis, ...] = ("accuracy", "grounding", "recovery", "practicality")


def _default_metrics() -> tuple[Metric, ...]:
    """The built-in families' ``defaults`` bound to metrics: by axis (:data:`AXES`), then in
    registration order (the order the metric modules define them), then in the order of ``defaults``."""
    families = [METRICS.get(name) for name in METRICS.in_order()]
    return tuple(
        family.bind(k) for axis in AXES for family in families if family.axis == axis for k in family.defaults
    )


DEFAULT_METRICS: tuple[Metric, ...] = _default_metrics()


def metrics_by_axis(metrics: tuple[Metric, ...] = DEFAULT_METRICS) -> dict[str, list[Metric]]:
    """``{axis: [metrics in report order]}`` for the four axes."""
    return {axis: [m for m in metrics if m.axis == axis] for axis in AXES}
