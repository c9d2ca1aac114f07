"""``--runner ray`` on a private local Ray instance (2 CPUs, no dashboard, 127.0.0.1): the same decisions
and the same export as the local runner on the same input."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.export import export_rows
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store

# a private Ray instance: slow tier only (tests/conftest.py does not import this module for -m "not slow")
pytestmark = pytest.mark.slow
pytest.importorskip("ray", reason="--runner ray needs Ray: pip install 'groundtrace[ray]' (CI installs it)")


def test_ray_runner_decides_exactly_like_the_local_runner(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    paths = write_demo_catalog(tmp_path / "demo")
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus, workers=2)
    local = CatalogStore(f"sqlite:///{tmp_path / 'local.db'}")
    enrich_to_store(paths.skus, local, config)
    on_ray = CatalogStore(f"sqlite:///{tmp_path / 'ray.db'}")
    summary = enrich_to_store(paths.skus, on_ray, config, StoreRunOptions(runner="ray"))
    assert summary.mode == "ray" and summary.skus_failed == 0 and summary.skus_processed == 20
    assert on_ray.run_results(1) == local.run_results(1)
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == "0"  # the private instance reports nothing to Ray
    assert export_rows(on_ray) == export_rows(local)
    again = enrich_to_store(paths.skus, on_ray, config, StoreRunOptions(runner="ray"))
    assert (again.skus_unchanged, again.skus_processed) == (20, 0)  # nothing to send to Ray


def _count_writes(store: CatalogStore, kill_at: int | None, counter: list[int]) -> None:
    """Count INSERT / UPDATE statements; SIGKILL this process right before the ``kill_at``-th."""
    from sqlalchemy import event

    def before(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if statement.lstrip()[:6].upper() in ("INSERT", "UPDATE"):
            counter[0] += 1
            if kill_at is not None and counter[0] >= kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    event.listen(store.engine, "before_cursor_execute", before)


def _ray_attempt(url: str, skus: str, config_json: str, kill_at: int) -> None:
    """A Ray run (private instance) whose driver is SIGKILLed right before its ``kill_at``-th write; in a
    process group of its own, so the test can stop the Ray processes the kill leaves behind."""
    os.setpgid(0, 0)
    store = CatalogStore(url)
    _count_writes(store, kill_at, [0])
    options = StoreRunOptions(runner="ray", batch_size=4)
    enrich_to_store(Path(skus), store, EnrichConfig.model_validate_json(config_json), options)
    os._exit(0)


def test_a_ray_run_killed_mid_write_resumes_on_the_local_runner(tmp_path: Path) -> None:
    """A run started on Ray and SIGKILLed between writes is the same run for the local runner (the run's
    identity does not name the runner): it does only the SKUs not yet written and ends exactly where a
    straight local run ends."""
    import multiprocessing

    paths = write_demo_catalog(tmp_path / "demo")
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus, workers=2)
    straight = CatalogStore(f"sqlite:///{tmp_path / 'straight.db'}")
    writes = [0]
    _count_writes(straight, None, writes)
    enrich_to_store(paths.skus, straight, config, StoreRunOptions(batch_size=4))
    url = f"sqlite:///{tmp_path / 'killed.db'}"
    # spawn, not fork: a process that has used Ray (the test above) cannot fork a working Ray driver
    child = multiprocessing.get_context("spawn").Process(
        target=_ray_attempt, args=(url, str(paths.skus), config.model_dump_json(), writes[0] // 2)
    )
    child.start()
    try:
        child.join(600)
    finally:
        try:  # Ray's agents outlive a SIGKILLed driver: stop its whole process group
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert child.exitcode == -signal.SIGKILL
    store = CatalogStore(url)
    done_before = len(store.table("sku_runs"))
    assert 0 < done_before < 20  # killed part-way: some SKUs written, not all
    resumed = enrich_to_store(paths.skus, store, config, StoreRunOptions(batch_size=4))
    assert resumed.mode == "processes" and resumed.skus_unchanged == done_before
    assert resumed.skus_processed == 20 - done_before
    (run,) = store.runs()
    assert run["skus_done"] == 20 and run["skus_failed"] == 0
    assert export_rows(store) == export_rows(straight)
