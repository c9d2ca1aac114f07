"""GET /login latency while failed logins run in parallel (issue 24: argon2 on the event loop).

Starts the review page (uvicorn in a thread, 127.0.0.1, a temporary SQLite store with reviewer ``ana``,
the limiter raised so no attempt is refused), then measures ``GET /login`` ``--probes`` times alone and
``--probes`` times while ``--parallel`` threads keep posting wrong passwords for ``ana``. Prints median and
max of both in seconds. Timing depends on the machine; the tests never assert it.

    python benchmarks/bench_review_login.py --parallel 8 --probes 20
"""

from __future__ import annotations

import argparse
import re
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.app import create_app
from groundtrace.catalog.web.auth import LoginLimiter, hash_password


def _serve(store: CatalogStore) -> tuple[uvicorn.Server, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(store, "b" * 40, limiter=LoginLimiter(max_failures=10**9, window=1))
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=srv.run, daemon=True).start()
    while not srv.started:
        time.sleep(0.05)
    return srv, f"http://127.0.0.1:{port}"


def _probe(base: str, n: int) -> list[float]:
    times = []
    with httpx.Client(base_url=base, timeout=None) as client:
        for _ in range(n):
            start = time.perf_counter()
            client.get("/login").raise_for_status()
            times.append(time.perf_counter() - start)
            time.sleep(0.05)
    return times


def _attack(base: str, stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=None) as client:
        while not stop.is_set():
            page = client.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
            client.post("/login", data={"csrf_token": token, "username": "ana", "password": "wrong guess"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = CatalogStore(f"sqlite:///{Path(tmp) / 'bench.db'}")
        store.set_reviewer("ana", hash_password("correct horse battery"))
        srv, base = _serve(store)
        alone = _probe(base, args.probes)
        stop = threading.Event()
        attackers = [threading.Thread(target=_attack, args=(base, stop)) for _ in range(args.parallel)]
        for th in attackers:
            th.start()
        time.sleep(1.0)
        loaded = _probe(base, args.probes)
        stop.set()
        for th in attackers:
            th.join()
        srv.should_exit = True
        store.close()
    for name, times in (("alone", alone), (f"{args.parallel} parallel failed logins", loaded)):
        print(f"GET /login {name}: median {statistics.median(times):.3f} s, max {max(times):.3f} s")


if __name__ == "__main__":
    main()
