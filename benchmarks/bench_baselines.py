"""Benchmark: the nine offline baselines (+ trace-hybrid) on N dialogues, closed and open set.

    python -u benchmarks/bench_baselines.py [--dialogues 10000] [--open-dialogues 1000] [--seed 0]
                                             [--systems popularity,tfidf,...] [--no-dense]

1. Builds the demo KB and ``--dialogues`` dialogues (template realiser) — setup, not timed.
2. Runs the reference ``random`` system, then each offline system, with ``evaluate`` (inputs, system
   calls, scoring), closed set on all dialogues and open set on the first ``--open-dialogues``.
   Reports per system: answering seconds (``run_s``), ms per turn, the ratio to ``random``'s run time
   measured in the same process, and R@1 / CGS / rejection recovery. The dense encoder's first pass over
   the KB's documents is reported separately (warm-up, written to the embedding cache).

Target (issue 11): the nine baselines, closed set, 10k dialogues, <= 3 min of answering in total on
2 cores. Times depend on the machine and its load: compare the ratios.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.evaluation.evaluate import evaluate
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.systems import OFFLINE_SYSTEMS

METRICS = "recall@1,open_recall@1,cgs,rejection_recovery"


def _run(name: str, dialogues, kb, setting: str, options: dict) -> tuple[float, int, dict]:
    table = evaluate(name, dialogues, kb=kb, setting=setting, metrics=METRICS, system_args=options)
    r1 = table.value("recall@1" if setting == "closed" else "open_recall@1")
    return (
        table.info["timings"]["run_s"],
        table.n_turns,
        {
            "R@1": r1,
            "CGS": table.value("cgs"),
            "recovery": table.value("rejection_recovery"),
        },
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dialogues", type=int, default=10_000)
    ap.add_argument("--open-dialogues", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--systems", default=",".join(OFFLINE_SYSTEMS))
    ap.add_argument("--no-dense", action="store_true", help="skip dense; hybrids without the encoder")
    args = ap.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s and not (args.no_dense and s == "dense")]
    options = {s: {"dense": False} for s in ("hybrid-rrf", "trace-hybrid")} if args.no_dense else {}

    kb = generate_demo_kb(seed=args.seed)
    t0 = time.perf_counter()
    dialogues, _report = build_dialogues(kb, args.dialogues, args.seed)
    print(f"setup: {len(dialogues)} dialogues built in {time.perf_counter() - t0:.1f}s (not timed)")
    with tempfile.TemporaryDirectory() as cache:
        if "dense" in systems or not args.no_dense:
            t0 = time.perf_counter()
            _run("dense", dialogues[:1], kb, "closed", {"cache_dir": cache})
            print(f"dense warm-up (model load + first documents): {time.perf_counter() - t0:.1f}s")
        for setting, subset in (("closed", dialogues), ("open", dialogues[: args.open_dialogues])):
            ref_s, turns, _ref = _run("random", subset, kb, setting, {})
            print(f"\n{setting} set, {len(subset)} dialogues, {turns} turns; random: {ref_s:.1f}s")
            print(f"{'system':>13} {'run_s':>8} {'ms/turn':>8} {'x random':>9}  R@1    CGS    recovery")
            total = 0.0
            for name in systems:
                opts = dict(options.get(name, {}))
                if name in ("dense", "hybrid-rrf", "trace-hybrid") and not args.no_dense:
                    opts["cache_dir"] = cache
                run_s, turns, m = _run(name, subset, kb, setting, opts)
                total += run_s if name != "trace-hybrid" else 0.0
                print(
                    f"{name:>13} {run_s:8.1f} {1000 * run_s / max(turns, 1):8.2f} {run_s / ref_s:9.1f}  "
                    f"{m['R@1']:.3f}  {m['CGS']:.3f}  {m['recovery']:.3f}"
                )
            print(f"nine baselines, {setting} set: {total:.1f}s of answering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
