"""Benchmark: CLI start-up of catalog commands (issue 25 item 5) against a reference source tree.

Each command line runs in a fresh interpreter (``python -c "from groundtrace.cli import main; ..."``) with
``PYTHONPATH`` set to this checkout's ``src`` or to the reference's; runs of the two alternate, so both see
the same machine load. Reported: the median CPU time (user + sys of the child, ``getrusage``) per command
and tree, their ratio, and the modules each imported (a fresh ``sys.modules`` count; ``groundtrace.catalog``,
numpy, pint and scipy among them). Goal: ``catalog enrich --help`` imports no catalog stage.

    git archive d4475f8 src | tar -x -C /tmp/ref        # the reference: before issue 25 item 5
    python benchmarks/bench_cli_help.py --reference /tmp/ref/src [--runs 9] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["catalog", "enrich", "--help"], ["catalog", "import", "--help"], ["--version"])
PROBE = (
    "import io, contextlib, json, sys\n"
    "from groundtrace.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    try:\n"
    "        main(sys.argv[1:])\n"
    "    except SystemExit:\n"
    "        pass\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def _run(src: Path, args: list[str]) -> tuple[float, list[str]]:
    """CPU seconds (user + sys) of one fresh interpreter running ``args``, and the modules it imported."""
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(done.stdout.strip().splitlines()[-1])


def _counts(modules: list[str]) -> dict[str, int]:
    tops = [m.split(".")[0] for m in modules]
    return {
        "modules": len(modules),
        "groundtrace.catalog": sum(m.startswith("groundtrace.catalog") for m in modules),
        **{name: tops.count(name) for name in ("numpy", "pint", "scipy")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="src/ folder of the reference tree")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    trees = {"reference": args.reference.resolve(), "current": ROOT / "src"}
    rows = []
    for command in COMMANDS:
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        modules: dict[str, list[str]] = {}
        for _ in range(args.runs):
            for name, src in trees.items():
                seconds, modules[name] = _run(src, command)
                cpu[name].append(seconds)
        median = {name: statistics.median(values) for name, values in cpu.items()}
        row = {
            "command": " ".join(command),
            "cpu_s": median,
            "ratio": median["current"] / median["reference"],
            "imports": {name: _counts(mods) for name, mods in modules.items()},
        }
        rows.append(row)
        print(
            f"{row['command']:<24} reference {median['reference']:.3f} s  current {median['current']:.3f} s  "
            f"({row['ratio']:.2f}x)  imports {row['imports']['reference']} -> {row['imports']['current']}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
