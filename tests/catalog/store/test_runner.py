"""The batch runner with an LLM over the OpenAI wire (threads, bounded), and the CLI around the store."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.runner import StoreRunOptions, choose_mode, enrich_to_store
from groundtrace.cli import app
from groundtrace.core.llm.wire_server import WireServer


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    paths = write_demo_catalog(tmp_path_factory.mktemp("demo"))
    small = paths.root / "small.jsonl"
    small.write_text(
        "\n".join(paths.skus.read_text(encoding="utf-8").splitlines()[:6]) + "\n", encoding="utf-8"
    )
    return paths, small


def _scout_answer(request: dict[str, Any]) -> str:
    """Every attribute not found (the Scout's contract), so every SKU completes."""
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    slugs = re.search(r"slugs: (.*)\.$", user).group(1).split(", ")  # type: ignore[union-attr]
    return json.dumps(
        {
            "identity": {"matched_brand": None, "matched_size": None, "confidence": 0.5},
            "attributes": {s: {"status": "not_found", "value": None} for s in slugs},
        }
    )


@pytest.mark.slow
def test_llm_run_is_bounded_and_a_rerun_makes_zero_llm_calls(
    store_url: str, small: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    _, skus = small
    store = CatalogStore(store_url)
    with WireServer(_scout_answer) as server:
        config = EnrichConfig(llm=f"{server.base_url}#scout", llm_options={"no_cache": True}, workers=3)
        assert choose_mode(config, StoreRunOptions()) == "async"
        first = enrich_to_store(skus, store, config)
        calls = len(server.requests)
        assert first.skus_processed == 6 and first.skus_failed == 0
        assert calls >= 6 and first.llm_calls == calls
        assert 1 <= server.max_in_flight <= 3
        (run,) = store.runs()
        assert run["llm_calls"] == calls and run["prompt_tokens"] > 0 and run["model"] == config.llm
        tables = {
            name: store.table(name) for name in ("decisions", "audit_log", "sku_runs", "published_values")
        }
        again = enrich_to_store(skus, store, config)
        assert len(server.requests) == calls  # not one request on the rerun (no response cache involved)
        assert (again.skus_unchanged, again.skus_processed, again.llm_calls, again.published) == (6, 0, 0, 0)
        assert {name: store.table(name) for name in tables} == tables


@pytest.mark.slow
def test_cli_enrich_export_evaluate_status(small: tuple, tmp_path: Path) -> None:
    paths, skus = small
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    up = runner.invoke(app, ["catalog", "db", "upgrade", "--db", db])
    assert up.exit_code == 0 and "schema empty -> 0004" in up.output
    common = ["--feed", str(paths.feed), "--corpus", str(paths.corpus), "--no-progress"]
    first = runner.invoke(app, ["catalog", "enrich", str(skus), "--db", db, "--run-name", "nightly", *common])
    assert first.exit_code == 0, first.output
    assert "run nightly (id 1, inline): 6 SKUs read, 0 unchanged (skipped), 6 processed" in first.output
    again = runner.invoke(app, ["catalog", "enrich", str(skus), "--db", db, "--run-name", "nightly", *common])
    assert "6 unchanged (skipped), 0 processed" in again.output
    out = tmp_path / "export.jsonl"
    exported = runner.invoke(app, ["catalog", "export", "--db", db, "--out", str(out)])
    assert exported.exit_code == 0 and out.exists()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert f"{len(rows)} rows -> {out}" in exported.output and {r["run"] for r in rows} == {"nightly"}
    report_json, report_html = tmp_path / "eval.json", tmp_path / "eval.html"
    evaluated = runner.invoke(
        app,
        ["catalog", "evaluate", "--db", db, "--gold", str(paths.gold), "--json", str(report_json)]
        + ["--html", str(report_html)],
    )
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(report_json.read_text(encoding="utf-8"))
    (row,) = report["comparison"]
    assert row["run"] == "nightly" and row["coverage"] is not None
    assert set(report["runs"][0]["ablation"]) == {"four_way", "binary"}
    assert "<table>" in report_html.read_text(encoding="utf-8")
    status = runner.invoke(app, ["catalog", "db", "status", "--db", db])
    assert "nightly [finished]" in status.output and "6 SKUs done, 0 failed" in status.output
    clash = runner.invoke(
        app, ["catalog", "enrich", str(skus), "--db", db, "--run-name", "nightly", "--no-progress"]
    )
    assert clash.exit_code == 2 and "was made with other options" in clash.output
    both = runner.invoke(
        app, ["catalog", "enrich", str(skus), "--db", db, "--out", str(tmp_path / "x.jsonl")]
    )
    assert both.exit_code == 2 and "exactly one of --out FILE or --db URL" in both.output
    bad = runner.invoke(app, ["catalog", "export", "--db", "nonsense", "--out", str(out)])
    assert bad.exit_code == 2 and "not a database URL" in bad.output


def test_the_llm_clients_bound_follows_workers() -> None:
    from groundtrace.catalog.store.runner import with_llm_concurrency

    wide = with_llm_concurrency(EnrichConfig(llm="http://127.0.0.1:1/v1#m", workers=32))
    assert wide.llm_options == {"concurrency": 32}
    kept = EnrichConfig(llm="http://127.0.0.1:1/v1#m", workers=32, llm_options={"concurrency": 4})
    assert with_llm_concurrency(kept).llm_options == {"concurrency": 4}
    assert with_llm_concurrency(EnrichConfig(workers=32)).llm_options == {}  # offline: no client


def test_run_threads_bounds_the_skus_in_flight_and_raises_what_emit_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    import time

    from groundtrace.catalog.model import SKU
    from groundtrace.catalog.store import runner
    from groundtrace.catalog.store.store import SkuOutcome

    lock = threading.Lock()
    state = {"now": 0, "most": 0}

    def fake_process_one(sku: SKU, comp: Any) -> SkuOutcome:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.01)
        with lock:
            state["now"] -= 1
        return SkuOutcome(sku=sku)

    monkeypatch.setattr(runner, "process_one", fake_process_one)
    skus = [SKU.model_validate({"sku_id": f"s{i}", "title": "Oat bar", "category": "x"}) for i in range(40)]
    seen: list[str] = []
    runner.run_threads(skus, None, 4, lambda o: seen.append(o.sku.sku_id))  # type: ignore[arg-type]
    assert sorted(seen) == sorted(s.sku_id for s in skus) and state["most"] == 4

    def broken(outcome: SkuOutcome) -> None:
        raise OSError("the writer's queue is gone")

    with pytest.raises(OSError, match="queue is gone"):
        runner.run_threads(skus, None, 4, broken)  # type: ignore[arg-type]


def test_the_heap_is_frozen_only_while_a_run_lasts() -> None:
    import gc

    from groundtrace.catalog.store.runner import frozen_heap

    before = gc.get_freeze_count()
    with frozen_heap():
        assert gc.get_freeze_count() > before
    assert gc.get_freeze_count() == 0
    with pytest.raises(KeyError), frozen_heap():
        raise KeyError("a failing run")
    assert gc.get_freeze_count() == 0
