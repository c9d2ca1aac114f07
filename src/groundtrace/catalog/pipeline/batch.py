"""Stage 3 — the JSONL batch runner: SKUs → Scout → Judge → write policy → one AttributeResult JSONL line
per (SKU, attribute).

``run_enrich(skus_path, out_path, config) -> EnrichSummary``:

* **input** — SKU records as JSONL (one :class:`~groundtrace.catalog.model.SKU` per line), CSV or Parquet
  (columns = SKU fields; ``specs`` / ``images`` may hold JSON; any other column becomes a spec; Parquet
  rows are numbered from 1). A malformed line is reported as ``file:line: message`` and skipped; the rest is
  processed. A repeated sku_id is reported and processed once.
* **offline by default** — built-in templates, the offline extractive engine, the rule judge and the
  built-in policy; ``llm`` switches the Scout to the LLM engine, ``judge="llm"`` the Judge.
* **resumable** — SKU blocks are appended whole, in input order, in batches (one ``write`` + flush +
  fsync per 64 SKUs or per second, and at the end; a stopped run syncs what it has). On
  start, the results file is scanned: SKUs with all their template attributes present are skipped; a
  trailing partial block (a run killed mid-write: a broken last line or fewer lines than the SKU's
  template has) is truncated away and redone. A killed run therefore resumes with no lost and no
  duplicated lines. A damaged block in the *middle* (an unreadable or missing line) is detected too: the
  file is rewritten (temp file + rename) without that block, which is reported and redone.
* **one writer** — ``OUT.lock`` (:class:`~groundtrace.core.files.lock.WriterLock`) refuses a second run on
  the same ``out_path`` with a one-line error naming the lock and the holder's pid.
* **failures are failures** — a SKU whose processing raises (an LLM or VLM transport failure after the
  client's retries, ``LLMError``) is reported as ``sku_id: error``, counted in ``skus_failed`` and written
  *nothing*, so a rerun retries it; ``catalog enrich`` exits 1 when any SKU failed (``--allow-failures``
  opts out). Issues of one SKU (a refused image path) are reported as ``sku_id: issue``.
* **bounded concurrency** — at most ``workers`` SKUs in flight; results are written in input order so
  output is deterministic whatever ``workers`` is. ``workers=1`` runs in the calling thread (``python -m
  cProfile`` sees the engine); more workers are processes for an offline run (no LLM/VLM, rule judge:
  CPU-bound, each process builds its components from the config) and threads otherwise (LLM calls wait
  on the network) or when the caller passes ready-made ``components``.
* a SKU without a template has nothing to enrich (counted as ``no_template``).
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Self

from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline.config import EnrichConfig
from groundtrace.catalog.pipeline.factory import Components, build_components
from groundtrace.catalog.pipeline.resume import scan_results
from groundtrace.catalog.pipeline.sku_files import read_skus
from groundtrace.catalog.pipeline.step import SkuOutcome, process_sku
from groundtrace.catalog.pipeline.summary import EnrichSummary, tally
from groundtrace.catalog.run_meta import check_or_record, run_fingerprint
from groundtrace.core.files.lock import WriterLock
from groundtrace.core.llm.base import Usage

log = logging.getLogger(__name__)


ProgressFn = Callable[[SKU, int], None]


def run_enrich(
    skus_path: Path,
    out_path: Path,
    config: EnrichConfig | None = None,
    *,
    components: Components | None = None,
    progress: ProgressFn | None = None,
    on_issue: Callable[[str], None] | None = None,
) -> EnrichSummary:
    """Enrich every SKU of ``skus_path`` not yet in ``out_path`` (module docstring).

    ``progress(sku, n_lines)`` is called after each SKU is written (it may raise to stop the run:
    everything written so far stays consistent)."""
    config = config or EnrichConfig()
    comp = components or build_components(config)
    summary = EnrichSummary()
    skus, issue = open_batch(Path(skus_path), comp, summary.issues, on_issue)
    summary.skus_read = len(skus)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with WriterLock(out_path):  # one writer per --out (LockHeldError names the holder)
        # an offline run with its own components: workers > 1 are processes (each builds its components)
        processes = components is None and cpu_bound(config)
        _run_locked(skus, out_path, config, comp, summary, issue, progress, processes)
    return summary


def open_batch(
    skus_path: Path, comp: Components, issues: list[str], on_issue: Callable[[str], None] | None
) -> tuple[list[SKU], Callable[[str], None]]:
    """The opening both batch drivers share (this runner and the store's ``enrich_to_store``): an
    ``issue(text)`` reporter that appends to ``issues`` and calls ``on_issue``; the components' errors
    reported through it, then the SKUs of ``skus_path`` read with every malformed record reported.
    Returns ``(skus, issue)``."""

    def issue(text: str) -> None:
        issues.append(text)
        if on_issue is not None:
            on_issue(text)

    for text in comp.errors:
        issue(text)
    skus, problems = read_skus(skus_path)
    for text in problems:
        issue(text)
    return skus, issue


def _run_locked(
    skus: list[SKU],
    out_path: Path,
    config: EnrichConfig,
    comp: Components,
    summary: EnrichSummary,
    issue: Callable[[str], None],
    progress: ProgressFn | None,
    processes: bool = False,
) -> None:
    # before the file is touched: a resume must use the options the file was written with
    check_or_record(out_path, run_fingerprint(config, comp.templates, comp.policy))
    done, previous, truncated, scan_issues = scan_results(out_path, comp.templates)
    for text in scan_issues:
        issue(text)
    summary.truncated_bytes = truncated
    tally(summary, previous)
    todo = [s for s in skus if s.sku_id not in done]
    summary.skus_done_before = len(skus) - len(todo)
    usage_before = _usage_total(comp.llm_clients)
    try:
        _run_window(todo, comp, config, summary, out_path, issue, progress, processes)
    finally:
        if comp.llm_clients:
            summary.llm_usage = _usage_minus(_usage_total(comp.llm_clients), usage_before)
            summary.llm_unpriced_models = sorted(
                {
                    m
                    for c in comp.llm_clients
                    for m in getattr(getattr(c, "ledger", None), "unpriced_models", ())
                }
            )


def _usage_total(clients: list[Any]) -> Usage:
    total = Usage()
    for client in clients:
        total = total + client.usage()
    return total


def _usage_minus(after: Usage, before: Usage) -> Usage:
    """``after - before`` field by field: the usage of this run when the clients served earlier runs."""
    return Usage(**{name: getattr(after, name) - getattr(before, name) for name in Usage.model_fields})


def _run_window(
    todo: list[SKU],
    comp: Components,
    config: EnrichConfig,
    summary: EnrichSummary,
    out_path: Path,
    issue: Callable[[str], None],
    progress: ProgressFn | None,
    processes: bool = False,
) -> None:
    """Process ``todo`` with at most ``config.workers`` SKUs in flight, appending each SKU's lines in
    order (:class:`_BatchWriter`). ``workers == 1`` runs in the calling thread (profilers see it);
    ``processes`` runs the SKUs in a process pool whose workers build their own components from
    ``config``, else threads."""
    with out_path.open("ab") as fh, _executor(config, processes) as pool:
        writer = _BatchWriter(fh)
        window: deque[tuple[SKU, Future[SkuOutcome]]] = deque()
        it = iter(todo)
        config_json = config.model_dump_json() if processes else ""

        def fill() -> None:
            while len(window) < config.workers:
                sku = next(it, None)
                if sku is None:
                    return
                if processes:
                    window.append((sku, pool.submit(_process_in_worker, config_json, sku)))
                else:
                    window.append((sku, pool.submit(process_sku, sku, comp)))

        fill()
        try:
            while window:
                sku, future = window.popleft()
                try:
                    results, calls, sku_issues, _ = future.result()  # review_sources: the store only
                except Exception as exc:  # nothing written: the SKU is not done and a rerun retries it
                    summary.skus_failed += 1
                    summary.failed_skus.append(sku.sku_id)
                    first = str(exc).splitlines()[0][:300] if str(exc) else ""
                    name = type(exc).__name__
                    issue(f"{sku.sku_id}: failed, not written (retried on resume): {name}: {first}")
                    log.debug("SKU %s failed", sku.sku_id, exc_info=True)
                    fill()
                    continue
                for text in sku_issues:
                    issue(f"{sku.sku_id}: {text}")
                summary.llm_calls += calls
                if not results:
                    summary.no_template += 1
                else:
                    writer.add("".join(r.model_dump_json() + "\n" for r in results).encode("utf-8"))
                    summary.lines_written += len(results)
                    tally(summary, results)
                summary.skus_processed += 1
                if progress is not None:
                    progress(sku, len(results))
                fill()
        finally:
            for _, future in window:
                future.cancel()
            writer.flush()  # complete blocks only: a stopped run stays resumable


class _BatchWriter:
    """Appends SKU blocks with one ``write`` + flush + fsync per batch: when ``max_blocks`` blocks are
    pending or ``max_seconds`` have passed since the last sync, and on :meth:`flush`. Only whole blocks are
    written, in order, so a killed run leaves complete blocks plus at most one torn block at the end (cut
    away and redone by :func:`scan_results`); unsynced blocks are simply redone on resume."""

    def __init__(self, fh: Any, max_blocks: int = 64, max_seconds: float = 1.0) -> None:
        self.fh, self.max_blocks, self.max_seconds = fh, max_blocks, max_seconds
        self.pending: list[bytes] = []
        self.last_sync = time.monotonic()

    def add(self, block: bytes) -> None:
        self.pending.append(block)
        if len(self.pending) >= self.max_blocks or time.monotonic() - self.last_sync >= self.max_seconds:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.fh.write(b"".join(self.pending))
            self.pending = []
            self.fh.flush()
            os.fsync(self.fh.fileno())
        self.last_sync = time.monotonic()


class _InlineExecutor:
    """``submit`` runs the call at once in the calling thread and returns its finished Future."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the Future, as a pool does
            future.set_exception(exc)
        return future

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _executor(config: EnrichConfig, processes: bool) -> Any:
    if config.workers == 1:
        return _InlineExecutor()
    if processes:
        return ProcessPoolExecutor(
            max_workers=config.workers, initializer=worker_components, initargs=(config.model_dump_json(),)
        )
    return ThreadPoolExecutor(max_workers=config.workers)


def cpu_bound(config: EnrichConfig) -> bool:
    """True for an offline run (no LLM, no VLM, the rule judge): CPU-bound, so ``workers > 1`` are
    processes; runs that wait on LLM endpoints keep threads."""
    return not (config.llm or config.vlm or config.judge != "rule")


# -- process workers: each builds its components once from the run's config -------------------------------
_WORKER_COMPONENTS: dict[str, Components] = {}


def worker_components(config_json: str) -> Components:
    """This process's components for the run whose :class:`EnrichConfig` is ``config_json``: built on
    first use, then kept (a pool worker builds them once; the store runner's process pool shares this)."""
    comp = _WORKER_COMPONENTS.get(config_json)
    if comp is None:
        comp = build_components(EnrichConfig.model_validate_json(config_json))
        _WORKER_COMPONENTS[config_json] = comp
    return comp


def _process_in_worker(config_json: str, sku: SKU) -> SkuOutcome:
    return process_sku(sku, worker_components(config_json))
