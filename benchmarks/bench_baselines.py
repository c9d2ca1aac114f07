"""Benchmark: the nine offline baselines (+ trace-hybrid) on N dialogues, closed and open set.

    python -u benchmarks/bench_baselines.py [--dialogues 10000] [--open-dialogues 1000] [--seed 0]
        [--systems popularity,tfidf,...] [--no-dense] [--processes 2] [--dataset DIR --kb KB]
        [--save DIR] [--compare DIR] [--profile NAME]

1. Builds the demo KB and ``--dialogues`` dialogues (template realiser), or loads ``--dataset`` (a dataset
   folder, ``--split``, ``--kb``) — setup, not timed.
2. Builds every :class:`SystemInput` of the setting once (``crs.evaluation.inputs.system_inputs``, the
   runner's own inputs; timed and reported as ``inputs``, the runner's share, paid once per run).
3. Answers them with the reference ``random`` and then with each system, ``--processes`` worker processes
   at a time (dialogues split in contiguous shards; one system instance per process, as one run would
   build it). Per system: wall seconds, CPU seconds (all processes), ms CPU per turn, and the ratio of its
   CPU time to ``random``'s measured in the same run (the machine is shared: compare ratios).
4. Scores the answers (not timed) — R@1 (open: open R@1), CGS, evidence_support, rejection recovery.

``--save DIR`` writes each system's predictions (``DIR/<system>-<setting>.jsonl``); ``--compare DIR``
compares the new answers with a saved run: the share of turns with the same ranking and the same
response, and the metric deltas (a speed change must not change results, or only for a stated reason).
``--profile NAME`` runs cProfile on one system (in-process) and prints the top functions.

Target (issue 11): the nine baselines, closed set, 10k dialogues, <= 3 min in total on 2 cores.
"""

from __future__ import annotations

import argparse
import cProfile
import itertools
import json
import multiprocessing as mp
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.systems import OFFLINE_SYSTEMS, build_system
from groundtrace.crs.systems.predictions import Prediction, SystemInput

METRICS = "recall@1,open_recall@1,cgs,evidence_support,rejection_recovery"
NINE = [s for s in OFFLINE_SYSTEMS if s != "trace-hybrid"]

_SHARED: dict[str, Any] = {}  # inputs handed to forked workers without pickling


def _answer(name: str, options: dict, inputs: list[SystemInput]) -> tuple[list[Prediction], float]:
    """Predictions of ``name`` on ``inputs`` and the CPU seconds spent (system construction included)."""
    c0 = time.process_time()
    system = build_system(name, **options)
    preds = []
    for inp in inputs:
        out = system.respond(inp)
        preds.append(
            Prediction(
                dialogue_id=inp.dialogue_id,
                turn_index=inp.turn_index,
                setting=inp.setting,
                system=name,
                ranking=list(out.ranking),
                response=out.response,
            )
        )
    close = getattr(system, "close", None)
    if callable(close):
        close()
    return preds, time.process_time() - c0


def _shard_job(args: tuple[str, dict, int, int]) -> tuple[list[dict], float]:
    name, options, lo, hi = args
    preds, cpu = _answer(name, options, _SHARED["inputs"][lo:hi])
    return [p.model_dump() for p in preds], cpu


def _shards(inputs: list[SystemInput], n: int) -> list[tuple[int, int]]:
    """``n`` contiguous index ranges of ``inputs`` cut at dialogue boundaries."""
    if n <= 1 or len(inputs) < 2:
        return [(0, len(inputs))]
    cuts = [0]
    for k in range(1, n):
        i = len(inputs) * k // n
        while 0 < i < len(inputs) and inputs[i].dialogue_id == inputs[i - 1].dialogue_id:
            i += 1
        cuts.append(i)
    cuts.append(len(inputs))
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


def run_system_on(
    name: str, options: dict, inputs: list[SystemInput], processes: int
) -> tuple[list[Prediction], float, float]:
    """``(predictions, wall_s, cpu_s)`` of one system over ``inputs``: in this process, or in
    ``processes`` fresh forked workers (a system's caches start empty, as in its own ``crs run``)."""
    t0 = time.perf_counter()
    if processes <= 1:
        preds, cpu = _answer(name, options, inputs)
        return preds, time.perf_counter() - t0, cpu
    _SHARED["inputs"] = inputs
    with mp.get_context("fork").Pool(processes) as pool:  # forked now: the inputs are inherited
        parts = pool.map(_shard_job, [(name, options, a, b) for a, b in _shards(inputs, processes)])
    preds = [Prediction.model_validate(p) for part, _ in parts for p in part]
    return preds, time.perf_counter() - t0, sum(cpu for _, cpu in parts)


def _metrics(dialogues, preds, kb, setting) -> dict[str, float]:
    table = score_predictions(dialogues, preds, kb, setting=setting, metrics=METRICS.split(","))
    r1 = table.value("recall@1" if setting == "closed" else "open_recall@1")
    return {
        "R@1": r1 or 0.0,
        "CGS": table.value("cgs") or 0.0,
        "ES": table.value("evidence_support") or 0.0,
        "recovery": table.value("rejection_recovery") or 0.0,
    }


def _compare(saved: Path, preds: list[Prediction]) -> str:
    if not saved.exists():
        return "(no saved run)"
    old = {}
    for line in saved.read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        old[(p["dialogue_id"], p["turn_index"])] = p
    same_rank = same_resp = n = 0
    for p in preds:
        o = old.get((p.dialogue_id, p.turn_index))
        if o is None:
            continue
        n += 1
        same_rank += o["ranking"] == p.ranking
        same_resp += o["response"] == p.response
    return f"same ranking {same_rank}/{n}, same response {same_resp}/{n}"


def _load(args) -> tuple[list, Any]:
    if args.dataset:
        from groundtrace.crs.evaluation.loading import load_dataset, resolve_kb

        data = load_dataset(args.dataset, args.split)
        return list(data), resolve_kb(args.kb, data.manifest, data)
    from groundtrace.crs.build.builder import build_dialogues
    from groundtrace.crs.kb.demo import generate_demo_kb

    kb = generate_demo_kb(seed=args.seed)
    dialogues, _report = build_dialogues(kb, args.dialogues, args.seed)
    return dialogues, kb


def _in_child(fn: Any, *args: Any) -> None:
    proc = mp.get_context("fork").Process(target=fn, args=args)
    proc.start()
    proc.join()


def warm_documents(inputs: list[SystemInput], cache: str) -> None:
    """Encode every distinct POI document of ``inputs`` into the embedding cache (a KB's first dense run
    pays this once; reported apart from the per-turn cost)."""
    from groundtrace.crs.systems.toolkit.dense import Encoder, load_bundled_model
    from groundtrace.crs.systems.toolkit.documents import document_key, poi_document, reviews_by_poi

    t0, c0 = time.perf_counter(), time.process_time()
    encoder = Encoder(load_bundled_model("cpu"), cache_dir=cache)
    docs: dict[tuple[str, ...], str] = {}
    for inp in inputs:
        by_poi = reviews_by_poi(inp.reviews)
        for card in inp.candidates:
            key = document_key(card, by_poi.get(card.poi_id, []))
            if key not in docs:
                docs[key] = poi_document(card, by_poi.get(card.poi_id, []))
    encoder.encode(list(docs.values()))
    encoder.save()
    print(
        f"dense warm-up: {len(docs)} distinct POI documents encoded in {time.perf_counter() - t0:.1f}s wall, "
        f"{time.process_time() - c0:.1f}s CPU (model load included)"
    )


def _profile(name: str, options: dict, inputs: list[SystemInput]) -> None:
    prof = cProfile.Profile()
    prof.enable()
    _answer(name, options, inputs)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def _system_options(name: str, args, cache: str) -> dict:
    opts: dict[str, Any] = {}
    if name in ("hybrid-rrf", "trace-hybrid") and args.no_dense:
        opts["dense"] = False
    elif name in ("dense", "hybrid-rrf", "trace-hybrid"):
        opts["cache_dir"] = cache
    return opts


def _run_setting(setting: str, dialogues, kb, systems, args, cache: str) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    inputs = [inp for d in dialogues for _, inp in system_inputs(d, kb, setting)]
    in_wall, in_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"\n{setting} set, {len(dialogues)} dialogues, {len(inputs)} turns; "
        f"inputs built once: {in_wall:.1f}s wall, {in_cpu:.1f}s CPU"
    )
    if any(s in ("dense", "hybrid-rrf", "trace-hybrid") for s in systems) and not args.no_dense:
        _in_child(warm_documents, inputs, cache)  # torch stays out of the parent (forks stay safe)
    _, ref_wall, ref_cpu = run_system_on("random", {}, inputs, args.processes)
    print(f"random (reference): {ref_wall:.1f}s wall, {ref_cpu:.1f}s CPU")
    head = f"{'system':>13} {'wall_s':>7} {'cpu_s':>7} {'ms cpu/turn':>11} {'x random':>8}"
    print(f"{head}   R@1    CGS     ES   recovery  vs saved")
    total_wall = total_cpu = 0.0
    for name in systems:
        preds, wall, cpu = run_system_on(name, _system_options(name, args, cache), inputs, args.processes)
        if name in NINE:
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        m = _metrics(dialogues, preds, kb, setting)
        saved = Path(args.compare) / f"{name}-{setting}.jsonl" if args.compare else None
        if args.save:
            out = Path(args.save) / f"{name}-{setting}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(p.model_dump_json() + "\n" for p in preds), encoding="utf-8")
        print(
            f"{name:>13} {wall:7.1f} {cpu:7.1f} {1000 * cpu / max(len(inputs), 1):11.2f} "
            f"{cpu / max(ref_cpu, 1e-9):8.1f}  {m['R@1']:.3f}  {m['CGS']:.3f}  {m['ES']:.3f}  "
            f"{m['recovery']:.3f}  {_compare(saved, preds) if saved else ''}"
        )
    print(
        f"baselines of the nine in this run, {setting} set: {total_wall:.1f}s wall, "
        f"{total_cpu:.1f}s CPU (+ inputs {in_wall:.1f}s wall once)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dialogues", type=int, default=10_000)
    ap.add_argument("--open-dialogues", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dataset", help="a dataset folder instead of the demo build")
    ap.add_argument("--split", default="test")
    ap.add_argument("--kb", default=None)
    ap.add_argument("--settings", default="closed,open")
    ap.add_argument("--systems", default=",".join(OFFLINE_SYSTEMS))
    ap.add_argument("--no-dense", action="store_true", help="skip dense; hybrids without the encoder")
    ap.add_argument("--processes", type=int, default=2, help="worker processes per system (1: in-process)")
    ap.add_argument("--save", help="write predictions to DIR/<system>-<setting>.jsonl")
    ap.add_argument("--compare", help="compare with predictions saved by --save in DIR")
    ap.add_argument("--profile", help="cProfile one system (in-process) instead of the table")
    args = ap.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s and not (args.no_dense and s == "dense")]

    t0 = time.perf_counter()
    dialogues, kb = _load(args)
    print(f"setup: {len(dialogues)} dialogues ready in {time.perf_counter() - t0:.1f}s (not timed)")
    with tempfile.TemporaryDirectory() as cache:
        if args.profile:
            inputs = [inp for d in dialogues for _, inp in system_inputs(d, kb, args.settings.split(",")[0])]
            if args.profile in ("dense", "hybrid-rrf", "trace-hybrid") and not args.no_dense:
                warm_documents(inputs, cache)
            _profile(args.profile, _system_options(args.profile, args, cache), inputs)
            return 0
        for setting in args.settings.split(","):
            subset = dialogues if setting == "closed" else dialogues[: args.open_dialogues]
            _run_setting(setting, subset, kb, systems, args, cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
