"""Benchmark: the catalog store and batch runner (issue 13), every number a ratio measured in this run.

    python -u benchmarks/bench_store.py [--section writes|llm|cpu|ratelimit|ray|all] [--skus 100] [--pg URL]
        [--levels 1,8,32,64] [--processes 1,2] [--rounds 4] [--variants socket+process,httpx+thread]
        [--no-call-only] [--workers 1,2]

* ``writes`` — the offline engine over ``--skus`` SKUs (the demo catalog's 20, repeated with new ids)
  written as JSONL (``run_enrich``, 1 worker) vs through the store (``enrich_to_store``, inline) on SQLite
  and on PostgreSQL (``--pg``, default ``postgresql+psycopg2://postgres@127.0.0.1:5432``; a throwaway
  database is created and dropped). Reported: best-of-``--repeat`` wall time of each and the overhead
  ``store / jsonl - 1`` (target ≤ 20%).
* ``llm`` — the LLM Scout against the local OpenAI-wire server answering after 300 ms, at concurrency 1, 8,
  32, 64 (asyncio mode, response cache off, rule Judge; components built before the clock starts; with
  ``--processes 2`` the SKUs in flight are split over 2 worker processes, whose start-up is inside the
  clock): requests/s against the bound ``c / 0.3 s`` (target ≥ 90%), the CPU per SKU of the client side
  and of the server, the load average; then the same with a Scout that only makes its one LLM call
  (``call-only``), which isolates the runner and client from the pipeline's CPU. ``--rounds`` sets the
  SKUs per level (``rounds × c``): more rounds dilute the fixed start-up and tail. Each row also gives the
  mean wall time of one SKU inside the run (``sku_ms``, against the server's 300 ms) and the time from the
  last SKU's end to the run's end (``tail_ms``: the writer's backlog). ``--variants
  socket+process,httpx+thread`` runs each ``TRANSPORT+WRITER`` pair in turn and again in reverse order
  (A B A), so a change is compared with what it replaced in the same minutes: the LLM client's transport
  (``socket``, the default, ``httpx``, ``sdk``) and where the store is written (``process``, the default:
  the store-writer process; ``thread``: this process).
* ``cpu`` — CPU ms per SKU of the LLM path in one thread against a server that answers at once (client,
  of which the rule Judge and the HTTP request; a call-only Scout; the store write; the server), and the
  SKUs/s that 2 fully used cores would allow (``2 / (client + writer + server)``): what the ``llm``
  shares are bounded by on a 2-core machine, and robust to other processes' load.
* ``ratelimit`` — the Scout at concurrency 64 against the server limited to ``--cap`` requests in flight
  (HTTP 429 with ``Retry-After: 0.3`` beyond it): every SKU answered, how far the client's adaptive limit
  fell and where it ended, and the throughput against the server's capacity ``cap / 0.3 s``.
* ``ray`` — ``--runner ray`` on a local Ray instance with ``--workers`` CPUs each (default 1,2; offline
  engine), the time of the enrich call after ``ray.init`` (worker start-up and imports included), SKUs/s
  and the speed-up over the first count.

Times depend on the machine and its load (the development machine has 2 shared cores): compare ratios.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import EnrichConfig, build_components, run_enrich
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store, with_llm_concurrency


def _skus(root: Path, n: int) -> tuple[Path, Any]:
    paths = write_demo_catalog(root / "demo")
    base = [SKU.model_validate_json(line) for line in paths.skus.read_text(encoding="utf-8").splitlines()]
    out = root / f"skus-{n}.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for i in range(n):
            sku = base[i % len(base)]
            fh.write(sku.model_copy(update={"sku_id": f"{sku.sku_id}-{i:05d}"}).model_dump_json() + "\n")
    return out, paths


def _pg_database(server: str) -> tuple[str, Any]:
    from sqlalchemy import create_engine, text

    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    name = f"gt_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return f"{server}/{name}", drop


def bench_writes(root: Path, n: int, repeat: int, pg: str | None) -> dict[str, Any]:
    skus, paths = _skus(root, n)
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus)
    times: dict[str, list[float]] = {"jsonl": [], "sqlite": [], "postgresql": []}
    cleanups = []
    for r in range(repeat):
        out = root / f"out-{r}.jsonl"
        t0 = time.perf_counter()
        run_enrich(skus, out, config)
        times["jsonl"].append(time.perf_counter() - t0)
        store = CatalogStore(f"sqlite:///{root / f'store-{r}.db'}")
        t0 = time.perf_counter()
        enrich_to_store(skus, store, config)
        times["sqlite"].append(time.perf_counter() - t0)
        store.close()
        if pg:
            url, drop = _pg_database(pg)
            cleanups.append(drop)
            store = CatalogStore(url)
            t0 = time.perf_counter()
            enrich_to_store(skus, store, config)
            times["postgresql"].append(time.perf_counter() - t0)
            store.close()
    for drop in cleanups:
        drop()
    best = {k: min(v) for k, v in times.items() if v}
    return {
        "skus": n,
        "best_s": best,
        "overhead_sqlite": best["sqlite"] / best["jsonl"] - 1,
        "overhead_postgresql": best["postgresql"] / best["jsonl"] - 1 if "postgresql" in best else None,
    }


def _scout_answer(request: dict[str, Any]) -> Any:
    from groundtrace.core.llm.wire_server import Reply

    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    slugs = re.search(r"slugs: (.*)\.$", user).group(1).split(", ")  # type: ignore[union-attr]
    body = {"identity": {"confidence": 0.5}, "attributes": {s: {"status": "not_found"} for s in slugs}}
    # fixed token counts: the server does not tokenize (its CPU would be measured, not the runner)
    return Reply(content=json.dumps(body), delay_s=0.3, prompt_tokens=500, completion_tokens=50)


class _CallOnlyScout:
    """A Scout that only makes its one LLM call per SKU (no evidence work): isolates the runner, the HTTP
    client and the server from the pipeline's CPU."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def scout(self, sku: SKU) -> Any:
        from types import SimpleNamespace

        prompt = f"Extract attributes. SKU {sku.sku_id}: {sku.title}. slugs: flavor."
        self.llm.complete([{"role": "user", "content": prompt}], max_tokens=64)
        return SimpleNamespace(template=None, errors=[], llm_calls=1)


def _serve(conn: Any, cap: int | None = None) -> None:
    """The wire server in its own process (it must not share the client's GIL), tuned like a real server
    in this process only: TCP_NODELAY (else Nagle + delayed ACK add ~40 ms to every response) and an
    accept backlog of 256 (the stdlib default of 5 drops connections at concurrency 64). ``cap``: a rate
    limit of that many requests in flight (HTTP 429, ``Retry-After: 0.3``). Answers "cpu" with its CPU
    seconds so far and "limited" with the number of 429s, stops on "stop"."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from groundtrace.core.llm.wire_server import WireServer, rate_limited

    BaseHTTPRequestHandler.disable_nagle_algorithm = True
    ThreadingHTTPServer.request_queue_size = 256
    limit = rate_limited(_scout_answer, max_in_flight=cap, retry_after_s=0.3) if cap else None

    with WireServer(limit or _scout_answer, keep_requests=False) as server:
        conn.send(server.base_url)
        while (asked := conn.recv()) != "stop":
            conn.send(time.process_time() if asked == "cpu" else (limit.limited if limit else 0))


def bench_rate_limit(root: Path, concurrency: int, cap: int, rounds: int) -> dict[str, Any]:
    """The Scout at ``concurrency`` against a server that answers 429 (``Retry-After: 0.3``) to whatever
    exceeds ``cap`` requests in flight: the adaptive limit should settle near ``cap``, every SKU succeed,
    and the throughput approach the server's capacity ``cap / 0.3 s``."""
    import multiprocessing
    import os

    os.environ.setdefault("GROUNDTRACE_LLM_API_KEY", "bench")
    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(child, cap), daemon=True)
    server.start()
    base_url = parent.recv()
    try:
        n = rounds * cap
        skus, _ = _skus(root, n)
        config = EnrichConfig(
            llm=f"{base_url}#bench", llm_options={"no_cache": True, "max_retries": 12}, workers=concurrency
        )
        comp = build_components(with_llm_concurrency(config))
        store = CatalogStore(f"sqlite:///{root / 'limited.db'}")
        load_before = os.getloadavg()[0]
        t0 = time.perf_counter()
        summary = enrich_to_store(skus, store, config, components=comp)
        wall = time.perf_counter() - t0
        parent.send("limited")
        refused = parent.recv()
        store.close()
    finally:
        parent.send("stop")
        server.join(10)
    limiter = comp.llm_clients[0].limiter
    calls = summary.llm_usage.calls if summary.llm_usage else 0
    return {
        "concurrency": concurrency,
        "server_cap": cap,
        "skus": n,
        "failed": summary.skus_failed,
        "answered": calls,
        "refused_429": refused,
        "limit_lowest": limiter.lowest,
        "limit_final": limiter.limit,
        "limit_changes": len(limiter.history),
        "requests_per_s": round(calls / wall, 1),
        "server_capacity_per_s": round(cap / 0.3, 1),
        "share_of_capacity": round(calls / wall / (cap / 0.3), 3),
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process and of its children reaped so far."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _reaped() -> None:
    """Wait until the store-writer processes the runs told to stop have ended and been reaped (their
    reaper threads done): ``RUSAGE_CHILDREN`` counts a child's CPU only then."""
    import threading

    for thread in threading.enumerate():
        if thread.name == "store-writer-reaper":
            thread.join()


def _warm_up(root: Path, base_url: str) -> None:
    """One call per demo SKU before any clock: each template's output model and its schema forms are built
    on first use and kept for the process (worker processes forked later inherit them), like the
    components built before the clock."""
    from concurrent.futures import ThreadPoolExecutor

    from groundtrace.catalog.store.sku_step import process_one

    path, _ = _skus(root, 20)
    skus = [SKU.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    comp = build_components(EnrichConfig(llm=f"{base_url}#bench", llm_options={"no_cache": True}))
    with ThreadPoolExecutor(max_workers=len(skus)) as pool:
        list(pool.map(lambda sku: process_one(sku, comp), skus))


def bench_llm(
    root: Path,
    levels: list[int],
    call_only: bool = False,
    processes: int = 1,
    rounds: int = 4,
    variant: str = "socket+process",
) -> list[dict[str, Any]]:
    """One row per concurrency level ``c``: ``rounds × c`` SKUs (at least 16) through ``enrich_to_store``;
    ``share_of_bound = requests/s ÷ (c / 0.3 s)``; ``cpu_ms_per_sku`` = CPU of the client side (this
    process and its worker processes: the ``llm_processes`` workers, the store-writer process) per SKU,
    ``server_cpu_ms_per_sku`` the wire server's; ``load`` the 1-minute load average before and after the
    level; ``sku_ms`` the mean wall time of one SKU's Scout → Judge → policy inside the run (one process
    only) and ``tail_ms`` the time from the last SKU's end to the run's end (the writer's backlog).
    ``variant`` = ``TRANSPORT+WRITER``: the client transport (``socket``, the default, ``httpx``, ``sdk``)
    and where the store is written (``process``, the default, or ``thread``: this process)."""
    from groundtrace.catalog.store import runner

    transport, writer = variant.split("+")
    import multiprocessing
    import os

    os.environ.setdefault("GROUNDTRACE_LLM_API_KEY", "bench")
    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(child,), daemon=True)
    server.start()
    base_url = parent.recv()
    rows = []
    try:
        _warm_up(root / "warm", base_url)
        for c in levels:
            n = max(16, rounds * c)
            skus, _ = _skus(root / f"llm-{c}", n)
            config = EnrichConfig(
                llm=f"{base_url}#bench", llm_options={"no_cache": True, "transport": transport}, workers=c
            )
            store = CatalogStore(f"sqlite:///{root / f'llm-{c}.db'}")
            # the client's import and set-up are not the work measured
            comp = build_components(with_llm_concurrency(config))
            if call_only:
                comp.scout = _CallOnlyScout(comp.llm_clients[0])
            spans: list[tuple[float, float]] = []
            step = runner.process_one

            def timed(sku: SKU, comp: Any, step: Any = step, spans: list[Any] = spans, **kw: Any) -> Any:
                t = time.perf_counter()
                try:
                    return step(sku, comp, **kw)
                finally:
                    spans.append((t, time.perf_counter()))

            runner.process_one = timed
            load_before = os.getloadavg()[0]
            parent.send("cpu")
            server_cpu = parent.recv()
            cpu0 = _cpu_s()
            t0 = time.perf_counter()
            try:
                summary = enrich_to_store(
                    skus,
                    store,
                    config,
                    StoreRunOptions(llm_processes=processes, write_process=writer == "process"),
                    components=comp,
                )
            finally:
                runner.process_one = step
            wall = time.perf_counter() - t0
            _reaped()  # the store-writer process's CPU counts once it has ended (after the clock)
            cpu = _cpu_s() - cpu0
            parent.send("cpu")
            server_cpu = parent.recv() - server_cpu
            requests = summary.llm_usage.calls if summary.llm_usage else 0
            bound = c / 0.3
            rows.append(
                {
                    "pipeline": "call-only" if call_only else "scout",
                    "variant": variant,
                    "processes": processes,
                    "concurrency": c,
                    "skus": n,
                    "requests": requests,
                    "failed": summary.skus_failed,
                    "wall_s": round(wall, 3),
                    "requests_per_s": round(requests / wall, 1),
                    "bound_per_s": round(bound, 1),
                    "share_of_bound": round(requests / wall / bound, 3),
                    "cpu_ms_per_sku": round(1000 * cpu / n, 2),
                    "server_cpu_ms_per_sku": round(1000 * server_cpu / n, 2),
                    "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                    "sku_ms": round(1000 * sum(e - b for b, e in spans) / len(spans), 1) if spans else None,
                    "tail_ms": round(1000 * (t0 + wall - max(e for _, e in spans)), 1) if spans else None,
                }
            )
            store.close()
    finally:
        parent.send("stop")
        server.join(10)
    return rows


def _serve_now(conn: Any) -> None:
    """:func:`_serve` with answers at once (no 300 ms): the CPU section measures work, not waiting."""
    from http.server import BaseHTTPRequestHandler

    from groundtrace.core.llm.wire_server import WireServer

    BaseHTTPRequestHandler.disable_nagle_algorithm = True

    def now(request: dict[str, Any]) -> Any:
        reply = _scout_answer(request)
        reply.delay_s = 0.0
        return reply

    with WireServer(now, keep_requests=False) as server:
        conn.send(server.base_url)
        while conn.recv() == "cpu":
            conn.send(time.process_time())


def bench_cpu(root: Path, n: int) -> dict[str, Any]:
    """CPU ms per SKU of the LLM path in ONE thread (``time.process_time``, so a loaded machine changes it
    little): ``client`` = Scout + rule Judge + policy with its one HTTP request (``process_one``), ``judge``
    and ``request`` the parts of it spent in the rule Judge and in the client's transport (SDK + httpx),
    ``call_only`` a Scout that only makes its call, ``writer`` the store write (SQLite, batches of 32),
    ``server`` the wire server's CPU per request. 2 cores / (client + writer + server) bounds the SKUs/s."""
    import multiprocessing
    import os

    from groundtrace.catalog.store.runner import store_fingerprint
    from groundtrace.catalog.store.sku_step import process_one

    os.environ.setdefault("GROUNDTRACE_LLM_API_KEY", "bench")
    parent, child = multiprocessing.get_context("fork").Pipe()
    server = multiprocessing.get_context("fork").Process(target=_serve_now, args=(child,), daemon=True)
    server.start()
    base_url = parent.recv()
    warm = 30
    try:
        path, _ = _skus(root, n + warm)
        skus = [SKU.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
        comp = build_components(EnrichConfig(llm=f"{base_url}#bench", llm_options={"no_cache": True}))
        for sku in skus[:warm]:
            process_one(sku, comp)
        spent = {"judge": 0.0, "request": 0.0}

        def timed(name: str, fn: Any) -> Any:
            def run(*args: Any, **kwargs: Any) -> Any:
                t = time.process_time()
                try:
                    return fn(*args, **kwargs)
                finally:
                    spent[name] += time.process_time() - t

            return run

        client = comp.llm_clients[0]
        client._post = timed("request", client._post)
        comp.judge.judge = timed("judge", comp.judge.judge)
        parent.send("cpu")
        server0 = parent.recv()
        t = time.process_time()
        outcomes = [process_one(sku, comp) for sku in skus[warm:]]
        total = time.process_time() - t
        parts = dict(spent)  # before the call-only loop below adds to "request"
        parent.send("cpu")
        server_cpu = parent.recv() - server0
        assert all(o.error is None for o in outcomes), [o.error for o in outcomes if o.error][:1]
        store = CatalogStore(f"sqlite:///{root / 'cpu.db'}")
        policy = StoreRunOptions().policy
        run = store.start_run(
            store_fingerprint(EnrichConfig(), comp, policy), name="cpu", engine="x", model=None, judge="rule"
        )
        t = time.process_time()
        for i in range(0, n, 32):
            store.record_batch(run, outcomes[i : i + 32], policy=policy, usage=None)
        writer = time.process_time() - t
        store.close()
        comp.scout = _CallOnlyScout(client)
        t = time.process_time()
        for sku in skus[warm:]:
            process_one(sku, comp)
        call_only = time.process_time() - t
    finally:
        parent.send("stop")
        server.join(10)
    ms = {
        "client": total,
        "judge": parts["judge"],
        "request": parts["request"],
        "call_only": call_only,
        "writer": writer,
        "server": server_cpu,
    }
    out: dict[str, Any] = {f"{k}_ms_per_sku": round(1000 * v / n, 2) for k, v in ms.items()}
    out["skus"] = n
    out["two_core_ceiling_skus_per_s"] = round(2 * n / (total + writer + server_cpu), 1)
    out["load"] = round(os.getloadavg()[0], 2)
    return out


def bench_ray(root: Path, n: int, workers: list[int]) -> dict[str, Any]:
    """``--runner ray`` on a private local Ray instance with ``w`` CPUs and ``workers=w`` for each ``w``
    (offline engine): the enrich call's wall time after ``ray.init`` (worker start-up and imports
    included), SKUs/s, the speed-up over the first ``w``, the driver's CPU per SKU (the writer: the
    workers' CPU is not this process's) and the load average before/after."""
    import os

    import ray

    import groundtrace

    skus, paths = _skus(root, n)
    config = EnrichConfig(feed=paths.feed, corpus=paths.corpus)
    src = str(Path(groundtrace.__file__).resolve().parents[1])
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    result: dict[str, Any] = {"skus": n, "rows": []}
    for w in workers:
        ray.init(
            num_cpus=w,
            include_dashboard=False,
            _node_ip_address="127.0.0.1",
            logging_level="WARNING",
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": src}},
        )
        store = CatalogStore(f"sqlite:///{root / f'ray-{w}.db'}")
        load_before = os.getloadavg()[0]
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        written: list[float] = []  # when each outcome was written (batches: 32 SKUs or 1 s)
        summary = enrich_to_store(
            skus,
            store,
            config.model_copy(update={"workers": w}),
            StoreRunOptions(runner="ray"),
            progress=lambda _o, out=written, start=t0: out.append(time.perf_counter() - start),
        )
        wall = time.perf_counter() - t0
        first = written[0]
        after_first = sum(1 for t in written if t > first)
        result["rows"].append(
            {
                "workers": w,
                "processed": summary.skus_processed,
                "failed": summary.skus_failed,
                "wall_s": round(wall, 2),
                "skus_per_s": round(n / wall, 1),
                "first_written_s": round(first, 2),
                "steady_skus_per_s": round(after_first / (written[-1] - first), 1) if after_first else None,
                "driver_cpu_ms_per_sku": round(1000 * (time.process_time() - cpu0) / n, 2),
                "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
        store.close()
        ray.shutdown()
    base = result["rows"][0]
    for row in result["rows"]:
        row["speedup"] = round(base["wall_s"] / row["wall_s"], 2)
        if base["steady_skus_per_s"] and row["steady_skus_per_s"]:
            row["steady_speedup"] = round(row["steady_skus_per_s"] / base["steady_skus_per_s"], 2)
    result["engine_cpu_ms_per_sku"] = _inline_cpu_ms(root, skus, config, n)
    return result


def _inline_cpu_ms(root: Path, skus: Path, config: EnrichConfig, n: int) -> float:
    """CPU ms per SKU of the same run in this process (inline, offline engine, components built first):
    what each Ray worker spends per SKU, so ``w / cpu`` bounds the throughput of ``w`` free cores."""
    comp = build_components(config)
    store = CatalogStore(f"sqlite:///{root / 'inline.db'}")
    cpu0 = time.process_time()
    enrich_to_store(skus, store, config, components=comp)
    cpu = time.process_time() - cpu0
    store.close()
    return round(1000 * cpu / n, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--section", default="all", choices=["writes", "llm", "cpu", "ratelimit", "ray", "all"]
    )
    parser.add_argument("--cap", type=int, default=16, help="ratelimit: the server's requests in flight")
    parser.add_argument("--skus", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--levels", default="1,8,32,64")
    parser.add_argument(
        "--processes", default="1", help="llm: worker processes of the Scout runs, e.g. 1,2 (one run each)"
    )
    parser.add_argument("--rounds", type=int, default=4, help="llm: SKUs per level = rounds x concurrency")
    parser.add_argument(
        "--variants",
        default="socket+process",
        help="llm: TRANSPORT+WRITER pairs run one after the other per process count and again in reverse "
        "order, e.g. socket+process,httpx+thread (transport socket|httpx|sdk; store written from a "
        "separate process or this process's thread)",
    )
    parser.add_argument("--no-call-only", action="store_true", help="llm: skip the call-only rows")
    parser.add_argument("--workers", default="1,2", help="ray: worker counts (Ray CPUs), e.g. 1,2,4")
    parser.add_argument("--pg", default="postgresql+psycopg2://postgres@127.0.0.1:5432")
    parser.add_argument("--no-pg", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.section in ("writes", "all"):
            report["writes"] = bench_writes(
                root / "w", args.skus, args.repeat, None if args.no_pg else args.pg
            )
            print(json.dumps({"writes": report["writes"]}), flush=True)
        if args.section in ("llm", "all"):
            levels = [int(x) for x in args.levels.split(",")]
            rows = []
            variants = args.variants.split(",")
            order = variants + variants[::-1][1:] if len(variants) > 1 else variants  # A B A: interleaved
            for p in [int(x) for x in args.processes.split(",")]:
                for i, variant in enumerate(order):
                    for row in bench_llm(
                        root / f"l{p}-{i}", levels, processes=p, rounds=args.rounds, variant=variant
                    ):
                        rows.append(row)
                        print(json.dumps({"llm": row}), flush=True)
            if not args.no_call_only:
                for row in bench_llm(
                    root / "c", levels, call_only=True, rounds=args.rounds, variant=variants[0]
                ):
                    rows.append(row)
                    print(json.dumps({"llm": row}), flush=True)
            report["llm"] = rows
        if args.section in ("cpu", "all"):
            report["cpu"] = bench_cpu(root / "cpu", 300)
            print(json.dumps({"cpu": report["cpu"]}), flush=True)
        if args.section in ("ratelimit", "all"):
            report["ratelimit"] = bench_rate_limit(root / "rl", 64, args.cap, args.rounds * 4)
            print(json.dumps({"ratelimit": report["ratelimit"]}), flush=True)
        if args.section in ("ray", "all"):
            report["ray"] = bench_ray(root / "r", args.skus, [int(x) for x in args.workers.split(",")])
            print(json.dumps({"ray": report["ray"]}), flush=True)


if __name__ == "__main__":
    main()
