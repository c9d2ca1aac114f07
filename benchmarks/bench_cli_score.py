"""Benchmark: the commands users run — ``crs score``, ``crs run`` and ``crs leaderboard`` on a large dataset —
each as a child process (the CLI, start-up and imports included), against plain ``json.loads`` of the same
files measured in the same run (issue 25 item 1).

    python -u benchmarks/bench_cli_score.py [--dataset DIR] [--dialogues 10000] [--system random]
        [--max-ratio 4] [--max-mb 400] [--keep DIR] [--repeat 1]

* **data** — ``--dataset`` (a folder built by ``groundtrace crs build``; its KB is found from the
  manifest), or a fresh ``groundtrace crs build --kb demo --dialogues N --seed 0`` (setup, not measured).
* **measured**, in this order, each a child process whose own CPU (user + system) and peak RSS come from
  ``os.wait4`` (the child's ``rusage``; ``RUSAGE_CHILDREN`` would mix the children's peaks):

  1. ``groundtrace crs run --dataset DS --split all --system SYSTEM --out RUN`` (a cheap system: its
     ``predictions.jsonl`` is the file scored next);
  2. the reference: a ``python`` child that ``json.loads`` every line of the dataset's split files and of
     that predictions file (keeping the objects);
  3. ``groundtrace crs score --dataset DS --split all --predictions RUN/predictions.jsonl --out SCORE``;
  4. ``groundtrace crs leaderboard --dataset DS --split all --systems SYSTEM --settings closed --out LB
     --resamples 100``.

  With ``--repeat N`` (N > 1) steps 2 and 3 run N times, in turn (reference, score, reference, score, ...),
  and the table shows the median of each (the ratio: the median of the N per-pair ratios, each pair
  measured side by side; the N ratios are listed); the load of a shared machine moves one pair by ±0.5×.

* **reported** — CPU s, peak RSS MB, and CPU as a multiple of the reference's, per command; whether
  ``SCORE/scores.json`` is byte-identical to ``RUN/scores.json`` (the same answers scored by both paths).
  Exit 1 when ``crs score`` takes more than ``--max-ratio`` × the reference's CPU (the median ratio with
  ``--repeat``) or more than ``--max-mb`` MB (the largest peak), or when the two ``scores.json`` differ.

Times depend on the machine and its load (the development machine has 2 shared cores): compare the ratios,
which are measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REFERENCE = r"""
import json, sys
kept = []
for name in sys.argv[1:]:
    with open(name, "rb") as handle:
        kept.append([json.loads(line) for line in handle if line.strip()])
print(sum(len(k) for k in kept), "lines")
"""


@dataclass
class Measure:
    """One child process: its CPU seconds (user + system), peak RSS (MB) and exit status."""

    name: str
    cpu_s: float
    peak_mb: float
    status: int


def measure(name: str, argv: list[str], log: Path) -> Measure:
    """Run ``argv`` as a child (stdout and stderr to ``log``) and read its own ``rusage`` by ``os.wait4``."""
    with log.open("wb") as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    peak_kb = usage.ru_maxrss  # kilobytes on Linux
    result = Measure(name, usage.ru_utime + usage.ru_stime, peak_kb / 1024, child.returncode)
    if result.status != 0:
        sys.exit(f"{name} failed (exit {result.status}); see {log}:\n{log.read_text()[-2000:]}")
    return result


def median_of(name: str, measures: list[Measure]) -> Measure:
    """One row for repeated measures: the median CPU and the largest peak RSS."""
    return Measure(
        name,
        statistics.median(m.cpu_s for m in measures),
        max(m.peak_mb for m in measures),
        max(m.status for m in measures),
    )


def groundtrace() -> list[str]:
    """The CLI as the user runs it: the ``groundtrace`` console script next to this Python."""
    script = Path(sys.executable).with_name("groundtrace")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "groundtrace.cli"]


def build(folder: Path, dialogues: int) -> Path:
    dataset = folder / "dataset"
    argv = [*groundtrace(), "crs", "build", "--kb", "demo", "--dialogues", str(dialogues), "--seed", "0"]
    subprocess.run([*argv, "--out", str(dataset)], check=True, stdout=subprocess.DEVNULL)
    return dataset


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, help="dataset folder (default: a fresh demo build)")
    parser.add_argument("--dialogues", type=int, default=10_000, help="dialogues of the fresh build")
    parser.add_argument("--system", default="random", help="the cheap system run and put on the leaderboard")
    parser.add_argument(
        "--max-ratio", type=float, default=4.0, help="crs score CPU / json.loads CPU, at most"
    )
    parser.add_argument("--max-mb", type=float, default=400.0, help="crs score peak RSS (MB), at most")
    parser.add_argument("--keep", type=Path, help="folder for the outputs (default: a temporary one)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="reference + crs score pairs measured in turn (median shown)"
    )
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-cli-"))
    work.mkdir(parents=True, exist_ok=True)
    for name in ("run", "score", "leaderboard"):
        shutil.rmtree(work / name, ignore_errors=True)
    dataset = args.dataset or build(work, args.dialogues)
    files = sorted(str(p) for p in dataset.glob("*.jsonl"))
    cli = groundtrace()
    common = ["--dataset", str(dataset), "--split", "all"]
    run = measure(
        "crs run",
        [*cli, "crs", "run", *common, "--system", args.system, "--out", str(work / "run")],
        work / "run.log",
    )
    predictions = work / "run" / "predictions.jsonl"
    pairs = []
    for _ in range(max(1, args.repeat)):
        reference = measure(
            "json.loads", [sys.executable, "-c", REFERENCE, *files, str(predictions)], work / "json.log"
        )
        score = measure(
            "crs score",
            [*cli, "crs", "score", *common, "--predictions", str(predictions), "--out", str(work / "score")],
            work / "score.log",
        )
        pairs.append((reference, score))
    ratios = [s.cpu_s / r.cpu_s for r, s in pairs]
    reference = median_of("json.loads", [r for r, _ in pairs])
    score = median_of("crs score", [s for _, s in pairs])
    board = measure(
        "crs leaderboard",
        [*cli, "crs", "leaderboard", *common, "--systems", args.system, "--settings", "closed",
         "--resamples", "100", "--out", str(work / "leaderboard")],
        work / "leaderboard.log",
    )  # fmt: skip

    size = sum(Path(f).stat().st_size for f in [*files, str(predictions)]) / 2**20
    print(f"dataset {dataset} ({len(files)} split files) + predictions: {size:.0f} MB of JSONL")
    print(f"{'command':<16} {'CPU s':>8} {'peak MB':>8} {'× json CPU':>11}")
    ratio = statistics.median(ratios)
    for m in (reference, score, run, board):
        shown = ratio if m is score else m.cpu_s / reference.cpu_s
        print(f"{m.name:<16} {m.cpu_s:8.2f} {m.peak_mb:8.0f} {shown:11.2f}")
    if len(pairs) > 1:
        print(
            f"crs score / json.loads CPU of the {len(pairs)} pairs: " + ", ".join(f"{r:.2f}" for r in ratios)
        )
    same = (work / "score" / "scores.json").read_bytes() == (work / "run" / "scores.json").read_bytes()
    print(f"crs score scores.json identical to crs run's: {same}")
    failed = []
    if ratio > args.max_ratio:
        failed.append(f"crs score CPU is {ratio:.2f} × json.loads (target ≤ {args.max_ratio:g})")
    if score.peak_mb > args.max_mb:
        failed.append(f"crs score peak RSS {score.peak_mb:.0f} MB (target ≤ {args.max_mb:g} MB)")
    if not same:
        failed.append("crs score and crs run wrote different scores.json for the same answers")
    for line in failed:
        print(f"FAIL: {line}")
    if not args.keep and not args.dataset:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
