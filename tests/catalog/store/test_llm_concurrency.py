"""The LLM batch path gives the same results whatever the concurrency: one SKU at a time, 8, 32 and 64 in
flight in this process, and 8 and 64 in flight over 2 worker processes (issue 26 item 1), with the store
written from its own process (the default) or from this one — against the OpenAI-wire test server, whose
answers depend only on the request."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store, shard_sizes
from groundtrace.core.llm.wire_server import WireServer

_BLOCK = re.compile(r"<<<DATA (\w+)[^>]*>>>\n(.*?)\n<<<END DATA>>>", re.DOTALL)


def _answer(request: dict[str, Any]) -> str:
    """A deterministic Scout: an enum attribute whose allowed value appears in a DATA block of the request
    is extracted, quoting that value from the block; every other attribute is not found."""
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    blocks = _BLOCK.findall(user)
    attributes = json.loads(next(body for label, body in blocks if label == "PRIORITY_ATTRIBUTES"))
    evidence = [(label, body) for label, body in blocks if label.endswith("EVIDENCE")]
    out: dict[str, Any] = {}
    for attr in attributes:
        found = None
        for value in attr.get("allowed_values") or []:
            hit = next((body for _, body in evidence if value.lower() in body.lower()), None)
            if hit is not None:
                start = hit.lower().index(value.lower())
                found = (value, hit[start : start + len(value)])
                break
        if found is None:
            out[attr["slug"]] = {"status": "not_found", "value": None}
        else:
            value = [found[0]] if attr.get("multi_valued") else found[0]
            out[attr["slug"]] = {
                "status": "extracted",
                "value": value,
                "source": "cd",
                "source_type": "catalog",
                "quoted_evidence": found[1],
                "confidence": 0.9,
            }
    return json.dumps({"identity": {"confidence": 0.8}, "attributes": out})


_VOLATILE = {"id", "run_id", "created_at", "updated_at", "decided_at", "judged_at", "at", "timestamp"}


def _results(store: CatalogStore) -> dict[str, list[str]]:
    """Every candidate, verdict and decision row, without run ids and times, in a stable order."""
    out = {}
    for name in ("candidates", "verdicts", "decisions"):
        rows = [
            json.dumps({k: v for k, v in row.items() if k not in _VOLATILE}, sort_keys=True, default=str)
            for row in store.table(name)
        ]
        out[name] = sorted(rows)
    return out


def test_shard_sizes_split_the_calls_in_flight_evenly() -> None:
    assert shard_sizes(8, 2) == [4, 4]
    assert shard_sizes(9, 2) == [5, 4]
    assert shard_sizes(64, 3) == [22, 21, 21]
    assert sum(shard_sizes(7, 7)) == 7


@pytest.mark.slow
def test_results_are_identical_at_concurrency_1_8_32_64_and_over_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    paths = write_demo_catalog(tmp_path / "demo")
    results = {}
    with WireServer(_answer) as server:
        runs = (
            ("c1", 1, 1, True),
            ("c8", 8, 1, True),
            ("c32", 32, 1, True),
            ("c64", 64, 1, True),
            ("c64-writer-thread", 64, 1, False),
            ("c8x2", 8, 2, True),
            ("c64x2", 64, 2, True),
        )
        for label, workers, processes, write_process in runs:
            config = EnrichConfig(
                llm=f"{server.base_url}#scout", llm_options={"no_cache": True}, workers=workers
            )
            store = CatalogStore(f"sqlite:///{tmp_path / f'{label}.db'}")
            before = len(server.requests)
            options = StoreRunOptions(llm_processes=processes, write_process=write_process)
            summary = enrich_to_store(paths.skus, store, config, options)
            assert summary.skus_failed == 0 and summary.skus_processed == summary.skus_read == 20
            assert summary.llm_usage is not None
            assert summary.llm_usage.calls == summary.llm_calls == len(server.requests) - before
            results[label] = _results(store)
            store.close()
    assert results["c1"]["decisions"]
    assert all(results[label] == results["c1"] for label, *_ in runs)
    # the answers did extract values, so the comparison covers located quotes, not only abstentions
    assert any('"extracted"' in row and '"span"' in row for row in results["c1"]["candidates"])


def test_a_batch_that_fails_in_the_store_process_is_narrowed_to_its_sku(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, poison_sku: Callable[[str], Any]
) -> None:
    """The store written from its own process: a SKU whose write fails there (an LLM call count no
    INTEGER column holds) fails the batch's transaction; the writer writes its SKUs one per transaction
    and reports only that SKU, with the database's message, as it does when writing in-process."""
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))
    paths = write_demo_catalog(tmp_path / "demo")
    ids = [json.loads(line)["sku_id"] for line in paths.skus.read_text(encoding="utf-8").splitlines()]
    poison_sku(ids[2])
    issues: list[str] = []
    with WireServer(_answer) as server:
        config = EnrichConfig(llm=f"{server.base_url}#scout", llm_options={"no_cache": True}, workers=4)
        store = CatalogStore(f"sqlite:///{tmp_path / 'poisoned.db'}")
        summary = enrich_to_store(paths.skus, store, config, on_issue=issues.append)
    assert (summary.skus_processed, summary.skus_failed) == (19, 1)
    assert sorted(r["sku_id"] for r in store.table("sku_runs")) == sorted(ids[:2] + ids[3:])
    (failed,) = [i for i in issues if "not stored" in i]
    assert failed.startswith(f"{paths.skus}:3: {ids[2]!r}: not stored: ")
    assert "int" in failed.lower()  # the database driver's own message crossed back
    store.close()


def test_an_outcome_crosses_processes_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``pack`` / ``unpack`` (results as one JSON document between a worker process and the writer) give
    back an equal outcome: results with located quotes, usage, issues and review sources."""
    import pickle

    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.pipeline import build_components
    from groundtrace.catalog.store.runner import pack, unpack
    from groundtrace.catalog.store.sku_step import process_one

    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    paths = write_demo_catalog(tmp_path / "demo")
    skus = [SKU.model_validate_json(line) for line in paths.skus.read_text(encoding="utf-8").splitlines()]
    with WireServer(_answer) as server:
        comp = build_components(EnrichConfig(llm=f"{server.base_url}#scout", llm_options={"no_cache": True}))
        outcomes = [process_one(sku, comp, measure_usage=True) for sku in skus]
    assert any(r.candidate.evidence for o in outcomes for r in o.results)
    for outcome in outcomes:
        assert unpack(pickle.loads(pickle.dumps(pack(outcome)))) == outcome


def test_a_worker_process_that_cannot_start_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """A worker whose components cannot be built reports why; the parent raises it (and stops the rest)."""
    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.store.runner import _sharded_async

    sku = SKU.model_validate({"sku_id": "x1", "title": "Oat bar", "category": "snacks"})
    config = EnrichConfig(
        templates=tmp_path / "missing-templates.yaml", llm="http://127.0.0.1:9/v1#m", workers=2
    )
    with pytest.raises(RuntimeError, match="an LLM worker process failed: .*missing-templates"):
        list(_sharded_async([sku, sku], config, 2))


@pytest.mark.slow
def test_cli_llm_processes_gives_the_results_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from groundtrace.cli import app

    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    paths = write_demo_catalog(tmp_path / "demo")
    results = []
    with WireServer(_answer) as server:
        for n in (1, 2):
            monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / f"cache-{n}"))  # no answer reused
            db = f"sqlite:///{tmp_path / f'p{n}.db'}"
            args = ["catalog", "enrich", str(paths.skus), "--db", db, "--llm", f"{server.base_url}#scout"]
            res = CliRunner().invoke(
                app, [*args, "--workers", "4", "--llm-processes", str(n), "--no-progress"]
            )
            assert res.exit_code == 0, res.output
            assert len(server.requests) == 20 * n  # every SKU asked the server, in both runs
            store = CatalogStore(db)
            results.append(_results(store))
            store.close()
    assert results[0]["decisions"] and results[0] == results[1]


def test_the_store_process_writes_full_batches_in_order_then_the_last_round_eagerly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer pipelined to the store-writer process: at most one batch in the child at a time, every
    batch before the last round of SKUs a full ``batch_size``, each outcome written once and in the order
    it arrived; in the last round (``eager_after``) whatever waits goes as soon as the child is idle —
    never more than ``batch_size`` at once — and the run's summary counts every SKU."""
    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.pipeline import build_components
    from groundtrace.catalog.store import runner
    from groundtrace.catalog.store.store import SkuOutcome

    store = CatalogStore(f"sqlite:///{tmp_path / 'pipelined.db'}")
    comp = build_components(EnrichConfig())
    options = StoreRunOptions(batch_size=8)
    run = store.start_run({"test": "pipelined"}, name="p", engine="async:llm", model=None, judge="rule")
    sent: list[list[str]] = []
    in_child: list[int] = []
    send = runner.StoreProcess.send_batch

    def record(self: Any, run: Any, outcomes: list[SkuOutcome], **kw: Any) -> None:
        in_child.append(len(sent) - len(received))  # batches sent and not yet answered
        sent.append([o.sku.sku_id for o in outcomes])
        send(self, run, outcomes, **kw)

    received: list[int] = []
    receive = runner.StoreProcess.receive

    def answer(self: Any) -> Any:
        received.append(1)
        return receive(self)

    monkeypatch.setattr(runner.StoreProcess, "send_batch", record)
    monkeypatch.setattr(runner.StoreProcess, "receive", answer)
    ids = [f"sku-{i:03d}" for i in range(45)]
    summary = runner.StoreRunSummary(run_id=run.id, run_name=run.name, mode="async")
    with runner.StoreProcess(store.url) as target:
        writer = runner._Writer(target, run, options, comp, summary, lambda _t: None, None, measured=True)
        writer.eager_after = 37
        for sku_id in ids:
            sku = SKU.model_validate({"sku_id": sku_id, "title": "Oat bar", "category": "snacks"})
            writer.add(SkuOutcome(sku=sku))
        writer.flush()
    assert [i for batch in sent for i in batch] == ids  # each once, in order
    assert set(in_child) == {0}  # never a second batch while one is being written
    full = [batch for batch in sent if ids.index(batch[-1]) < 37]
    assert full and all(len(batch) == 8 for batch in full)
    assert all(1 <= len(batch) <= 8 for batch in sent)
    assert summary.skus_processed == 45
    assert sorted(r["sku_id"] for r in store.table("sku_runs")) == ids
    store.close()
