"""A store run killed with SIGKILL at ≥ 20 seeded random points resumes to exactly a straight run's state.

Each attempt is a forked child that runs ``enrich_to_store`` and SIGKILLs itself right before its N-th
write statement (INSERT / UPDATE) — inside a transaction as often as between two — where N is drawn from
a seeded RNG, so the schedule is reproducible. After the last (unkilled) attempt: one run, every SKU done
once, exactly one decision per (SKU, attribute), no audit row written twice, and the export equals the
export of a straight run into another store.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.export import export_rows
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store

SEED = 20261201
MIN_KILLS = 20
OPTIONS = StoreRunOptions(batch_size=2)


def _count_writes(store: CatalogStore, kill_at: int | None, counter: list[int]) -> None:
    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip()[:6].upper() in ("INSERT", "UPDATE"):
            counter[0] += 1
            if kill_at is not None and counter[0] >= kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    event.listen(store.engine, "before_cursor_execute", before)


def _attempt(url: str, skus: str, config_json: str, kill_at: int) -> None:
    store = CatalogStore(url)
    _count_writes(store, kill_at, [0])
    enrich_to_store(Path(skus), store, EnrichConfig.model_validate_json(config_json), OPTIONS)
    os._exit(0)


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_equals_a_straight_run(
    store_url: str, other_store_url: str, tmp_path: Path
) -> None:
    paths = write_demo_catalog(tmp_path / "demo")
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus)

    straight = CatalogStore(other_store_url)
    writes = [0]
    _count_writes(straight, None, writes)
    enrich_to_store(paths.skus, straight, config, OPTIONS)
    batches = (len(straight.table("skus")) + OPTIONS.batch_size - 1) // OPTIONS.batch_size
    per_batch = writes[0] / batches

    rng = random.Random(SEED)
    ctx = multiprocessing.get_context("fork")
    kills = attempts = 0
    while True:
        attempts += 1
        assert attempts < 400, "the run never finished"
        kill_at = rng.randint(1, max(2, round(1.3 * per_batch)))
        child = ctx.Process(
            target=_attempt, args=(store_url, str(paths.skus), config.model_dump_json(), kill_at)
        )
        child.start()
        child.join(120)
        assert child.exitcode is not None, "attempt hung"
        if child.exitcode == 0:
            break
        assert child.exitcode == -signal.SIGKILL
        kills += 1
    print(f"{kills} kills in {attempts} attempts")
    assert kills >= MIN_KILLS, f"only {kills} kills"

    store = CatalogStore(store_url)
    (run,) = store.runs()
    assert run["skus_done"] == len(straight.table("skus")) and run["skus_failed"] == 0
    decisions = Counter((r["sku_id"], r["attribute"]) for r in store.table("decisions"))
    assert set(decisions) == {(r["sku_id"], r["attribute"]) for r in straight.table("decisions")}
    assert set(decisions.values()) == {1}
    audit = Counter(
        (r["sku_id"], r["attribute"], r["action"], repr(r["new_value"])) for r in store.table("audit_log")
    )
    assert audit and max(audit.values()) == 1
    assert len(store.table("audit_log")) == len(straight.table("audit_log"))
    assert export_rows(store) == export_rows(straight)
