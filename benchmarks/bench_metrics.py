"""Benchmark: score every non-NLI TRACE-CRS metric on a 10k-dialogue run; compare with the difflib reference.

    python benchmarks/bench_metrics.py [--dialogues 10000] [--sample 300] [--seed 0] [--no-memory]

1. Builds the demo KB (``generate_demo_kb``) and ``--dialogues`` dialogues (``build_dialogues``, template
   realiser) — setup, not timed.
2. Makes one deterministic synthetic run (seeded ``random.Random``): per recommendation turn a ranking of
   the closed candidates with the gold at a random rank, and a response taken from the dataset's own system
   turn (verbatim quotes + tags), mutated for some turns: tags stripped (20%), one letter of a quote changed
   (15%), an unrelated quote (10%), a prediction error (3%) or no prediction (2%).
3. Times ``score_predictions`` over all non-NLI metrics (target <= 20 s on one core — the process is
   pinned to one CPU where the OS allows it; process CPU time is
   reported because the machine is shared, wall time alongside), and measures the
   peak Python allocation of that call (tracemalloc, in a second untimed call) plus the process max RSS.
4. On a sample of ``--sample`` dialogues, times the fast path and the slow difflib reference
   (``groundtrace.crs.metrics.reference``) on the metrics the reference implements, checks that they give
   the same per-turn values, and reports the per-turn speed ratio (target >= 30x). The reference's time
   for the full run is extrapolated per turn from the sample — it is not run on all turns.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import sys
import time
import tracemalloc

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.metrics import DEFAULT_METRICS
from groundtrace.crs.metrics.lexicon import load_lexicon
from groundtrace.crs.metrics.reference import reference_turn_values
from groundtrace.crs.schema import Dialogue
from groundtrace.crs.systems.predictions import Prediction

REFERENCE_METRICS = (
    "gs", "cd", "pc", "cgs", "citation_validity", "citation_rate", "hallucinated_attribute_rate",
    "spatial_coherence",
)  # fmt: skip


def synthetic_run(dialogues: list[Dialogue], seed: int) -> list[Prediction]:
    """A deterministic system run over the dialogues' recommendation turns (see module docstring)."""
    rng = random.Random(f"bench-metrics:{seed}")
    preds: list[Prediction] = []
    for d in dialogues:
        for turn in d.recommendation_turns():
            assert turn.gold is not None
            u = rng.random()
            if u < 0.02:
                continue  # missing prediction
            if u < 0.05:
                preds.append(Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, error="timeout"))
                continue
            others = [c for c in d.candidates if c != turn.gold.gold_poi]
            rng.shuffle(others)
            ranking = list(others)
            ranking.insert(rng.randint(0, min(3, len(others))), turn.gold.gold_poi)
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
            preds.append(
                Prediction(dialogue_id=d.dialogue_id, turn_index=turn.index, ranking=ranking, response=text)
            )
    return preds


def _turn_context(d: Dialogue, turn_index: int) -> tuple[str, tuple[str, ...]]:
    """What the scorer gives every turn besides the answer: the user's turns before it (a quote copied from
    them is no support) and the names of the dialogue's anchors (attribute words inside them are no
    mentions) — without them the reference scores another definition (HAR/PC differed on anchor names)."""
    user = "\n".join(u.text for u in d.turns if u.role == "user" and u.index < turn_index)
    anchors = [d.anchor] + [leg.anchor for leg in d.legs]
    return user, tuple(dict.fromkeys(a.name for a in anchors if a is not None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc pass")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):  # "on one core": pin the process to a single CPU
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    t0 = time.perf_counter()
    kb = generate_demo_kb(args.seed)
    dialogues, _report = build_dialogues(kb, args.dialogues, args.seed)
    preds = synthetic_run(dialogues, args.seed)
    n_turns = sum(len(d.recommendation_turns()) for d in dialogues)
    print(
        f"setup: {len(dialogues)} dialogues, {n_turns} recommendation turns, {len(preds)} predictions, "
        f"demo KB {len(kb)} POIs / {len(kb.reviews)} reviews ({time.perf_counter() - t0:.1f} s, not timed)"
    )

    metrics = [m for m in DEFAULT_METRICS if m.requires is None and m.setting != "open"]
    load_lexicon()  # loaded once per process; not part of a run
    t, c = time.perf_counter(), time.process_time()
    table = score_predictions(dialogues, preds, kb, metrics=metrics)
    fast_s, fast_wall = time.process_time() - c, time.perf_counter() - t
    print(
        f"fast: {len(metrics)} metrics x {n_turns} turns in {fast_s:.2f} s CPU "
        f"({1e6 * fast_s / n_turns:.0f} us/turn; wall {fast_wall:.2f} s)  [target <= 20 s on one core]"
    )
    print("  " + "  ".join(f"{k}={v:.3f}" for k, v in table.aggregate.items() if v is not None))
    print(f"  unscorable turns: {table.counts['recall@1'].unscorable}")

    if not args.no_memory:
        tracemalloc.start()
        score_predictions(dialogues, preds, kb, metrics=metrics)
        _cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"memory: peak Python allocation during scoring {peak / 2**20:.1f} MiB (tracemalloc); "
            f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
        )

    # -- fast vs difflib reference on a sample -----------------------------------------------------------
    sample = random.Random(args.seed).sample(dialogues, min(args.sample, len(dialogues)))
    sample_ids = {d.dialogue_id for d in sample}
    sample_preds = [p for p in preds if p.dialogue_id in sample_ids]
    c = time.process_time()
    fast_table = score_predictions(sample, sample_preds, kb, metrics=list(REFERENCE_METRICS))
    fast_sample_s = time.process_time() - c
    lexicon = load_lexicon()
    by_key = {(p.dialogue_id, p.turn_index): p for p in sample_preds}
    refs = {d.dialogue_id: d.review_refs for d in sample}
    by_dialogue = {d.dialogue_id: d for d in sample}
    answered = [r for r in fast_table.turns if r.scorable]
    gc.disable()  # same conditions as score_predictions, which pauses the cyclic GC
    c = time.process_time()
    expected = []
    for rec in answered:
        p = by_key[(rec.dialogue_id, rec.turn_index)]
        d = by_dialogue[rec.dialogue_id]
        expected.append(
            reference_turn_values(
                p.response, p.ranking, refs[rec.dialogue_id], kb, lexicon, *_turn_context(d, rec.turn_index)
            )
        )
    ref_s = time.process_time() - c
    gc.enable()
    mismatches: dict[str, int] = {}
    for rec, want in zip(answered, expected, strict=True):
        for name in REFERENCE_METRICS:
            got, exp = rec.values[name], want[name]
            if (got is None) != (exp is None) or (
                got is not None and exp is not None and abs(got - exp) > 1e-9
            ):
                mismatches[name] = mismatches.get(name, 0) + 1
    fast_per_turn = fast_sample_s / max(1, len(answered))  # per answered turn, as the reference
    ref_per_turn = ref_s / max(1, len(answered))
    print(
        f"reference sample: {len(sample)} dialogues, {len(answered)} answered turns, "
        f"{len(REFERENCE_METRICS)} metrics"
    )
    print(
        f"  CPU: fast {1e6 * fast_per_turn:.0f} us/turn, difflib reference {1e6 * ref_per_turn:.0f} us/turn "
        f"-> {ref_per_turn / fast_per_turn:.0f}x faster  [target >= 30x]"
    )
    print(f"  reference extrapolated per turn to the full run: {ref_per_turn * n_turns:.0f} s "
          f"(not run; {len(answered)}-turn sample)")  # fmt: skip
    total = len(answered) * len(REFERENCE_METRICS)
    bad = sum(mismatches.values())
    print(f"  load average at the end: {os.getloadavg()[0]:.1f} (shared machine: times are process CPU time)")
    print(
        f"  same values: {total - bad}/{total} turn-metric values equal (|diff| <= 1e-9); mismatches "
        f"{mismatches or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
