"""Benchmark: build 10,000 TRACE-CRS dialogues with the offline (template) realiser on the demo KB.

Target: <= 60 s on one core (~6 ms per dialogue). Measured in the same run against two references:

* ``write``: ``model_dump_json`` + writing the same already-built dialogues to JSONL
  (``groundtrace.crs.dataset.files.write_dialogues``) — the floor any builder pays to produce the files;
* ``qc``: the stage-4 QC pass alone (``groundtrace.crs.build.qc.check_dialogue``) over the built dialogues.

Both wall-clock and process CPU time are reported (CPU time is robust to other load on a shared
machine). The process is pinned to one core where the OS allows it. Prints the 10k build report too.

    python benchmarks/bench_build.py [--dialogues 10000] [--seed 0] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _gold_grounding(dialogues, kb) -> dict[str, float]:
    """GS/CD/PC/CGS of the gold recommendation turns scored as a system's responses (empty if unavailable)."""
    try:
        from groundtrace.crs.evaluation.score import score_predictions
        from groundtrace.crs.systems.predictions import Prediction
    except ImportError:
        return {}
    preds = [
        Prediction(
            dialogue_id=d.dialogue_id,
            turn_index=t.index,
            system="gold",
            response=t.text,
            ranking=[t.gold.gold_poi, *[c for c in d.candidates if c != t.gold.gold_poi]],
        )
        for d in dialogues
        for t in d.recommendation_turns()
    ]
    table = score_predictions(dialogues, preds, kb, metrics=["GS", "CD", "PC", "CGS"])
    return {k: round(v, 4) for k, v in table.aggregate.items() if v is not None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-s", type=float, default=60.0)
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args(argv)

    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        except OSError:
            pass

    from groundtrace.crs.build.builder import build_dialogues
    from groundtrace.crs.build.qc import check_dialogue
    from groundtrace.crs.dataset.files import write_dialogues
    from groundtrace.crs.kb.demo import generate_demo_kb

    kb, kb_wall, _ = _timed(lambda: generate_demo_kb(0))
    (dialogues, report), build_wall, build_cpu = _timed(
        lambda: build_dialogues(kb, args.dialogues, args.seed)
    )
    with tempfile.TemporaryDirectory() as tmp:
        _, write_wall, write_cpu = _timed(lambda: write_dialogues(Path(tmp) / "all.jsonl", dialogues))
        size_mb = (Path(tmp) / "all.jsonl").stat().st_size / 1e6
    issues, qc_wall, qc_cpu = _timed(lambda: sum(len(check_dialogue(d, kb)) for d in dialogues))

    grounding = _gold_grounding(dialogues[:1000], kb)
    n = len(dialogues)
    results = {
        "dialogues": n,
        "kb": kb.name,
        "kb_generation_s": round(kb_wall, 3),
        "build_wall_s": round(build_wall, 3),
        "build_cpu_s": round(build_cpu, 3),
        "ms_per_dialogue_cpu": round(1000 * build_cpu / max(1, n), 3),
        "reference_write_wall_s": round(write_wall, 3),
        "reference_write_cpu_s": round(write_cpu, 3),
        "reference_qc_wall_s": round(qc_wall, 3),
        "reference_qc_cpu_s": round(qc_cpu, 3),
        "build_over_write_cpu": round(build_cpu / max(write_cpu, 1e-9), 2),
        "build_over_qc_cpu": round(build_cpu / max(qc_cpu, 1e-9), 2),
        "jsonl_mb": round(size_mb, 1),
        "qc_issues_after_build": issues,
        "target_s": args.target_s,
        "meets_target_cpu": build_cpu <= args.target_s,
        "meets_target_wall": build_wall <= args.target_s,
        "gold_turn_grounding_first_1000": grounding,
        "report": json.loads(report.model_dump_json()),
    }
    print(
        f"built {n} dialogues: wall {build_wall:.1f} s, cpu {build_cpu:.1f} s "
        f"({results['ms_per_dialogue_cpu']} ms/dialogue cpu); target {args.target_s:.0f} s"
    )
    print(
        f"reference write (model_dump_json + JSONL, {size_mb:.0f} MB): wall {write_wall:.1f} s, cpu "
        f"{write_cpu:.1f} s → build/write = {results['build_over_write_cpu']}x (cpu)"
    )
    print(
        f"reference QC pass alone: wall {qc_wall:.1f} s, cpu {qc_cpu:.1f} s → build/qc = "
        f"{results['build_over_qc_cpu']}x (cpu)"
    )
    print(f"QC issues re-found in built dialogues: {issues}")
    if grounding:
        print(
            "grounding of the gold system turns (first 1,000 dialogues, crs.metrics): "
            + ", ".join(f"{k.upper()} {v:.3f}" for k, v in grounding.items())
        )
    report.print_summary()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if issues == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
