"""The 27 TRACE-CRS metrics: spec objects in a registry and string parsing.

>>> from groundtrace.crs.metrics import parse_metric
>>> str(parse_metric("R@3"))
'recall@3'

Public API: :data:`METRICS` (a :class:`~groundtrace.core.registry.Registry` of metric families),
:func:`parse_metric`, :class:`Metric`, :data:`DEFAULT_METRICS` (the 27, in report order, each with its
``axis``), and the scoring of runs lives in :mod:`groundtrace.crs.evaluation.score`.
Formulas: docs/crs-metrics.md.
"""

from __future__ import annotations

from groundtrace.crs.metrics.base import (
    METRICS,
    Metric,
    MetricFamily,
    MetricParseError,
    parse_metric,
    parse_metrics,
)
from groundtrace.crs.metrics.defaults import AXES, DEFAULT_METRICS, metrics_by_axis

__all__ = [
    "AXES",
    "DEFAULT_METRICS",
    "METRICS",
    "Metric",
    "MetricFamily",
    "MetricParseError",
    "metrics_by_axis",
    "parse_metric",
    "parse_metrics",
]
