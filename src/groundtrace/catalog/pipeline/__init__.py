"""The enrich pipeline, one module per stage (issue 25):

================================================  ===============================================
:mod:`~groundtrace.catalog.pipeline.config`        :class:`EnrichConfig` — what a run takes
:mod:`~groundtrace.catalog.pipeline.factory`       :func:`build_components` → :class:`Components`
:mod:`~groundtrace.catalog.pipeline.step`          :func:`process_sku` — Scout → Judge → policy, one SKU
:mod:`~groundtrace.catalog.pipeline.batch`         :func:`run_enrich` — the resumable JSONL batch runner
:mod:`~groundtrace.catalog.pipeline.sku_files`     :func:`read_skus` / :func:`iter_skus` — SKU input files
:mod:`~groundtrace.catalog.pipeline.resume`        :func:`scan_results` — what a results file already holds
:mod:`~groundtrace.catalog.pipeline.summary`       :class:`EnrichSummary`, :func:`summary_lines`
================================================  ===============================================

The write policy is its own stage module, :mod:`groundtrace.catalog.policy`; the Judge base class is
:class:`groundtrace.catalog.judge.base.Judge`. This package re-exports the names the single
``pipeline.py`` module had, so ``from groundtrace.catalog.pipeline import EnrichConfig, run_enrich`` keeps
working.
"""

from __future__ import annotations

from groundtrace.catalog.pipeline.batch import ProgressFn, cpu_bound, run_enrich
from groundtrace.catalog.pipeline.config import EnrichConfig
from groundtrace.catalog.pipeline.factory import Components, build_components
from groundtrace.catalog.pipeline.resume import scan_results
from groundtrace.catalog.pipeline.sku_files import SKU_FIELDS, SkuFileError, iter_skus, read_skus
from groundtrace.catalog.pipeline.step import SkuOutcome, process_sku
from groundtrace.catalog.pipeline.summary import EnrichSummary, summary_lines

__all__ = [
    "SKU_FIELDS",
    "Components",
    "EnrichConfig",
    "EnrichSummary",
    "ProgressFn",
    "SkuFileError",
    "SkuOutcome",
    "build_components",
    "cpu_bound",
    "iter_skus",
    "process_sku",
    "read_skus",
    "run_enrich",
    "scan_results",
    "summary_lines",
]
