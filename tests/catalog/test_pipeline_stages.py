"""The enrich run is one module per stage (issue 25 item 4), and ``groundtrace.catalog.pipeline`` still
offers every public name the single ``pipeline.py`` had."""

from __future__ import annotations

import importlib

import pytest

from groundtrace.catalog import pipeline

#: public name -> the stage module that defines it
HOME = {
    "EnrichConfig": "config",
    "Components": "factory",
    "build_components": "factory",
    "SkuOutcome": "step",
    "process_sku": "step",
    "run_enrich": "batch",
    "cpu_bound": "batch",
    "iter_skus": "sku_files",
    "read_skus": "sku_files",
    "SkuFileError": "sku_files",
    "scan_results": "resume",
    "EnrichSummary": "summary",
    "summary_lines": "summary",
}


@pytest.mark.parametrize(("name", "stage"), sorted(HOME.items()))
def test_each_name_lives_in_its_stage_and_is_re_exported(name: str, stage: str) -> None:
    module = importlib.import_module(f"groundtrace.catalog.pipeline.{stage}")
    obj = getattr(module, name)
    assert getattr(pipeline, name) is obj and obj.__module__ == module.__name__
    assert name in pipeline.__all__


def test_the_old_module_surface_is_complete() -> None:
    old = {*HOME, "SKU_FIELDS", "ProgressFn"}  # the public names of pipeline.py at d4475f8
    assert old <= set(pipeline.__all__) and all(hasattr(pipeline, n) for n in old)
