"""TRACE-CRS: knowledge base, dataset builder, systems, metrics, evaluation and reports.

The public Python API (docs/python-api.md); everything else is private by convention::

    from groundtrace import crs

    kb = crs.load_kb("demo")                                   # or a KB file, or "demo:SEED"
    dialogues = crs.load_dataset("ds", split="test")           # list of Dialogue (+ .manifest, .errors)
    table = crs.evaluate("random", dialogues, kb=kb, metrics="recall@1,cgs")   # ScoreTable, in memory
    table.save("runs/random")                                  # the folder `crs run` writes, when wanted
    report = crs.compare([table, crs.evaluate("oracle", dialogues, kb=kb)])
    print(report.to_markdown())

Names are imported on first use, so ``import groundtrace.crs`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from groundtrace.crs.build.builder import build_dataset
    from groundtrace.crs.evaluation.evaluate import evaluate
    from groundtrace.crs.evaluation.loading import (
        DialogueList,
        RecordList,
        load_dataset,
        load_kb,
        load_records,
    )
    from groundtrace.crs.evaluation.score import ScoreTable
    from groundtrace.crs.metrics.base import METRICS, Metric, parse_metric, parse_metrics
    from groundtrace.crs.metrics.defaults import DEFAULT_METRICS
    from groundtrace.crs.report.compare import compare
    from groundtrace.crs.report.leaderboard import Report
    from groundtrace.crs.systems.base import SYSTEMS, CRSSystem, SystemReply, TurnUsage
    from groundtrace.crs.systems.predictions import Prediction, SystemInput, SystemOutput

_EXPORTS: dict[str, str] = {
    "load_kb": "groundtrace.crs.evaluation.loading",
    "build_dataset": "groundtrace.crs.build.builder",
    "load_dataset": "groundtrace.crs.evaluation.loading",
    "DialogueList": "groundtrace.crs.evaluation.loading",
    "load_records": "groundtrace.crs.evaluation.loading",
    "RecordList": "groundtrace.crs.evaluation.loading",
    "evaluate": "groundtrace.crs.evaluation.evaluate",
    "ScoreTable": "groundtrace.crs.evaluation.score",
    "compare": "groundtrace.crs.report.compare",
    "Report": "groundtrace.crs.report.leaderboard",
    "CRSSystem": "groundtrace.crs.systems",
    "SYSTEMS": "groundtrace.crs.systems",
    "SystemReply": "groundtrace.crs.systems",
    "TurnUsage": "groundtrace.crs.systems",
    "SystemInput": "groundtrace.crs.systems.predictions",
    "SystemOutput": "groundtrace.crs.systems.predictions",
    "Prediction": "groundtrace.crs.systems.predictions",
    "METRICS": "groundtrace.crs.metrics",
    "DEFAULT_METRICS": "groundtrace.crs.metrics",
    "Metric": "groundtrace.crs.metrics",
    "parse_metric": "groundtrace.crs.metrics",
    "parse_metrics": "groundtrace.crs.metrics",
}

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "SYSTEMS",
    "CRSSystem",
    "DialogueList",
    "Metric",
    "Prediction",
    "RecordList",
    "Report",
    "ScoreTable",
    "SystemInput",
    "SystemOutput",
    "SystemReply",
    "TurnUsage",
    "build_dataset",
    "compare",
    "evaluate",
    "load_dataset",
    "load_kb",
    "load_records",
    "parse_metric",
    "parse_metrics",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'groundtrace.crs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
