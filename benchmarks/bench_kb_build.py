"""Benchmark: stream a synthetic multi-GB Yelp review file through the KB loader.

    python benchmarks/bench_kb_build.py --size-gb 1

Writes a synthetic ``yelp_academic_dataset_review.json`` (Yelp's line format: ~22-char ids, ~600-char
texts with escapes and non-ASCII) into a temporary folder, deleted afterwards, then times each stage in
a fresh child process so every stage reports its own peak RSS (``VmHWM``, else ``ru_maxrss``):

* ``reference`` — ``for line in f: json.loads(line)``, the floor any JSON-lines reader pays;
* ``loader`` — ``groundtrace.crs.yelp.stream_reviews`` building validated ``Review`` records for every line;
* ``selective`` — the same with ``business_ids`` (1% of businesses), i.e. the KB build's pass 2: lines of
  other businesses are skipped by the byte-level prefilter without JSON decoding.

Reported: reviews/s, MB/s and the ratio to the reference (``> 1`` = faster than the reference), and
peak RSS in MiB. Ratios, not absolute numbers, are what compare across machines.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "the",
    "food",
    "was",
    "great",
    "service",
    "slow",
    "friendly",
    "staff",
    "patio",
    "quiet",
    "loud",
    "cozy",
    "pricey",
    "cheap",
    "tacos",
    "sushi",
    "wine",
    "bar",
    "brunch",
    "dinner",
    "lunch",
    "parking",
    "easy",
    "hard",
    "wifi",
    "free",
    "kids",
    "loved",
    "it",
    "would",
    "come",
    "back",
    "again",
    "never",
    "ambiance",
    "romantic",
    "classy",
    "divey",
    "trendy",
    "upscale",
    "casual",
    "décor",
    "café",
    "naïve",
    "crème",
    "brûlée",
    "jalapeño",
    '"amazing"',
    "5/5",
    "$$",
]
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"


def _id(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(22))


def generate(path: Path, size_bytes: int, n_businesses: int = 20_000, seed: int = 0) -> tuple[int, list[str]]:
    """Write review lines until ``size_bytes``; returns (line count, business ids)."""
    rng = random.Random(seed)
    businesses = [_id(rng) for _ in range(n_businesses)]
    texts = []
    for _ in range(2_000):  # a pool of JSON-encoded texts (ensure_ascii, like Yelp's file)
        n = rng.randint(20, 220)
        body = " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".\n\nWould return."
        texts.append(json.dumps(body))
    written = lines = 0
    with open(path, "w", encoding="utf-8") as out:
        buf: list[str] = []
        while written < size_bytes:
            line = (
                f'{{"review_id":"{_id(rng)}","user_id":"{_id(rng)}","business_id":"{rng.choice(businesses)}",'
                f'"stars":{rng.randint(1, 5)}.0,"useful":{rng.randint(0, 9)},"funny":0,"cool":{rng.randint(0, 3)},'
                f'"text":{rng.choice(texts)},"date":"20{rng.randint(10, 22)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 12:00:00"}}\n'
            )
            buf.append(line)
            written += len(line.encode("utf-8"))
            lines += 1
            if len(buf) >= 10_000:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))
    return lines, businesses


def peak_rss_kib() -> int:
    """Peak resident set size of this process in KiB: ``VmHWM`` from /proc (per address space, so not
    inherited from the parent across fork+exec as ``ru_maxrss`` is on Linux), else ``ru_maxrss``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS


def run_stage(stage: str, path: Path, wanted: list[str]) -> dict[str, float]:
    """Run one stage in this process; returns count, seconds and peak RSS (MiB)."""
    from groundtrace.crs.yelp import stream_reviews  # imported before timing, in every stage alike

    base_kib = peak_rss_kib()
    start = time.perf_counter()
    count = 0
    if stage == "reference":
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                json.loads(line)
                count += 1
    else:
        errors: list = []
        ids = set(wanted) if stage == "selective" else None
        for _ in stream_reviews(path, errors, business_ids=ids):
            count += 1
        if errors:
            raise SystemExit(f"unexpected problems: {errors[:3]}")
    seconds = time.perf_counter() - start
    peak_kib = peak_rss_kib()
    return {
        "records": count,
        "seconds": seconds,
        "peak_rss_mib": peak_kib / 1024,
        "growth_mib": (peak_kib - base_kib) / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--size-gb", type=float, default=2.0, help="Size of the synthetic review file (GB, 1e9 bytes)."
    )
    parser.add_argument(
        "--tmp-dir", type=Path, default=None, help="Where to write it (default: system temp)."
    )
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--wanted", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:  # child mode
        wanted = json.loads(args.wanted.read_text()) if args.wanted else []
        print(json.dumps(run_stage(args.stage, args.file, wanted)))
        return

    tmp = Path(tempfile.mkdtemp(prefix="bench_kb_", dir=args.tmp_dir))
    try:
        path = tmp / "yelp_academic_dataset_review.json"
        t0 = time.perf_counter()
        lines, businesses = generate(path, int(args.size_gb * 1e9))
        size_mb = path.stat().st_size / 1e6
        print(f"generated {lines:,} reviews, {size_mb:,.0f} MB in {time.perf_counter() - t0:.1f}s at {path}")
        wanted_path = tmp / "wanted.json"
        wanted_path.write_text(json.dumps(random.Random(1).sample(businesses, len(businesses) // 100)))
        results = {}
        for stage in ("reference", "loader", "selective"):
            cmd = [
                sys.executable,
                __file__,
                "--stage",
                stage,
                "--file",
                str(path),
                "--wanted",
                str(wanted_path),
            ]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            results[stage] = json.loads(out.strip().splitlines()[-1])
        ref = results["reference"]
        print(
            f"\n{'stage':<10} {'records':>11} {'seconds':>8} {'reviews/s':>11} {'MB/s':>7} {'vs ref':>7} {'peak RSS MiB':>13} {'growth MiB':>11}"
        )
        for stage, r in results.items():
            rate = lines / r["seconds"]
            print(
                f"{stage:<10} {r['records']:>11,} {r['seconds']:>8.1f} {rate:>11,.0f} {size_mb / r['seconds']:>7.1f} "
                f"{ref['seconds'] / r['seconds']:>6.2f}x {r['peak_rss_mib']:>13.1f} {r['growth_mib']:>11.1f}"
            )
        print(
            "\nreviews/s counts every line read (the selective stage yields ~1% of them); growth = peak RSS"
        )
        print("during the stage minus peak RSS after imports (constant memory: does not grow with the file).")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
