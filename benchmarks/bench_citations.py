"""Benchmark: ``parse_citations`` calls/s on realistic system responses against the implementation it
replaced.

    python benchmarks/bench_citations.py [--dialogues 400] [--rounds 5] [--seed 0] [--scoring 0]

Inputs (setup, not timed): the system responses of ``--dialogues`` demo dialogues (``generate_demo_kb`` +
``build_dialogues``, template realiser), varied the way ``bench_metrics.py``'s synthetic run varies them
(seeded ``random.Random``): tags in parentheses (20%), an extra trailing quote (10%), unchanged otherwise;
plus *long* answers (10 responses joined as a numbered list, one per line) and *one-line* texts
(the same responses joined by spaces up to 2k/8k/32k characters: the scaling case).

The old implementation is a frozen copy (below; verbatim but for names and docstrings) of
``core.citations`` before the O(n log n) rewrite. First both must give equal claims on every input; then
each round times one pass of the old and one of the new over each corpus (process CPU time; best round
wins, both measured in the same run under the same load). Reported: calls/s for each and the ratio
(``> 1`` = new faster). Ratios compare across machines; absolute rates do not.

``--scoring N`` adds the end-to-end view: ``bench_metrics.py``'s synthetic run over N dialogues is scored
(``score_predictions``, the non-NLI closed-setting metrics, as there) with ``core.citations.parse_citations``
swapped for the old copy and back, alternating for ``--rounds`` rounds in this one process; the aggregates
must be equal, and the best CPU time of each is reported.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

from citations_v1 import _old_parse_citations  # the frozen pre-rewrite parser, in this folder

from groundtrace.core.evidence.citations import (
    parse_citations,
)

# -- corpus --------------------------------------------------------------------------------------------------


def responses(n_dialogues: int, seed: int) -> list[str]:
    """System responses of the demo dialogues, varied like ``bench_metrics.synthetic_run``."""
    from groundtrace.crs.build.builder import build_dialogues
    from groundtrace.crs.kb.demo import generate_demo_kb

    dialogues, _ = build_dialogues(generate_demo_kb(seed), n_dialogues, seed)
    rng = random.Random(f"bench-citations:{seed}")
    out = []
    for d in dialogues:
        for turn in d.recommendation_turns():
            text, u = turn.text, rng.random()
            if u < 0.20:
                text = text.replace("[", "(").replace("]", ")")
            elif u < 0.30:
                text = f'{text} Also "the jukebox plays only polka on tuesdays" [R1].'
            out.append(text)
    return out


def one_line(texts: list[str], size: int) -> str:
    """Responses joined by spaces into one line of at least ``size`` characters (cycling if needed)."""
    parts, total, i = [], 0, 0
    while total < size:
        parts.append(texts[i % len(texts)])
        total += len(parts[-1]) + 1
        i += 1
    return " ".join(parts)


def best_pass(fn: Callable[[str], object], texts: list[str], rounds: int) -> float:
    """Best process-CPU seconds of one pass of ``fn`` over ``texts``."""
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - t)
    return best


def scoring_ab(n_dialogues: int, seed: int, rounds: int) -> int:
    """Score one synthetic run with the old and the new parser, alternating (see module docstring)."""
    from bench_metrics import synthetic_run  # benchmarks/ is on sys.path when run as a script

    from groundtrace.core.evidence import citations
    from groundtrace.crs.build.builder import build_dialogues
    from groundtrace.crs.evaluation.score import score_predictions
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.metrics import DEFAULT_METRICS
    from groundtrace.crs.metrics.lexicon import load_lexicon

    kb = generate_demo_kb(seed)
    dialogues, _ = build_dialogues(kb, n_dialogues, seed)
    preds = synthetic_run(dialogues, seed)
    metrics = [m for m in DEFAULT_METRICS if m.requires is None and m.setting != "open"]
    load_lexicon()
    new_parse = citations.parse_citations
    best = {"old": float("inf"), "new": float("inf")}
    aggregates = {}
    try:
        for _ in range(rounds):
            for name, fn in (("old", _old_parse_citations), ("new", new_parse)):
                citations.parse_citations = fn  # what crs.metrics._evidence calls
                t = time.process_time()
                table = score_predictions(dialogues, preds, kb, metrics=metrics)
                best[name] = min(best[name], time.process_time() - t)
                aggregates[name] = table.aggregate
    finally:
        citations.parse_citations = new_parse
    if aggregates["old"] != aggregates["new"]:
        print("MISMATCH: scoring aggregates differ between old and new parser", file=sys.stderr)
        return 1
    n_turns = sum(len(d.recommendation_turns()) for d in dialogues)
    print(f"scoring {len(metrics)} metrics x {n_turns} turns ({n_dialogues} dialogues, equal aggregates): "
          f"old parser {best['old']:.2f} s CPU, new {best['new']:.2f} s CPU "
          f"-> {100 * (1 - best['new'] / best['old']):.0f}% less")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scoring", type=int, default=0, metavar="N", help="also A/B-score N dialogues")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    short = responses(args.dialogues, args.seed)
    rng = random.Random(f"bench-citations-long:{args.seed}")
    long = [
        "\n".join(f"{k}. {t}" for k, t in enumerate(rng.sample(short, 10), 1))
        for _ in range(len(short) // 10)
    ]
    corpora = {
        "responses": short,
        "long answers (10 lines)": long,
        **{f"one line {n // 1000}k chars": [one_line(short, n)] for n in (2_000, 8_000, 32_000)},
    }
    for name, texts in corpora.items():
        bad = sum(parse_citations(t) != _old_parse_citations(t) for t in texts)
        if bad:
            print(f"MISMATCH: {bad}/{len(texts)} {name} texts parse differently", file=sys.stderr)
            return 1
    print(
        f"setup: {len(short)} responses (mean {sum(map(len, short)) / len(short):.0f} chars), "
        f"{len(long)} long answers; old and new give equal claims on all "
        f"({time.perf_counter() - t0:.1f} s)"
    )

    for name, texts in corpora.items():
        reps = max(1, 300_000 // sum(map(len, texts)))  # >= 300k characters per pass
        batch = texts * reps
        old_s = new_s = float("inf")
        for _ in range(args.rounds):  # alternate, so both see the same load
            old_s = min(old_s, best_pass(_old_parse_citations, batch, 1))
            new_s = min(new_s, best_pass(parse_citations, batch, 1))
        chars = sum(map(len, texts)) / len(texts)
        print(f"{name:<26} ({chars:>6.0f} chars): old {len(batch) / old_s:>9.0f} calls/s   "
              f"new {len(batch) / new_s:>9.0f} calls/s   ratio {old_s / new_s:5.1f}x")  # fmt: skip
    return scoring_ab(args.scoring, args.seed, args.rounds) if args.scoring else 0


if __name__ == "__main__":
    sys.exit(main())
