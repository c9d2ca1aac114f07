"""The batch runner behind ``catalog enrich --db``: the enrich pipeline over a SKU file, results into a store.

``enrich_to_store(skus_path, store, config, options) -> StoreRunSummary``:

1. reads the SKUs (malformed records reported as ``file:line: message``, the rest processed);
2. opens the run for the options (``run_fingerprint`` + the store policy; same options = same run, so a
   killed run resumes) and drops every SKU the run already holds with its current content hash — an
   unchanged batch makes 0 LLM calls and 0 writes;
3. runs Scout → Judge → policy per SKU with bounded concurrency, chosen by the work:

   * ``inline`` — one SKU at a time in this process (``workers=1``, offline engine);
   * ``processes`` — the CPU-bound offline engine on ``workers`` processes, each building its own
     components once;
   * ``async`` — LLM-bound work (``--llm`` / ``--vlm`` / ``--judge llm``): ``workers`` threads keep at most
     ``workers`` SKUs in flight, each taking the next SKU when its previous one is done (the LLM clients
     are synchronous; :func:`run_threads`).
     With ``llm_processes = P > 1`` the SKUs in flight are split over P worker processes (each its own
     components, LLM client and threads, ``workers / P`` SKUs in flight, SKUs taken from one shared queue),
     so the CPU of the evidence work (lexicon, quote checks, Judge rules, validation) runs on P cores
     while the calls wait — one process's GIL caps it at ~1 core, which at 64 calls in flight and 300 ms
     latency is less than the work needs (docs/catalog-store.md). Each process has its own adaptive
     rate limit (:mod:`groundtrace.core.llm.limiter`);
   * ``ray`` — Ray tasks, see :mod:`.ray_engine`;

4. this process is the ONE writer: outcomes are buffered and written ``batch_size`` SKUs (or one second's
   worth) per transaction. In ``async`` mode with the SKUs' threads in this process, the transactions
   themselves run in a child process (:class:`StoreProcess`, ``StoreRunOptions.write_process``, on by
   default): the same ``record_batch`` on the same outcomes, without waiting for this process's GIL
   behind the threads in flight; this process hands a batch over and goes on collecting outcomes while
   it is written (one batch in the child at a time), and in the run's last round of SKUs in flight sends
   what waits as soon as the child is idle (:class:`_Writer`), so little is left to write after the last
   SKU. A SKU whose processing raises is recorded as failed with its error (reported,
   retried on the next start) and never stops the batch. Text a backend cannot hold is cleaned by the
   store (:mod:`.clean`) and reported per SKU as ``file:line: sku_id: what was cleaned``; a SKU that
   cannot be stored (an over-long id) is reported the same way and counted as failed. Should a batch's
   transaction still fail, its SKUs are written one per transaction and only the SKU whose write fails is
   reported (``file:line: sku_id: not stored: <database error>``) — one SKU never stops the others.

Per-SKU LLM usage is measured in the worker for ``processes`` and ``ray``; for ``inline`` and ``async``
the clients' ledger is read at each write (exact run totals, per-SKU calls from the pipeline); an
``async`` worker process hands each outcome the change of its ledger since its previous outcome (exact
run totals again).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import queue
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from groundtrace.catalog.model import SKU, AttributeResult
from groundtrace.catalog.pipeline import Components, EnrichConfig, build_components, iter_skus
from groundtrace.catalog.pipeline.batch import open_batch, worker_components
from groundtrace.catalog.run_meta import run_fingerprint
from groundtrace.catalog.store.ray_engine import ray_outcomes
from groundtrace.catalog.store.sku_step import process_one, usage_minus, usage_of
from groundtrace.catalog.store.store import CatalogStore, SkuOutcome, StorePolicy, WriteStats
from groundtrace.core.llm.base import Usage

log = logging.getLogger(__name__)

Mode = Literal["inline", "processes", "async", "ray"]


class StoreRunOptions(BaseModel):
    """How a store run is executed and published (none of it changes a decision except ``policy``)."""

    model_config = ConfigDict(extra="forbid")

    run_name: str | None = Field(default=None, description="Default: run-<config hash>.")
    runner: Literal["local", "ray"] = Field(
        default="local", description="How the SKUs run: local (inline / processes / async) or ray."
    )
    ray_address: str | None = None
    batch_size: int = Field(default=32, ge=1, le=10_000, description="SKUs per write transaction.")
    llm_processes: int = Field(
        default=1,
        ge=1,
        le=64,
        description="LLM-bound runs (async mode): worker processes sharing the SKUs in flight "
        "(1: all in this process).",
    )
    flush_seconds: float = Field(default=1.0, gt=0, description="Longest time an outcome waits unwritten.")
    write_process: bool = Field(
        default=True,
        description="LLM-bound runs (async mode): write the store from a separate process, so the writes "
        "do not wait for this process's GIL behind the threads in flight (a store in memory is written "
        "here).",
    )
    policy: StorePolicy = Field(default_factory=StorePolicy)

    @model_validator(mode="before")
    @classmethod
    def _old_engine_keyword(cls, data: Any) -> Any:
        """``engine=`` (the runner's name before issue 25) → ``runner=``, with a DeprecationWarning."""
        if not isinstance(data, dict) or "engine" not in data:
            return data
        warnings.warn(
            "StoreRunOptions 'engine' is deprecated: it is the runner, now 'runner' (local / ray)",
            DeprecationWarning,
            stacklevel=3,
        )
        data = dict(data)
        data.setdefault("runner", data.pop("engine"))
        return data


class StoreRunSummary(BaseModel):
    """Counts of one ``enrich_to_store`` call."""

    run_id: int
    run_name: str
    mode: str
    skus_read: int = 0
    skus_unchanged: int = 0
    skus_processed: int = 0
    skus_failed: int = 0
    results: int = 0
    published: int = 0
    unchanged_values: int = 0
    kept_approved: int = 0
    kept_filled: int = 0
    queued_for_review: int = 0
    llm_calls: int = 0
    llm_usage: Usage | None = None
    actions: dict[str, int] = Field(default_factory=dict)
    issues: list[str] = Field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            (
                f"run {self.run_name} (id {self.run_id}, {self.mode}): {self.skus_read} SKUs read, "
                f"{self.skus_unchanged} unchanged (skipped), {self.skus_processed} processed, "
                f"{self.skus_failed} failed"
            ),
            f"results: {self.results}; actions: "
            + (", ".join(f"{k} {v}" for k, v in sorted(self.actions.items())) or "-"),
            (
                f"published: {self.published} written, {self.unchanged_values} unchanged, "
                f"{self.kept_approved} kept (human-approved), {self.kept_filled} kept (fill-empty-only); "
                f"{self.queued_for_review} queued for review"
            ),
            f"LLM calls: {self.llm_calls}; issues: {len(self.issues)}",
        ]


def store_fingerprint(config: EnrichConfig, comp: Components, policy: StorePolicy) -> dict[str, Any]:
    """The run identity: the JSONL fingerprint of :mod:`..run_meta` plus the store policy."""
    return {**run_fingerprint(config, comp.templates, comp.policy), "store_policy": policy.model_dump()}


def with_llm_concurrency(config: EnrichConfig) -> EnrichConfig:
    """``config`` whose LLM client allows ``workers`` requests in flight (the clients' own bound defaults
    to 8, which would cap ``--workers 32`` at 8 concurrent LLM calls); an explicit
    ``llm_options["concurrency"]`` is kept."""
    if not config.llm or "concurrency" in config.llm_options or config.workers <= 8:
        return config
    return config.model_copy(update={"llm_options": {**config.llm_options, "concurrency": config.workers}})


def choose_mode(config: EnrichConfig, options: StoreRunOptions) -> Mode:
    if options.runner == "ray":
        return "ray"
    if config.llm or config.vlm or config.judge != "rule":
        return "async"
    return "processes" if config.workers > 1 else "inline"


def enrich_to_store(
    skus_path: Path,
    store: CatalogStore,
    config: EnrichConfig | None = None,
    options: StoreRunOptions | None = None,
    *,
    components: Components | None = None,
    progress: Callable[[SkuOutcome], None] | None = None,
    on_issue: Callable[[str], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> StoreRunSummary:
    """Enrich the SKUs of ``skus_path`` the run does not hold yet into ``store`` (module docstring).

    ``on_start(n_pending)`` is called once the pending SKUs are known; ``progress(outcome)`` after each SKU
    is handed to the writer."""
    config = config or EnrichConfig()
    options = options or StoreRunOptions()
    comp = components or build_components(with_llm_concurrency(config))
    mode = choose_mode(config, options)
    run = store.start_run(
        store_fingerprint(config, comp, options.policy),
        name=options.run_name,
        engine=f"{mode}:{'llm' if config.llm else 'offline'}",
        model=config.llm,
        judge=config.judge,
    )
    summary = StoreRunSummary(run_id=run.id, run_name=run.name, mode=mode)
    skus, issue = open_batch(Path(skus_path), comp, summary.issues, on_issue)
    summary.skus_read = len(skus)
    todo = store.pending(run, skus)
    summary.skus_unchanged = len(skus) - len(todo)
    if on_start is not None:
        on_start(len(todo))
    sharded = mode == "async" and min(options.llm_processes, config.workers) > 1
    separate = (
        mode == "async"
        and not sharded
        and bool(todo)
        and options.write_process
        and StoreProcess.can_serve(store)
    )
    status = "failed"
    try:
        with frozen_heap(), StoreProcess(store.url) if separate else contextlib.nullcontext(store) as target:
            writer = _Writer(
                target,
                run,
                options,
                comp,
                summary,
                issue,
                progress,
                measured=mode in ("processes", "ray") or sharded,
            )
            writer.where = _SkuLines(Path(skus_path))
            # the last round of SKUs in flight: from here on, each goes to the store-writer process as
            # soon as it is idle, so what is left to write after the last SKU is a few SKUs
            writer.eager_after = max(0, len(todo) - config.workers)
            try:
                for outcome in _outcomes(mode, todo, comp, config, options):
                    writer.add(outcome)
                writer.flush()
                status = "finished"
            finally:
                if status != "finished":
                    writer.flush_quietly()
    finally:
        store.finish_run(run, status)
    return summary


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """The objects alive when the run starts (components, templates, lexicons, the store's metadata) are
    left out of the cycle collector's passes until it ends (``gc.freeze`` / ``gc.unfreeze``): they live
    as long as the run, and every full collection walked them all — 0.4 of 3.4 ms CPU per LLM Scout SKU,
    0.13 with them frozen (bench_store ``--section cpu`` set-up). Objects made during the run are
    collected as before; after it the frozen ones go back to the oldest generation, so a cycle among
    them is collected then. Worker processes forked inside inherit the frozen heap (the ``gc.freeze``
    advice for forking servers)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _outcomes(
    mode: Mode, todo: list[SKU], comp: Components, config: EnrichConfig, options: StoreRunOptions
) -> Iterator[SkuOutcome]:
    if not todo:
        return iter(())
    if mode == "inline":
        return (process_one(sku, comp) for sku in todo)
    if mode == "processes":
        return _process_pool(todo, config)
    if mode == "async":
        processes = min(options.llm_processes, config.workers)
        if processes > 1:
            return _sharded_async(todo, with_llm_concurrency(config), processes)
        return _async_outcomes(todo, comp, config.workers)

    return ray_outcomes(todo, config, address=options.ray_address, workers=config.workers)


# -- processes ---------------------------------------------------------------------------------------------
def _worker_process(config_json: str, sku: SKU) -> SkuOutcome:
    return process_one(sku, worker_components(config_json), measure_usage=True)


def _process_pool(todo: list[SKU], config: EnrichConfig) -> Iterator[SkuOutcome]:
    config_json = config.model_dump_json()
    with ProcessPoolExecutor(
        max_workers=config.workers, initializer=worker_components, initargs=(config_json,)
    ) as pool:
        yield from bounded(
            todo, lambda sku: pool.submit(_worker_process, config_json, sku), window=2 * config.workers
        )


def bounded(
    items: Iterable[SKU], submit: Callable[[SKU], Future[SkuOutcome]], window: int
) -> Iterator[SkuOutcome]:
    """Outcomes as they complete, with at most ``window`` submitted and unfinished."""
    it = iter(items)
    pending: set[Future[SkuOutcome]] = set()
    try:
        while True:
            while len(pending) < window:
                sku = next(it, None)
                if sku is None:
                    break
                pending.add(submit(sku))
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    finally:
        for future in pending:
            future.cancel()


# -- LLM-bound: SKUs in flight on threads ------------------------------------------------------------------
def _async_outcomes(todo: list[SKU], comp: Components, concurrency: int) -> Iterator[SkuOutcome]:
    """Collect the outcomes of :func:`run_threads` (written as they arrive by the caller's writer)."""
    out: queue.Queue[SkuOutcome | BaseException | None] = queue.Queue(maxsize=4 * concurrency)
    stop = threading.Event()

    def main() -> None:
        try:
            run_threads(todo, comp, concurrency, out.put, stop)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread
            out.put(exc)
        finally:
            out.put(None)

    thread = threading.Thread(target=main, name="enrich-llm", daemon=True)
    thread.start()
    try:
        while (item := out.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # drain so no worker is ever blocked on a full queue
            try:
                out.get(timeout=0.1)
            except queue.Empty:
                pass
        thread.join()


def run_threads(
    todo: Iterable[SKU],
    comp: Components,
    concurrency: int,
    emit: Callable[[SkuOutcome], None],
    stop: Any = None,
) -> None:
    """At most ``concurrency`` SKUs in flight: as many worker threads, each taking the next SKU of
    ``todo`` (under a lock; ``todo`` may block, e.g. a queue) until it is exhausted or ``stop`` is set,
    and passing each outcome to ``emit`` as soon as it is ready. Returns when every worker has ended;
    raises the first error a worker met (``process_one`` itself never raises; ``emit`` may).

    Plain threads, no event loop: the LLM clients are synchronous, so a loop only added a hand-over per
    SKU (a future, its callback and a wake-up of the loop, then another thread to emit): ~0.5 ms of CPU
    per SKU at 64 in flight (a call-only Scout, 2.1-2.7 -> 1.4-2.0 ms, the two runners interleaved)."""
    it = iter(todo)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            while not (stop is not None and stop.is_set()) and not errors:
                with lock:
                    sku = next(it, None)
                if sku is None:
                    return
                emit(process_one(sku, comp))
        except BaseException as exc:  # noqa: BLE001 - re-raised by run_threads
            errors.append(exc)

    workers = [
        threading.Thread(target=work, name=f"enrich-{i}", daemon=True) for i in range(max(1, concurrency))
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]


# -- LLM-bound in several processes -------------------------------------------------------------------------
def _shard_main(config_json: str, concurrency: int, inbox: Any, outbox: Any) -> None:
    """One worker process of :func:`_sharded_async`: its own components, ``concurrency`` SKUs in flight,
    SKUs (JSON) from ``inbox`` until ``None``; each outcome carries the change of this process's LLM
    ledger since its previous outcome. Ends with ``None`` in ``outbox`` (or the error's text)."""
    try:
        comp = build_components(EnrichConfig.model_validate_json(config_json))
        gc.freeze()  # this process only runs SKUs from here on (see frozen_heap)
        lock = threading.Lock()
        mark = [usage_of(comp.llm_clients)]

        def emit(outcome: SkuOutcome) -> None:
            with lock:
                now = usage_of(comp.llm_clients)
                outcome.usage, mark[0] = usage_minus(now, mark[0]), now
                outbox.put(pack(outcome))

        skus = (SKU.model_validate_json(raw) for raw in iter(inbox.get, None))
        run_threads(skus, comp, concurrency, emit)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        outbox.put(f"{type(exc).__name__}: {exc}")
        return
    outbox.put(None)


_RESULTS: TypeAdapter[list[AttributeResult]] = TypeAdapter(list[AttributeResult])


def pack(outcome: SkuOutcome) -> tuple[Any, ...]:
    """``outcome`` as it crosses from a worker process to the writer: its results as one JSON document
    (pydantic's own serializer and parser, ~0.2 ms both ways for a Scout SKU, where pickling the result
    models cost ~1 ms), the rest as it is. :func:`unpack` restores an equal outcome."""
    o = outcome
    return (o.sku, _RESULTS.dump_json(o.results), o.llm_calls, o.usage, o.error, o.issues, o.review_sources)


def unpack(item: tuple[Any, ...]) -> SkuOutcome:
    """The :class:`SkuOutcome` that :func:`pack` sent."""
    sku, results, llm_calls, usage, error, issues, review_sources = item
    return SkuOutcome(
        sku=sku,
        results=_RESULTS.validate_json(results),
        llm_calls=llm_calls,
        usage=usage,
        error=error,
        issues=issues,
        review_sources=review_sources,
    )


def shard_sizes(concurrency: int, processes: int) -> list[int]:
    """SKUs in flight per process: ``concurrency`` split as evenly as possible (sizes differ by <= 1)."""
    return [concurrency // processes + (i < concurrency % processes) for i in range(processes)]


def _sharded_async(todo: list[SKU], config: EnrichConfig, processes: int) -> Iterator[SkuOutcome]:
    """Outcomes of ``todo`` from ``processes`` worker processes (:func:`_shard_main`), as they arrive.

    The workers start with the platform's default method (fork on Linux), like the ``processes`` mode:
    call it from a process that has not started a Ray driver or another gRPC client (a forked copy of one
    hangs)."""
    ctx = multiprocessing.get_context()
    inbox: Any = ctx.Queue()
    outbox: Any = ctx.Queue()
    for sku in todo:
        inbox.put(sku.model_dump_json())
    for _ in range(processes):
        inbox.put(None)
    config_json = config.model_dump_json()
    workers = [
        ctx.Process(target=_shard_main, args=(config_json, size, inbox, outbox), daemon=True)
        for size in shard_sizes(config.workers, processes)
    ]
    for worker in workers:
        worker.start()
    running = processes
    try:
        while running:
            try:
                item = outbox.get(timeout=1.0)
            except queue.Empty:
                dead = [w for w in workers if not w.is_alive() and w.exitcode not in (0, None)]
                if dead:
                    raise RuntimeError(f"an LLM worker process died (exit code {dead[0].exitcode})") from None
                continue
            if item is None:
                running -= 1
            elif isinstance(item, str):
                raise RuntimeError(f"an LLM worker process failed: {item}")
            else:
                yield unpack(item)
    finally:
        inbox.cancel_join_thread()  # SKUs left unread (an error) must not hold this process at exit
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            worker.join()


# -- the store's writes in their own process ---------------------------------------------------------------
class RemoteWriteError(Exception):
    """A batch write that failed in the :class:`StoreProcess`: its first line as the writer reports it
    (the database error itself stays in that process)."""

    def __init__(self, first_line: str) -> None:
        super().__init__(first_line)
        self.first_line = first_line


def _write_loop(url: str, conn: Any) -> None:
    """The :class:`StoreProcess` side: open the store at ``url`` (already migrated by the parent), then
    answer each ``(run, packed outcomes, policy, usage)`` with ``(True, WriteStats)`` or ``(False, first
    line of the error)`` until ``None``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which then ends this loop
    store = CatalogStore(url, migrate=False)
    try:
        while (job := _next_job(conn)) is not None:
            run, packed, policy, usage = job
            try:
                stats = store.record_batch(run, [unpack(p) for p in packed], policy=policy, usage=usage)
            except Exception as exc:  # noqa: BLE001 - handed to the writer, which narrows it to a SKU
                conn.send((False, _first_line(exc)))
            else:
                conn.send((True, stats))
    finally:
        store.close()


def _next_job(conn: Any) -> Any:
    """The next job from the parent, or ``None`` when it says so or is gone."""
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


class StoreProcess:
    """``record_batch`` of a store, run in a child process: the one writer's database work (SQLAlchemy
    parameter processing, JSON columns, SQLite) leaves this process, where 64 threads in flight took
    turns with it for the GIL. Measured in the LLM store run at c = 64 (docs/catalog-store.md, load 4-5):
    the writer thread's wall time was ~3.5× its CPU time (1.0 s CPU, 3.5 s wall for 512 SKUs), it fell
    behind the SKUs, and its backlog was the run's last 0.6-1.3 s. Here this process only packs each
    outcome (:func:`pack`, its results as one JSON document: ~0.1 ms CPU against ~1-2 ms for the write)
    and reads the answer when it is ready (:meth:`send_batch` / :meth:`answered` / :meth:`receive`;
    :meth:`record_batch` waits, without the GIL).

    Same decisions and the same store contents: the child runs the store's own ``record_batch`` on the
    outcomes :func:`unpack` restores; a batch that fails raises :class:`RemoteWriteError` with the
    database error's first line, and the writer narrows it to single SKUs as before. The child is forked
    (like the ``llm_processes`` workers; see :func:`_sharded_async` for the caveat) and told to stop
    when the context ends (:meth:`__exit__`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._proc: Any = None

    @staticmethod
    def can_serve(store: CatalogStore) -> bool:
        """A store another process can open: not SQLite in memory."""
        url = store.engine.url
        return not (url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"))

    def __enter__(self) -> Self:
        ctx = multiprocessing.get_context()
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_write_loop, args=(self.url, child), daemon=True, name="store-writer")
        self._proc.start()
        child.close()
        return self

    def record_batch(
        self, run: Any, outcomes: list[SkuOutcome], *, policy: StorePolicy, usage: Usage | None
    ) -> WriteStats:
        """:meth:`CatalogStore.record_batch` in the child process."""
        self.send_batch(run, outcomes, policy=policy, usage=usage)
        return self.receive()

    def send_batch(
        self, run: Any, outcomes: list[SkuOutcome], *, policy: StorePolicy, usage: Usage | None
    ) -> None:
        """Start :meth:`record_batch` in the child without waiting: :meth:`receive` gives its answer."""
        try:
            self._conn.send((run, [pack(o) for o in outcomes], policy, usage))
        except OSError as exc:
            raise self._ended() from exc

    def answered(self) -> bool:
        """Is the answer of the batch sent last ready (so :meth:`receive` will not wait)?"""
        try:
            return bool(self._conn.poll())
        except (EOFError, OSError):
            return True  # receive() raises why

    def receive(self) -> WriteStats:
        """The answer of the batch sent last: its :class:`WriteStats`, or :class:`RemoteWriteError`."""
        try:
            ok, answer = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise self._ended() from exc
        if ok:
            return answer  # type: ignore[no-any-return]
        raise RemoteWriteError(answer)

    def _ended(self) -> RuntimeError:
        code = self._proc.exitcode if self._proc is not None else None
        return RuntimeError(f"the store-writer process ended (exit code {code})")

    def __exit__(self, *_exc: object) -> None:
        """Tell the child to stop and return: every batch sent has been answered (so written) by now,
        and the child's exit — closing its database connection, tearing down a copy of this process's
        address space, 30-50 ms at c = 64 on the loaded 2-core machine — is waited for by a daemon
        thread (terminated if it takes over 30 s), not by the run."""
        try:
            self._conn.send(None)
        except OSError:
            pass
        proc, conn = self._proc, self._conn
        threading.Thread(target=_reap, args=(proc, conn), name="store-writer-reaper", daemon=True).start()


def _reap(proc: Any, conn: Any) -> None:
    """Wait for a :class:`StoreProcess` child to end (terminate it after 30 s), then close its pipe."""
    proc.join(30)
    if proc.is_alive():
        proc.terminate()
        proc.join()
    conn.close()


# -- the one writer ----------------------------------------------------------------------------------------
class _SkuLines:
    """``file:line`` of a SKU id in the input (the first record of that id), read only when a problem is
    reported (a clean run never reads the file twice)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lines: dict[str, int] | None = None

    def __call__(self, sku_id: str) -> str:
        if self.path is None:
            return sku_id
        if self._lines is None:
            self._lines = {}
            for line, item in iter_skus(self.path):
                if not isinstance(item, str):
                    self._lines.setdefault(item.sku_id, line)
        line = self._lines.get(sku_id)
        return f"{self.path}:{line}: {sku_id!r}" if line is not None else f"{self.path}: {sku_id!r}"


class _Writer:
    """Buffers outcomes and writes them ``batch_size`` SKUs (or ``flush_seconds``' worth) per transaction.

    Writing to a :class:`StoreProcess` is pipelined: a batch is handed to the child and this process goes
    on collecting outcomes while it is written; at most one batch is in the child at a time (so batches
    are written, and a failed one narrowed, in order). Once ``eager_after`` outcomes have arrived (the
    caller sets it to the start of the last round of SKUs in flight), whatever waits goes to the child as
    soon as it is idle: the write left after the last SKU — the run's tail — is then that of the few SKUs
    that ended during the previous write, not of up to ``batch_size``, while the run's other batches keep
    their size (smaller ones cost the child CPU per SKU). Writing in this process: each flush waits for its
    transaction, as before."""

    def __init__(
        self,
        store: CatalogStore | StoreProcess,
        run: Any,
        options: StoreRunOptions,
        comp: Components,
        summary: StoreRunSummary,
        issue: Callable[[str], None],
        progress: Callable[[SkuOutcome], None] | None,
        measured: bool,
    ) -> None:
        self.store, self.run, self.options, self.comp = store, run, options, comp
        self.summary, self.issue, self.progress, self.measured = summary, issue, progress, measured
        self.buffer: list[SkuOutcome] = []
        self.last_flush = time.monotonic()
        self.usage_mark = usage_of(comp.llm_clients)
        self.usage_total = Usage()
        self.stats = WriteStats()
        self.where = _SkuLines(None)
        self.pipelined = isinstance(store, StoreProcess)
        self.in_child: tuple[list[SkuOutcome], Usage | None] | None = None  # the batch being written
        self.received = 0
        self.eager_after: int | None = None  # see the class docstring (None: never eager)

    def add(self, outcome: SkuOutcome) -> None:
        self.buffer.append(outcome)
        self.received += 1
        for text in outcome.issues:
            self.issue(text)
        if outcome.error is not None:
            self.issue(f"{outcome.sku.sku_id}: {outcome.error}")
        if self.in_child is not None and self.store.answered():  # type: ignore[union-attr]
            self._collect()
        if (
            len(self.buffer) >= self.options.batch_size
            or time.monotonic() - self.last_flush >= self.options.flush_seconds
            or (self.in_child is None and self._eager())
        ):
            self.flush(wait=False)

    def _eager(self) -> bool:
        """Write what waits as soon as the child is idle (pipelined, in the run's last round)."""
        return self.pipelined and self.eager_after is not None and self.received > self.eager_after

    def flush(self, wait: bool = True) -> None:
        """Write the buffered outcomes; ``wait=False`` (pipelined only) returns once they are handed to
        the child, else every batch is written when this returns."""
        if self.in_child is not None:
            self._collect()
        batch, self.buffer = self.buffer, []
        self.last_flush = time.monotonic()
        if not batch:
            return
        usage: Usage | None = None
        if not self.measured and self.comp.llm_clients:
            now = usage_of(self.comp.llm_clients)
            usage, self.usage_mark = usage_minus(now, self.usage_mark), now
        if self.pipelined:
            self.store.send_batch(self.run, batch, policy=self.options.policy, usage=usage)  # type: ignore[union-attr]
            self.in_child = (batch, usage)
            if wait:
                self._collect()
            return
        self._done(batch, usage, self._record(batch, usage))

    def _collect(self) -> None:
        """Wait for the batch in the child and account for it (narrowed to its SKUs if it failed)."""
        assert self.in_child is not None
        batch, usage = self.in_child
        self.in_child = None
        try:
            stats = self.store.receive()  # type: ignore[union-attr]
        except RemoteWriteError as exc:
            stats = self._narrow(batch, usage, exc)
        self._done(batch, usage, stats)

    def _done(self, batch: list[SkuOutcome], usage: Usage | None, stats: WriteStats) -> None:
        for sku_id, note in stats.notes:
            self.issue(f"{self.where(sku_id)}: {note}")
        failed = set(stats.rejected)
        self.stats += stats
        self._tally(batch, usage, failed)
        if self.progress is not None:
            for outcome in batch:
                self.progress(outcome)

    def _record(self, batch: list[SkuOutcome], usage: Usage | None) -> WriteStats:
        """``record_batch`` of the whole batch; when its transaction fails, one SKU per transaction (the
        usage goes with the first that is written) and a SKU whose own write fails is rejected with the
        database's message (module docstring)."""
        try:
            return self.store.record_batch(self.run, batch, policy=self.options.policy, usage=usage)
        except Exception as exc:  # noqa: BLE001 - a write that fails is narrowed to its SKU and reported
            return self._narrow(batch, usage, exc)

    def _narrow(self, batch: list[SkuOutcome], usage: Usage | None, exc: Exception) -> WriteStats:
        """After ``batch``'s transaction failed with ``exc``: its SKUs one per transaction."""
        if len(batch) == 1:
            sku_id = batch[0].sku.sku_id
            return WriteStats(notes=[(sku_id, f"not stored: {_first_line(exc)}")], rejected=[sku_id])
        log.warning("batch write failed (%s); one SKU per transaction", _first_line(exc))
        total = WriteStats()
        for outcome in batch:
            one = self._record([outcome], usage)
            if outcome.sku.sku_id not in one.rejected:
                usage = None  # counted once, with the first SKU written
            total += one
        return total

    def flush_quietly(self) -> None:
        try:
            self.flush()
        except Exception:  # the original error is the one to report
            log.exception("could not write the last outcomes (they are redone on the next start)")

    def _tally(self, batch: list[SkuOutcome], usage: Usage | None, failed: set[str]) -> None:
        s = self.summary
        for outcome in batch:
            if outcome.error is not None or outcome.sku.sku_id in failed:
                s.skus_failed += 1
                continue
            s.skus_processed += 1
            s.llm_calls += outcome.llm_calls
            s.results += len(outcome.results)
            for r in outcome.results:
                s.actions[r.decision.action.value] = s.actions.get(r.decision.action.value, 0) + 1
            if outcome.usage is not None:
                self.usage_total = self.usage_total + outcome.usage
        if usage is not None:
            self.usage_total = self.usage_total + usage
        s.published, s.unchanged_values = self.stats.published, self.stats.unchanged
        s.kept_approved, s.kept_filled = self.stats.kept_approved, self.stats.kept_filled
        s.queued_for_review = self.stats.queued
        if self.comp.llm_clients or self.usage_total.calls:
            s.llm_usage = self.usage_total


def _first_line(exc: BaseException) -> str:
    """The first line of a database error (the driver's message when there is one)."""
    if isinstance(exc, RemoteWriteError):
        return exc.first_line
    text = str(getattr(exc, "orig", None) or exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
