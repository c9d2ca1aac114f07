"""Benchmark: the evaluation runner end to end (inputs, system calls, appends, scoring) on a 10k-dialogue run.

    python -u benchmarks/bench_runner.py [--dialogues 10000] [--io-dialogues 1000] [--io-ms 2] [--seed 0]

1. Builds the demo KB and ``--dialogues`` dialogues (template realiser) — setup, not timed.
2. Runs ``oracle`` and ``random`` with ``run_system`` into fresh folders, once with 1 worker and once with
   2 workers, and reports for each the run wall time (``run_s``: building inputs, calling the system,
   appending predictions) and the scoring time (``score_s``) from ``run.json``, the 1-vs-2-worker ratio
   measured in the same process, and whether the two ``scores.json`` are identical (they must be).
3. Repeats 1 vs 2 workers with an I/O-bound system on ``--io-dialogues`` dialogues: ``random`` that
   waits ``--io-ms`` per turn (``time.sleep``, as an HTTP or LLM system waits on the network), where
   threads pay off; CPU-bound reference systems cannot gain from threads under the GIL.
4. Re-runs the first command into its own folder: every dialogue is resumed, nothing is asked.

Times depend on the machine and its load: compare the ratios, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.evaluation.run_files import SCORES_FILE
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.systems import build_system
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput
from groundtrace.crs.systems.reference import RandomSystem


class SlowRandom(RandomSystem):
    """``random`` that waits ``delay_s`` per turn, like a system behind a network call."""

    name = "slow-random"

    def __init__(self, *, seed: int = 0, delay_s: float = 0.002) -> None:
        super().__init__(seed=seed)
        self.delay_s = delay_s

    def config(self) -> dict[str, object]:
        return {"seed": self.seed, "delay_s": self.delay_s}

    def respond(self, inp: SystemInput) -> SystemOutput:
        time.sleep(self.delay_s)
        return super().respond(inp)


def _run(system_factory, dialogues, kb, out: Path, workers: int) -> dict:
    result = run_system(system_factory, dialogues, kb, out, split="all", workers=workers)
    info = result.info
    return {
        "run_s": info["timings"]["run_s"],
        "score_s": info["timings"]["score_s"],
        "turns": info["counts"]["turns"],
        "dialogues_run": info["counts"]["dialogues_run"],
        "scores": json.loads((out / SCORES_FILE).read_text(encoding="utf-8")),
        "r1": result.table.aggregate.get("recall@1"),
    }


def _compare(label: str, one: dict, two: dict) -> None:
    same = one["scores"] == two["scores"]
    print(
        f"{label:<12} {one['turns']:>6} turns | 1 worker run {one['run_s']:6.2f} s score "
        f"{one['score_s']:5.2f} s | 2 workers run {two['run_s']:6.2f} s score {two['score_s']:5.2f} s"
        f" | run speed-up x{one['run_s'] / max(two['run_s'], 1e-9):.2f} | R@1 {one['r1']:.3f}"
        f" | identical scores.json: {same}"
    )
    if not same:
        raise SystemExit(f"{label}: scores differ between 1 and 2 workers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=10_000)
    parser.add_argument("--io-dialogues", type=int, default=1_000)
    parser.add_argument("--io-ms", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    kb = generate_demo_kb(args.seed)
    dialogues, _report = build_dialogues(kb, args.dialogues, args.seed)
    print(
        f"setup: {len(dialogues)} dialogues, demo KB {len(kb)} POIs "
        f"({time.perf_counter() - t0:.1f} s, not timed)"
    )
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cpus available: {cpus}, load average {os.getloadavg()[0]:.1f}")

    with tempfile.TemporaryDirectory(prefix="bench-runner-") as tmp:
        root = Path(tmp)
        for name in ("oracle", "random"):
            one = _run(lambda n=name: build_system(n), dialogues, kb, root / f"{name}-1", 1)
            two = _run(lambda n=name: build_system(n), dialogues, kb, root / f"{name}-2", 2)
            _compare(name, one, two)

        io = dialogues[: args.io_dialogues]
        delay = args.io_ms / 1000

        def slow() -> SlowRandom:
            return SlowRandom(seed=0, delay_s=delay)

        one = _run(slow, io, kb, root / "slow-1", 1)
        two = _run(slow, io, kb, root / "slow-2", 2)
        _compare(f"io {args.io_ms:g}ms", one, two)

        again = _run(lambda: build_system("oracle"), dialogues, kb, root / "oracle-1", 1)
        print(
            f"resume      oracle-1 again: {again['dialogues_run']} dialogues asked, run "
            f"{again['run_s']:.3f} s, score {again['score_s']:.2f} s"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (shared machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
