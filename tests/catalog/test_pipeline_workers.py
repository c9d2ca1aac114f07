"""How ``run_enrich`` runs and writes: ``workers=1`` in the calling thread, an offline run's workers as
processes (same output as one worker), SKU blocks appended in fsynced batches (whole blocks only)."""

from __future__ import annotations

import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig, cpu_bound, run_enrich
from groundtrace.catalog.pipeline import batch as pipeline  # the batch runner module (issue 25 split)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, EnrichConfig, Path]:
    paths = write_demo_catalog(tmp_path_factory.mktemp("demo"))
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus)
    reference = paths.root / "reference.jsonl"
    run_enrich(paths.skus, reference, config)
    return paths, config, reference


def test_one_worker_runs_in_the_calling_thread(demo: tuple, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    paths, config, reference = demo
    threads: set[int] = set()
    original = pipeline.process_sku

    def recording(sku, comp):  # type: ignore[no-untyped-def]
        threads.add(threading.get_ident())
        return original(sku, comp)

    monkeypatch.setattr(pipeline, "process_sku", recording)
    out = tmp_path / "out.jsonl"
    summary = run_enrich(paths.skus, out, config)
    assert threads == {threading.get_ident()}  # a profiler of this thread sees the engine
    assert summary.skus_processed == summary.skus_read > 0
    assert out.read_bytes() == reference.read_bytes()


def test_offline_workers_are_processes_with_the_same_output(demo: tuple, tmp_path: Path) -> None:
    paths, config, reference = demo
    two = config.model_copy(update={"workers": 2})
    assert cpu_bound(two) and not cpu_bound(two.model_copy(update={"llm": "http://127.0.0.1:9/v1#m"}))
    with pipeline._executor(two, processes=True) as pool:
        assert isinstance(pool, ProcessPoolExecutor)
    with pipeline._executor(two, processes=False) as pool:
        assert isinstance(pool, ThreadPoolExecutor)
    out = tmp_path / "out.jsonl"
    summary = run_enrich(paths.skus, out, two)
    assert summary.skus_failed == 0 and summary.skus_processed == summary.skus_read
    assert out.read_bytes() == reference.read_bytes()


def test_batch_writer_syncs_whole_blocks_per_batch(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    syncs: list[int] = []
    real_fsync = pipeline.os.fsync
    path = tmp_path / "out.jsonl"

    def counting(fd: int) -> None:
        syncs.append(path.stat().st_size)
        real_fsync(fd)

    monkeypatch.setattr(pipeline.os, "fsync", counting)
    blocks = [f'{{"sku": {i}}}\n{{"sku": {i}}}\n'.encode() for i in range(130)]
    with path.open("ab") as fh:
        writer = pipeline._BatchWriter(fh, max_blocks=64, max_seconds=float("inf"))
        for block in blocks:
            writer.add(block)
        assert len(syncs) == 2  # after block 64 and block 128; two blocks still pending
        writer.flush()
        writer.flush()  # nothing pending: no extra write
    sizes = [len(b"".join(blocks[:n])) for n in (64, 128, 130)]
    assert syncs == sizes  # each sync ends on a block boundary
    assert path.read_bytes() == b"".join(blocks)


def test_a_stopped_run_keeps_the_blocks_it_reported(demo: tuple, tmp_path: Path) -> None:
    """``progress`` raising stops the run; every SKU reported to it is on disk and a rerun completes."""
    paths, config, reference = demo
    out = tmp_path / "out.jsonl"
    seen: list[str] = []

    def stop_after_three(sku, n):  # type: ignore[no-untyped-def]
        seen.append(sku.sku_id)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_enrich(paths.skus, out, config, progress=stop_after_three)
    written = {line.split('"sku_id":"')[1].split('"')[0] for line in out.read_text().splitlines()}
    assert written == set(seen)  # the three reported blocks were synced by the stop, nothing else
    summary = run_enrich(paths.skus, out, config)
    assert summary.skus_done_before == 3
    assert out.read_bytes() == reference.read_bytes()
