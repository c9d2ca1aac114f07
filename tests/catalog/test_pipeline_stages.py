"""The enrich run is one module per stage (issue 25 item 4), and ``groundtrace.catalog.pipeline`` still
offers every public name the single ``pipeline.py`` had."""

from __future__ import annotations

import importlib
from pathlib import Path

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


def test_templates_are_shared_until_a_template_file_changes(tmp_path: Path) -> None:
    """``build_components`` parses a template folder once and shares the immutable set; editing, adding or
    removing a template file gives a fresh parse."""
    import os
    import shutil

    from groundtrace.catalog.pipeline.factory import cached_templates
    from groundtrace.catalog.templates import builtin_template_dir

    folder = tmp_path / "templates"
    shutil.copytree(builtin_template_dir(), folder)
    first = cached_templates(folder)
    assert cached_templates(folder) is first
    some = min(folder.glob("*.yaml"))
    text = some.read_text(encoding="utf-8")
    some.write_text(text + "\n", encoding="utf-8")
    stat = some.stat()
    os.utime(some, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    edited = cached_templates(folder)
    assert edited is not first and edited.categories() == first.categories()
    some.unlink()
    assert len(cached_templates(folder).categories()) == len(first.categories()) - 1
