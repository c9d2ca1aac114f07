"""TRACE-Catalog: templates, evidence sources, identity, Scout, Judge, write policy, evaluation.

The public Python API (docs/python-api.md); everything else is private by convention::

    from groundtrace import catalog

    templates = catalog.load_templates()                        # built-in grocery/alcohol/electronics/home
    config = catalog.EnrichConfig(sources=["catalog"], judge="rule")   # components by registry name
    results = catalog.enrich_list(skus, config)                 # AttributeResult per (SKU, attribute)
    report = catalog.evaluate(results, gold, templates=templates)  # EvaluationReport
    catalog.EVIDENCE_SOURCES.names()                            # registries: sources, judges, importers ...

Names are imported on first use, so ``import groundtrace.catalog`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from groundtrace.catalog.enrichment import enrich, enrich_list
    from groundtrace.catalog.evaluation.metrics import METRICS
    from groundtrace.catalog.evaluation.scoring import EvaluationReport, evaluate
    from groundtrace.catalog.importers import IMPORTERS, import_file
    from groundtrace.catalog.judge.registry import JUDGES
    from groundtrace.catalog.model import SKU, AttributeResult, GoldLabel
    from groundtrace.catalog.pipeline import EnrichConfig, EnrichSummary, run_enrich
    from groundtrace.catalog.scout.engine import EXTRACTION_ENGINES
    from groundtrace.catalog.sources.base import EVIDENCE_SOURCES, SEARCH_PROVIDERS, EvidenceSource
    from groundtrace.catalog.templates import TemplateSet, load_templates

_EXPORTS: dict[str, str] = {
    "enrich": "groundtrace.catalog.enrichment",
    "enrich_list": "groundtrace.catalog.enrichment",
    "EnrichConfig": "groundtrace.catalog.pipeline",
    "EnrichSummary": "groundtrace.catalog.pipeline",
    "run_enrich": "groundtrace.catalog.pipeline",
    "evaluate": "groundtrace.catalog.evaluation.scoring",
    "EvaluationReport": "groundtrace.catalog.evaluation.scoring",
    "METRICS": "groundtrace.catalog.evaluation.metrics",
    "load_templates": "groundtrace.catalog.templates",
    "TemplateSet": "groundtrace.catalog.templates",
    "SKU": "groundtrace.catalog.model",
    "AttributeResult": "groundtrace.catalog.model",
    "GoldLabel": "groundtrace.catalog.model",
    "EVIDENCE_SOURCES": "groundtrace.catalog.sources.base",
    "SEARCH_PROVIDERS": "groundtrace.catalog.sources.base",
    "EvidenceSource": "groundtrace.catalog.sources.base",
    "EXTRACTION_ENGINES": "groundtrace.catalog.scout.engine",
    "JUDGES": "groundtrace.catalog.judge.registry",
    "IMPORTERS": "groundtrace.catalog.importers",
    "import_file": "groundtrace.catalog.importers",
}

__all__ = [
    "EVIDENCE_SOURCES",
    "EXTRACTION_ENGINES",
    "IMPORTERS",
    "JUDGES",
    "METRICS",
    "SEARCH_PROVIDERS",
    "SKU",
    "AttributeResult",
    "EnrichConfig",
    "EnrichSummary",
    "EvaluationReport",
    "EvidenceSource",
    "GoldLabel",
    "TemplateSet",
    "enrich",
    "enrich_list",
    "evaluate",
    "import_file",
    "load_templates",
    "run_enrich",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'groundtrace.catalog' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
