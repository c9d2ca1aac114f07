"""Benchmark: ``crs score`` on a large dataset — loading + scoring CPU and peak memory (issue 16 item 1), as
ratios against a reference measured in the same run.

    python -u benchmarks/bench_loading.py [--dataset DIR] [--dialogues 10000] [--split all]
        [--settings closed,open] [--ref COMMIT] [--paths ref,lean] [--repeat 1]
        [--yelp ../shared/data/yelp_dense]

* **data** — ``--dataset`` (a folder built by ``groundtrace crs build``; its KB is found from the manifest),
  or a fresh build of ``--dialogues`` dialogues on the demo KB (``crs kb demo`` + ``crs build --seed 0``,
  setup, not timed). Per setting a deterministic synthetic predictions file (seeded): per recommendation
  turn a ranking of the setting's pool with the gold at a random rank, and as response the dataset's own
  system turn (verbatim quotes and tags), mutated for some turns like ``bench_metrics.py`` does.
* **paths** — each in a fresh ``python`` process pinned to one CPU, doing what ``crs score`` does (load the
  split, resolve the KB, ``score_file`` into a new run folder):

  - ``ref``: the reference commit ``--ref`` (default: ``main``) in a ``git worktree``, loading with
    ``load_records`` (the lean reader) when it has one, else ``load_dataset``;
  - ``pydantic``: this checkout, loading with ``load_dataset`` (pydantic models; ``--paths`` adds it);
  - ``lean``: this checkout, loading with ``load_records`` (the lean reader; what ``crs score`` uses).
* **reported** — per path: load CPU s, score CPU s (``score_file``: predictions, pool check, metrics,
  writing the folder), the whole process's CPU s (start-up and imports included) and peak RSS, the ratio
  ref / lean of each, and whether ``scores.json`` is identical to the reference's. Targets: load + score ≤
  10 s CPU on one core and ≤ 400 MB peak RSS for the whole ``lean`` process on 10k dialogues. The script
  exits 1 when any ``scores.json`` differs.
* ``--yelp DIR`` — also builds a dataset on the real Yelp KB (``crs kb build`` + ``crs build``, 1,000
  dialogues) and runs the same comparison on it (identity of the scores is the point there).

Times depend on the machine and its load (the development machine has 2 shared cores): compare the ratios.
The reference and this checkout must both read the dataset's KB: code refuses a KB of another format or
stance version (``StaleKnowledgeBaseError`` in a child), so pick a ``--ref`` with this checkout's KB version.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REF = "main"  # a branch against main; 7a3773c: main before the scoring fast paths (issue 16 item 1)

CHILD = r"""
import json, os, resource, sys, time
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from pathlib import Path
from groundtrace.crs.evaluation import loading
from groundtrace.crs.evaluation.offline import score_file
dataset, predictions, out, setting, split, loader = sys.argv[1:7]
c0 = time.process_time()
data = getattr(loading, loader)(dataset, split)
knowledge = loading.resolve_kb(None, data.manifest, data)
c1 = time.process_time()
result = score_file(predictions, data, knowledge, out, setting=setting, split=split, dataset=dataset)
c2 = time.process_time()
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"load": c1 - c0, "score": c2 - c1, "process": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024, "dialogues": len(data), "turns": result.table.n_turns}))
"""


def _cli(*args: str, src: Path = ROOT / "src") -> None:
    """``groundtrace ARGS`` of this checkout."""
    code = "import sys; from groundtrace.cli import main; sys.argv = ['groundtrace'] + sys.argv[1:]; main()"
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], check=False, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"groundtrace {' '.join(args)}: {proc.stderr.strip()[-500:]}")


def synthetic_predictions(dialogues: list, setting: str, seed: int, out: Path) -> int:  # type: ignore[type-arg]
    """Write a deterministic run of ``setting`` over the recommendation turns (module docstring)."""
    rng = random.Random(f"bench-loading:{setting}:{seed}")
    lines = []
    for d in dialogues:
        for turn in d.recommendation_turns():
            u = rng.random()
            if u < 0.02:
                continue  # missing prediction
            base = {"dialogue_id": d.dialogue_id, "turn_index": turn.index, "setting": setting}
            if u < 0.05:
                lines.append({**base, "error": "timeout"})
                continue
            pool = list(d.candidates) if setting == "closed" else list(turn.gold.open_pool)
            others = [p for p in pool if p != turn.gold.gold_poi]
            rng.shuffle(others)
            ranking = others[: 10 if setting == "open" else len(others)]
            ranking.insert(rng.randint(0, min(3, len(ranking))), turn.gold.gold_poi)
            text = turn.text
            v = rng.random()
            if v < 0.20:
                text = text.replace("[", "(").replace("]", ")")
            elif v < 0.35 and '"' in text:
                i = text.index('"') + 1 + rng.randint(0, 8)
                if i < len(text) and text[i].isalpha():
                    text = text[:i] + ("x" if text[i] != "x" else "y") + text[i + 1 :]
            elif v < 0.45:
                text = f'{text} Also "the jukebox plays only polka on tuesdays" [R1].'
            lines.append({**base, "system": "synthetic", "ranking": ranking, "response": text})
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return len(lines)


def _child(src: Path, loader: str, dataset: Path, preds: Path, out: Path, setting: str, split: str) -> dict:  # type: ignore[type-arg]
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    args = [str(dataset), str(preds), str(out), setting, split, loader]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, *args], check=False, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"{src} ({loader}): failed: {proc.stderr.strip()[-800:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _compare(
    dataset: Path, split: str, settings: list[str], ref_src: Path, tmp: Path, repeat: int, names: list[str]
) -> bool:
    """Run the paths ``names`` on ``dataset`` for each setting; print the table; True when all scores
    agree."""
    sys.path.insert(0, str(ROOT / "src"))
    from groundtrace.crs.evaluation.loading import load_records

    dialogues = load_records(dataset, split)
    ref_loader = "load_records" if "def load_records" in (
        ref_src / "groundtrace" / "crs" / "evaluation" / "loading.py"
    ).read_text(encoding="utf-8") else "load_dataset"  # fmt: skip
    every = {"ref": (ref_src, ref_loader), "pydantic": (ROOT / "src", "load_dataset"),
             "lean": (ROOT / "src", "load_records")}  # fmt: skip
    paths = {name: every[name] for name in ["ref", *names] if name in every}
    print(f"ref loads with {ref_loader}; load average at the start: {os.getloadavg()[0]:.1f}")
    identical = True
    print(f"{'setting':8} {'path':9} {'load s':>7} {'score s':>8} {'l+s s':>7} {'process s':>10} "
          f"{'peak MB':>8}  scores.json")  # fmt: skip
    for setting in settings:
        preds = tmp / f"predictions.{setting}.jsonl"
        n_preds = synthetic_predictions(list(dialogues), setting, 0, preds)
        best: dict[str, dict] = {}  # type: ignore[type-arg]
        for _ in range(repeat):
            for name, (src, loader) in paths.items():
                out = tmp / f"run.{setting}.{name}"
                if out.exists():
                    subprocess.run(["rm", "-rf", str(out)], check=True)
                got = _child(src, loader, dataset, preds, out, setting, split)
                if name not in best or got["load"] + got["score"] < best[name]["load"] + best[name]["score"]:
                    best[name] = got
        ref_scores = (tmp / f"run.{setting}.ref" / "scores.json").read_bytes()
        for name, got in best.items():
            same = (tmp / f"run.{setting}.{name}" / "scores.json").read_bytes() == ref_scores
            identical &= same
            both = got["load"] + got["score"]
            print(
                f"{setting:8} {name:9} {got['load']:7.2f} {got['score']:8.2f} {both:7.2f} "
                f"{got['process']:10.2f} {got['rss_mb']:8.0f}  {'identical' if same else 'DIFFERENT'}"
            )
        r, n = best["ref"], best["lean"]
        print(
            f"{'':8} ref/lean: load {r['load'] / n['load']:.1f}x, score {r['score'] / n['score']:.2f}x, "
            f"load+score {(r['load'] + r['score']) / (n['load'] + n['score']):.2f}x, "
            f"peak RSS {r['rss_mb'] / n['rss_mb']:.1f}x  ({n['dialogues']} dialogues, {n['turns']} turns, "
            f"{n_preds} predictions)"
        )
        ok_cpu, ok_rss = n["load"] + n["score"] <= 10.0, n["rss_mb"] <= 400
        print(
            f"{'':8} targets (10k dialogues): load+score <= 10 s CPU {'met' if ok_cpu else 'NOT met'}, "
            f"peak RSS <= 400 MB {'met' if ok_rss else 'NOT met'}"
        )
    return identical


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, help="dataset folder (default: build --dialogues on the demo KB)")
    ap.add_argument("--dialogues", type=int, default=10_000)
    ap.add_argument("--split", default="all")
    ap.add_argument("--settings", default="closed,open")
    ap.add_argument("--ref", default=DEFAULT_REF, help="reference commit (default: main)")
    ap.add_argument("--paths", default="ref,lean", help="paths to run besides ref: lean, pydantic")
    ap.add_argument("--repeat", type=int, default=1, help="runs per path; the best is reported")
    ap.add_argument("--yelp", type=Path, help="also compare on a build over this real Yelp folder")
    args = ap.parse_args()
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="bench_loading_") as tmp_name:
        tmp = Path(tmp_name)
        ref = tmp / "ref"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(ref), args.ref],
                       check=True, capture_output=True)  # fmt: skip
        try:
            dataset = args.dataset
            if dataset is None:
                _cli("crs", "kb", "demo", "--out", str(tmp / "kb.sqlite"))
                dataset = tmp / "ds"
                _cli("crs", "build", "--kb", str(tmp / "kb.sqlite"), "--dialogues", str(args.dialogues),
                     "--seed", "0", "--out", str(dataset))  # fmt: skip
            print(f"reference: {args.ref} (git worktree); dataset {dataset} split {args.split}; CPU seconds, "
                  "one core per process")  # fmt: skip
            names = [p.strip() for p in args.paths.split(",") if p.strip()]
            identical = _compare(dataset, args.split, settings, ref / "src", tmp, args.repeat, names)
            if args.yelp is not None:
                yelp = tmp / "yelp"
                _cli("crs", "kb", "build", "--yelp-dir", str(args.yelp), "--out", str(tmp / "yelp.sqlite"),
                     "--no-progress")  # fmt: skip
                _cli("crs", "build", "--kb", str(tmp / "yelp.sqlite"), "--dialogues", "1000", "--seed", "0",
                     "--out", str(yelp))  # fmt: skip
                print(f"\nreal data: {args.yelp} (1000 dialogues)")
                (tmp / "y").mkdir()
                identical &= _compare(yelp, "all", settings, ref / "src", tmp / "y", args.repeat, names)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(ref)], check=False)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (shared machine: CPU time, compare the ratios)")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
