"""Benchmark: the shared JSONL reader (``core.files.jsonl.iter_jsonl``) against a bare read loop.

The reader adds per-line safety to every JSONL file the project reads: a bounded ``readline`` (a line over
8 MiB is skipped without being held whole), UTF-8 decoding per line, a nesting pre-check (only for lines
with more than 100 brackets), the JSON error wording. The reference, measured in the same run, is the loop
it replaced: ``for raw in open(path, "rb"): json.loads(raw)``. Reported: process CPU time of each over
the same file, and their ratio (goal: <= 1.5x; the reader must not make a Yelp stream noticeably slower).

    python benchmarks/bench_jsonl.py [--file shared/data/yelp_dense/yelp_academic_dataset_review.json]
        [--repeat 5] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from groundtrace.core.files.jsonl import iter_jsonl


def _reference(path: Path) -> int:
    count = 0
    with open(path, "rb") as handle:
        for raw in handle:
            if raw.strip():
                json.loads(raw)
                count += 1
    return count


def _shared(path: Path) -> int:
    return sum(1 for _n, _v, error in iter_jsonl(path, objects_only=True) if error is None)


def _cpu(fn, path: Path, repeat: int) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.process_time()
        count = fn(path)
        best = min(best, time.process_time() - start)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = ROOT.parent / "shared" / "data" / "yelp_dense" / "yelp_academic_dataset_review.json"
    parser.add_argument("--file", type=Path, default=default)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    ref_s, ref_n = _cpu(_reference, args.file, args.repeat)
    new_s, new_n = _cpu(_shared, args.file, args.repeat)
    if ref_n != new_n:
        raise SystemExit(f"line counts differ: reference {ref_n}, shared reader {new_n}")
    result = {
        "file": str(args.file),
        "lines": new_n,
        "mib": round(args.file.stat().st_size / 2**20, 2),
        "reference_cpu_s": round(ref_s, 4),
        "iter_jsonl_cpu_s": round(new_s, 4),
        "ratio": round(new_s / ref_s, 3),
    }
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
