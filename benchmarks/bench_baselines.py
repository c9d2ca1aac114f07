"""Benchmark: the nine offline baselines (+ trace-hybrid) on N dialogues, closed and open set.

    python -u benchmarks/bench_baselines.py [--dialogues 10000] [--open-dialogues 1000] [--seed 0]
        [--systems popularity,tfidf,...] [--no-dense] [--processes 2] [--dataset DIR --kb KB --split all]
        [--limit N] [--reference SRC] [--no-score] [--save DIR] [--compare DIR] [--profile NAME]

1. Builds the demo KB and ``--dialogues`` dialogues (template realiser), or loads ``--dataset`` (a dataset
   folder, ``--split``, ``--kb``; lean records as ``crs run`` reads them; ``--limit`` keeps the first N)
   — setup, not timed.
2. Builds every :class:`SystemInput` of the setting once (``crs.evaluation.inputs.system_inputs``, the
   runner's own inputs; timed and reported as ``inputs``, the runner's share, paid once per run).
3. Answers them with the reference ``random`` and then with each system, ``--processes`` worker processes
   at a time (dialogues split in contiguous shards; one system instance per process, as one run would
   build it). Per system: wall seconds, CPU seconds (all processes), ms CPU per turn, and the ratio of its
   CPU time to ``random``'s measured in the same run (the machine is shared: compare ratios).
   ``--reference SRC`` (the ``src`` folder of another checkout, e.g. a ``git worktree`` of an older commit)
   also runs each system from that code, right before the current one, on the same inputs (forked
   workers that drop the loaded ``groundtrace`` modules and import SRC's; the inputs are handed over as
   they are, so both must share the ``SystemInput`` fields): its CPU seconds, the ratio new/reference,
   and whether both answered every turn the same (ranking and response).
4. Scores the answers (not timed; ``--no-score`` skips it) — R@1 (open: open R@1), CGS,
   evidence_support, rejection recovery.

``--save DIR`` writes each system's predictions (``DIR/<system>-<setting>.jsonl``); ``--compare DIR``
compares the new answers with a saved run: the share of turns with the same ranking and the same
response, and the metric deltas (a speed change must not change results, or only for a stated reason).
``--profile NAME`` runs cProfile on one system (in-process) and prints the top functions.

Target (issue 11): the nine baselines, closed set, 10k dialogues, <= 3 min in total on 2 cores. The last
line gives the nine's CPU seconds and ``CPU / 2``: the wall time on two cores of their own (the wall time
measured here depends on the machine's load).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import itertools
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


def _use_source(src: str | None) -> Any:
    """``build_system`` of the current code, or (in a forked worker) of the checkout whose ``src`` folder
    is ``src``: the loaded ``groundtrace`` modules are dropped and imported again from there."""
    if not src:
        return build_system
    loaded = sorted(m for m in sys.modules if m == "groundtrace" or m.startswith("groundtrace."))
    for mod in loaded:
        del sys.modules[mod]
    sys.path.insert(0, str(Path(src).resolve()))
    importlib.invalidate_caches()
    systems = importlib.import_module("groundtrace.crs.systems")
    for mod in loaded:  # what the current code had loaded, so that neither side imports while timed
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    try:
        from groundtrace.crs.systems.toolkit.sparse import analyzer

        analyzer()("warm up")
    except ImportError:  # older code: built on first use (timed)
        pass
    if not str(Path(systems.__file__).resolve()).startswith(str(Path(src).resolve())):
        raise RuntimeError(f"--reference {src}: imported {systems.__file__} instead")
    return systems.build_system


def _answer(
    name: str, options: dict, inputs: list[SystemInput], src: str | None = None
) -> tuple[list[Prediction], float]:
    """Predictions of ``name`` on ``inputs`` and the CPU seconds spent (system construction included);
    ``src``: the reference code (:func:`_use_source`, untimed)."""
    build = _use_source(src)
    c0 = time.process_time()
    system = build(name, **options)
    preds = []
    for inp in inputs:
        out = system.respond(inp)
        preds.append((inp.dialogue_id, inp.turn_index, inp.setting, list(out.ranking), out.response))
    close = getattr(system, "close", None)
    if callable(close):
        close()
    cpu = time.process_time() - c0
    return [
        Prediction(dialogue_id=d, turn_index=t, setting=s, system=name, ranking=r, response=resp)
        for d, t, s, r, resp in preds
    ], cpu


def _shard_job(args: tuple[str, dict, int, int, str | None]) -> tuple[list[tuple], float]:
    name, options, lo, hi, src = args
    preds, cpu = _answer(name, options, _SHARED["inputs"][lo:hi], src)
    return [(p.dialogue_id, p.turn_index, p.setting, p.ranking, p.response) for p in preds], cpu


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
    name: str,
    options: dict,
    inputs: list[SystemInput],
    processes: int,
    src: str | None = None,
    fork: bool = False,
) -> tuple[list[Prediction], float, float]:
    """``(predictions, wall_s, cpu_s)`` of one system over ``inputs``: in this process, or in
    ``processes`` fresh forked workers (a system's caches start empty, as in its own ``crs run``);
    ``src``: run the reference code's system (always in forked workers); ``fork``: forked workers even
    for one process (module-level caches start as cold as the reference's)."""
    t0 = time.perf_counter()
    if processes <= 1 and not src and not fork:
        preds, cpu = _answer(name, options, inputs)
        return preds, time.perf_counter() - t0, cpu
    _SHARED["inputs"] = inputs
    jobs = [(name, options, a, b, src) for a, b in _shards(inputs, processes)]
    # forked now: the inputs are inherited; a fresh worker per shard (a reference import stays there)
    with mp.get_context("fork").Pool(len(jobs), maxtasksperchild=1) as pool:
        parts = pool.map(_shard_job, jobs, chunksize=1)
    preds = [
        Prediction(dialogue_id=d, turn_index=t, setting=s, system=name, ranking=r, response=resp)
        for part, _ in parts
        for d, t, s, r, resp in part
    ]
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


def _same(old: list[Prediction], new: list[Prediction]) -> str:
    """``same N/M``: turns where both runs gave the same ranking and the same response."""
    by_key = {(p.dialogue_id, p.turn_index): p for p in old}
    n = same = 0
    for p in new:
        o = by_key.get((p.dialogue_id, p.turn_index))
        if o is None:
            continue
        n += 1
        same += o.ranking == p.ranking and o.response == p.response
    return f"same {same}/{n}"


def _compare(saved: Path, preds: list[Prediction]) -> str:
    if not saved.exists():
        return "(no saved run)"
    old = [Prediction.model_validate_json(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    return f"saved: {_same(old, preds)}"


def _load(args) -> tuple[list, Any]:
    if args.dataset:
        from groundtrace.crs.evaluation.loading import load_records, resolve_kb

        data = load_records(args.dataset, args.split)
        dialogues = list(data)[: args.limit] if args.limit else list(data)
        return dialogues, resolve_kb(args.kb, data.manifest, data)
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


def _row(name: str, wall: float, cpu: float, turns: int, ref_cpu: float) -> str:
    per_turn = 1000 * cpu / max(turns, 1)
    return f"{name:>13} {wall:7.1f} {cpu:7.1f} {per_turn:11.3f} {cpu / max(ref_cpu, 1e-9):8.1f}"


def _preload() -> None:
    """Import what the systems import lazily (scikit-learn's analyzer, ~1 s CPU) before forking: a run pays
    it once per process, not per turn; the forked workers inherit it."""
    from groundtrace.crs.systems.toolkit.sparse import analyzer

    analyzer()("warm up")


def _run_setting(setting: str, dialogues, kb, systems, args, cache: str) -> None:
    _preload()
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
    if args.reference:
        head += f" {'ref cpu_s':>9} {'ref ms/turn':>11} {'new/ref':>7} {'answers vs ref':>16}"
    print(head + ("" if args.no_score else "   R@1    CGS     ES   recovery") + "  vs saved")
    total = {"wall": 0.0, "cpu": 0.0, "ref_cpu": 0.0}
    for name in systems:
        opts = _system_options(name, args, cache)
        line, ref_part = "", ""
        if args.reference:
            ref_cache = tempfile.mkdtemp(prefix="ref-", dir=cache)  # its own embedding cache, same warm-up
            for f in Path(cache).glob("*.npz"):
                (Path(ref_cache) / f.name).write_bytes(f.read_bytes())
            ref_opts = {**opts, "cache_dir": ref_cache} if "cache_dir" in opts else opts
            ref_preds, _w, r_cpu = run_system_on(name, ref_opts, inputs, args.processes, args.reference)
            total["ref_cpu"] += r_cpu if name in NINE else 0.0
        preds, wall, cpu = run_system_on(name, opts, inputs, args.processes, fork=bool(args.reference))
        if args.reference:
            ref_part = (
                f" {r_cpu:9.1f} {1000 * r_cpu / max(len(inputs), 1):11.3f} {cpu / max(r_cpu, 1e-9):7.2f} "
                f"{_same(ref_preds, preds):>16}"
            )
        if name in NINE:
            total["wall"] += wall
            total["cpu"] += cpu
        if not args.no_score:
            m = _metrics(dialogues, preds, kb, setting)
            line = f"  {m['R@1']:.3f}  {m['CGS']:.3f}  {m['ES']:.3f}  {m['recovery']:.3f}"
        saved = Path(args.compare) / f"{name}-{setting}.jsonl" if args.compare else None
        if args.save:
            out = Path(args.save) / f"{name}-{setting}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(p.model_dump_json() + "\n" for p in preds), encoding="utf-8")
        compared = _compare(saved, preds) if saved else ""
        print(f"{_row(name, wall, cpu, len(inputs), ref_cpu)}{ref_part}{line}  {compared}", flush=True)
    nine = [s for s in systems if s in NINE]
    ref = f"; reference code {total['ref_cpu']:.1f}s CPU" if args.reference else ""
    print(
        f"the {len(nine)} of the nine baselines in this run, {setting} set, {len(inputs)} turns: "
        f"{total['wall']:.1f}s wall, {total['cpu']:.1f}s CPU = {total['cpu'] / 2:.1f}s on 2 cores of their "
        f"own{ref} (+ inputs {in_cpu:.1f}s CPU once)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dialogues", type=int, default=10_000)
    ap.add_argument("--open-dialogues", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dataset", help="a dataset folder instead of the demo build")
    ap.add_argument("--split", default="test")
    ap.add_argument("--kb", default=None)
    ap.add_argument("--limit", type=int, default=None, help="the first N dialogues of --dataset")
    ap.add_argument("--reference", help="the src folder of a reference checkout, run on the same inputs")
    ap.add_argument("--no-score", action="store_true", help="do not score the answers")
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
