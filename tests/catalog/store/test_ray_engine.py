"""``--engine ray`` on a private local Ray instance (2 CPUs, no dashboard, 127.0.0.1): the same decisions
and the same export as the local runner on the same input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.export import export_rows
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store

# a private Ray instance: slow tier only (tests/conftest.py does not import this module for -m "not slow")
pytestmark = pytest.mark.slow
pytest.importorskip("ray", reason="--engine ray needs Ray: pip install 'groundtrace[ray]' (CI installs it)")


def test_ray_runner_decides_exactly_like_the_local_runner(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    paths = write_demo_catalog(tmp_path / "demo")
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus, workers=2)
    local = CatalogStore(f"sqlite:///{tmp_path / 'local.db'}")
    enrich_to_store(paths.skus, local, config)
    on_ray = CatalogStore(f"sqlite:///{tmp_path / 'ray.db'}")
    summary = enrich_to_store(paths.skus, on_ray, config, StoreRunOptions(engine="ray"))
    assert summary.mode == "ray" and summary.skus_failed == 0 and summary.skus_processed == 20
    assert on_ray.run_results(1) == local.run_results(1)
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == "0"  # the private instance reports nothing to Ray
    assert export_rows(on_ray) == export_rows(local)
    again = enrich_to_store(paths.skus, on_ray, config, StoreRunOptions(engine="ray"))
    assert (again.skus_unchanged, again.skus_processed) == (20, 0)  # nothing to send to Ray
