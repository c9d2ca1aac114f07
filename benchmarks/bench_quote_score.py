"""Benchmark: ``quote_score`` against a difflib best-window reference, measured in the same run.

    python benchmarks/bench_quote_score.py            # 10,000 sources
    python benchmarks/bench_quote_score.py --n 2000

Inputs (seeded ``random.Random``): ``--n`` synthetic review-length sources (600–1,200 characters, with
curly quotes, dashes and accented words), each paired with one quote of 40–150 characters, cycling
through four kinds:

* ``exact`` — a verbatim substring starting at a word boundary;
* ``edited`` — such a substring with 1–3 character edits (substitution, deletion or insertion) and its
  first letter's case flipped;
* ``heavy`` — such a substring with edits on 10–45% of its characters (around the 0.80 threshold,
  where the two scorers can disagree);
* ``absent`` — a substring of another source.

Reference: the same normalisation (``normalize_text``), then the classic difflib partial ratio — for each
matching block of ``SequenceMatcher(None, q, s)`` the window of ``len(q)`` characters aligned with it is
scored with ``SequenceMatcher.ratio()`` and the best window wins; grounded at ``>= 0.80``.

The reference is slow, so it runs on the first ``--ref-n`` cases (default 2,000; kinds interleave, so
all four are represented); quote_score runs on all ``--n``. Default runtime is well under 2 minutes.

Reported: calls/s of both, the speed ratio (``> 1`` = quote_score faster), and the agreement of the
grounded / not-grounded decisions overall and per quote kind. Ratios compare across machines; absolute
rates do not.

Second part, on the labelled real pairs of ``tests/fixtures/quotes`` (625 Yelp pairs, 5 per review):
``quote_scores(pairs, score_cutoff=0.80)`` (each review normalised once per batch, caches cleared before
each round) against raw ``rapidfuzz.fuzz.partial_ratio(quote, review)`` on the same pairs, CPU time
(``time.process_time``: the dev machine is shared, wall time is not comparable between loops of
different length), best of ``--rounds``; prints both rates, the ratio (target >= 0.5), the rate without
a cutoff, and the precision/recall of "grounded" for both (raw: ``>= 80``).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

from rapidfuzz import fuzz

from groundtrace.core.evidence import quotes as quotes_module
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, normalize_text, quote_score, quote_scores

PAIRS_DIR = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "quotes"

_VOCABULARY = """
    hotel lobby check-in desk clerk suite balcony ocean view pool towels spa sauna gym elevator hallway
    carpet mattress pillows blackout curtains shower pressure breakfast buffet omelette station coffee
    pastries croissant bartender cocktails happy hour rooftop terrace skyline museum exhibit gallery
    docent audio guide tickets line queue gift shop garden fountain trail hike overlook sunset ferry
    tram subway station parking valet shuttle airport noisy quiet spotless dusty friendly rude helpful
    slow quick pricey affordable cozy spacious cramped modern dated charming crowded peaceful
    café naïve crème brûlée jalapeño piñata señor façade über déjà-vu
"""
WORDS = _VOCABULARY.split()
PUNCT = [".", ".", "!", ",", ",", " —", ";"]
KINDS = ("exact", "edited", "heavy", "absent")


def make_source(rng: random.Random) -> str:
    target = rng.randint(600, 1200)
    parts: list[str] = []
    length = 0
    while length < target:
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 16))]
        if rng.random() < 0.2:
            i = rng.randrange(len(words))
            words[i] = f"“{words[i]}”"
        sentence = " ".join(words).capitalize() + rng.choice(PUNCT)
        parts.append(sentence)
        length += len(sentence) + 1
    return " ".join(parts)[:target].rstrip()


def substring(rng: random.Random, source: str) -> str:
    size = rng.randint(40, 150)
    starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == " " and i + 1 < len(source) - size]
    start = rng.choice(starts)
    return source[start : start + size].strip()


def edit(rng: random.Random, quote: str, n_edits: int) -> str:
    chars = list(quote)
    for _ in range(n_edits):
        i = rng.randrange(1, len(chars) - 1)
        op = rng.choice(("sub", "del", "ins"))
        if op == "sub":
            chars[i] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif op == "del":
            del chars[i]
        else:
            chars.insert(i, rng.choice("abcdefghijklmnopqrstuvwxyz"))
    chars[0] = chars[0].swapcase()
    return "".join(chars)


def make_cases(n: int, seed: int) -> list[tuple[str, str, str]]:
    """``(kind, quote, source)`` triples."""
    rng = random.Random(seed)
    sources = [make_source(rng) for _ in range(n)]
    cases = []
    for i, source in enumerate(sources):
        kind = KINDS[i % len(KINDS)]
        if kind == "exact":
            quote = substring(rng, source)
        elif kind == "edited":
            quote = edit(rng, substring(rng, source), rng.randint(1, 3))
        elif kind == "heavy":
            quote = substring(rng, source)
            quote = edit(rng, quote, max(1, round(len(quote) * rng.uniform(0.1, 0.45))))
        else:
            quote = substring(rng, sources[(i + 1 + rng.randrange(n - 1)) % n] if n > 1 else make_source(rng))
        cases.append((kind, quote, source))
    return cases


def difflib_score(quote: str, source: str) -> float:
    """Reference: best ``SequenceMatcher.ratio`` over windows aligned with the matching blocks."""
    q, s = normalize_text(quote), normalize_text(source)
    if not q or not s:
        return 0.0
    if len(q) > len(s):
        return SequenceMatcher(None, q, s, autojunk=False).ratio()
    best = 0.0
    for block in SequenceMatcher(None, q, s, autojunk=False).get_matching_blocks():
        start = max(0, min(block.b - block.a, len(s) - len(q)))
        ratio = SequenceMatcher(None, q, s[start : start + len(q)], autojunk=False).ratio()
        if ratio > best:
            best = ratio
            if best == 1.0:
                break
    return best


def timed(fn, cases: list[tuple[str, str, str]]) -> tuple[list[float], float]:
    t0 = time.process_time()
    scores = [fn(quote, source) for _, quote, source in cases]
    return scores, time.process_time() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="number of sources (one quote each)")
    parser.add_argument("--ref-n", type=int, default=2_000, help="cases scored by the difflib reference")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5, help="rounds on the labelled pairs (best is kept)")
    parser.add_argument("--pairs-only", action="store_true", help="only the labelled-pairs part")
    args = parser.parse_args()
    if args.pairs_only:
        labelled_pairs(args.rounds)
        return
    if args.n < len(KINDS):
        parser.error(f"--n must be at least {len(KINDS)} (one quote of each kind)")

    cases = make_cases(args.n, args.seed)
    ours, t_ours = timed(quote_score, cases)
    ref_cases = cases[: max(len(KINDS), min(args.ref_n, len(cases)))]
    ref, t_ref = timed(difflib_score, ref_cases)

    rate_ours, rate_ref = len(cases) / t_ours, len(ref_cases) / t_ref
    print(
        f"cases: {len(cases)} for quote_score, first {len(ref_cases)} for the reference "
        f"(sources 600-1,200 chars, quotes 40-150 chars, seed {args.seed})"
    )
    print(f"quote_score (rapidfuzz): {rate_ours:12,.0f} calls/s  ({t_ours:.2f} s)")
    print(f"difflib reference:       {rate_ref:12,.0f} calls/s  ({t_ref:.2f} s)")
    print(f"speed ratio: {rate_ours / rate_ref:.1f}x")

    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    grounded_ours: Counter[str] = Counter()
    grounded_ref: Counter[str] = Counter()
    for (kind, _, _), a, b in zip(ref_cases, ours, ref, strict=False):
        ga, gb = a >= GROUNDED_THRESHOLD, b >= GROUNDED_THRESHOLD
        total[kind] += 1
        agree[kind] += ga == gb
        grounded_ours[kind] += ga
        grounded_ref[kind] += gb
    print(
        f"decision agreement on the {len(ref_cases)} shared cases: {sum(agree.values()) / len(ref_cases):.2%}"
    )
    for kind in KINDS:
        print(
            f"  {kind:7s} agreement {agree[kind] / total[kind]:7.2%}   grounded: quote_score "
            f"{grounded_ours[kind] / total[kind]:7.2%}, reference {grounded_ref[kind] / total[kind]:7.2%}"
        )
    labelled_pairs(args.rounds)


def _clear_caches() -> None:
    for name in ("normalize_with_map", "_normalize_text_cached", "_gaps_cached", "_kept_positions"):
        getattr(quotes_module, name).cache_clear()


def _precision_recall(grounded: list[bool], labels: list[bool]) -> tuple[float, float]:
    tp = sum(g and lab for g, lab in zip(grounded, labels, strict=True))
    fp = sum(g and not lab for g, lab in zip(grounded, labels, strict=True))
    fn = sum(lab and not g for g, lab in zip(grounded, labels, strict=True))
    return tp / max(1, tp + fp), tp / max(1, tp + fn)


def labelled_pairs(rounds: int) -> None:
    """Speed ratio and precision/recall on the labelled real pairs."""
    reviews = {}
    for line in (PAIRS_DIR / "quote_reviews.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        reviews[row["review_id"]] = row["text"]
    rows = [
        json.loads(line)
        for line in (PAIRS_DIR / "quote_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    pairs = [(r["quote"], reviews[r["review_id"]]) for r in rows]
    labels = [bool(r["label"]) for r in rows]
    t_raw = t_ours = t_full = float("inf")
    for _ in range(rounds):
        _clear_caches()
        t0 = time.process_time()
        quote_scores(pairs)
        t_full = min(t_full, time.process_time() - t0)
        t0 = time.process_time()
        raw = [fuzz.partial_ratio(q, s) for q, s in pairs]
        t_raw = min(t_raw, time.process_time() - t0)
        _clear_caches()
        t0 = time.process_time()
        ours = quote_scores(pairs, score_cutoff=GROUNDED_THRESHOLD)
        t_ours = min(t_ours, time.process_time() - t0)
    rate_raw, rate_ours = len(pairs) / t_raw, len(pairs) / t_ours
    print(f"\nlabelled real pairs: {len(pairs)} on {len(reviews)} reviews (best of {rounds} rounds)")
    print(f"raw fuzz.partial_ratio:  {rate_raw:12,.0f} pairs/s")
    print(f"quote_scores (batched):  {rate_ours:12,.0f} pairs/s")
    print(f"speed ratio quote_scores / partial_ratio: {rate_ours / rate_raw:.2f} (target >= 0.50)")
    print(
        f"  without score_cutoff (exact scores below 0.80 too): {len(pairs) / t_full:,.0f} pairs/s, "
        f"ratio {len(pairs) / t_full / rate_raw:.2f}"
    )
    p_ours, r_ours = _precision_recall([s >= GROUNDED_THRESHOLD for s in ours], labels)
    p_raw, r_raw = _precision_recall([s >= 100 * GROUNDED_THRESHOLD for s in raw], labels)
    print(
        f"grounded precision/recall: quote_score {p_ours:.3f}/{r_ours:.3f}, "
        f"raw partial_ratio>=80 {p_raw:.3f}/{r_raw:.3f}"
    )
    for kind in ("verbatim", "case_punct", "typo", "paraphrase", "wrong_review"):
        idx = [i for i, r in enumerate(rows) if r["kind"] == kind]
        ours_g = sum(ours[i] >= GROUNDED_THRESHOLD for i in idx) / len(idx)
        raw_g = sum(raw[i] >= 100 * GROUNDED_THRESHOLD for i in idx) / len(idx)
        print(f"  {kind:12s} grounded: quote_score {ours_g:7.2%}, raw partial_ratio {raw_g:7.2%}")


if __name__ == "__main__":
    main()
