"""Benchmark: ``parse_citations`` calls/s on realistic system responses against the implementation it replaced.

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
import re
import sys
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from functools import lru_cache

from groundtrace.core.citations import (
    INNER_ABBREVIATIONS,
    MAX_SINGLE_QUOTE,
    NUMBER_ABBREVIATIONS,
    TITLE_ABBREVIATIONS,
    CitedClaim,
    QuotedSpan,
    Tag,
    parse_citations,
)

# -- frozen copy of the old implementation ----------------------------------------------------------------

_QUOTE_CLOSERS = {'"': '"”', "“": '”"', "„": "“”", "«": "»", "'": "'’", "‘": "’'"}
_SINGLE_OPENERS = "'‘"


@lru_cache(maxsize=16)
def _old_group_re(prefix: str) -> re.Pattern[str]:
    label = rf"{re.escape(prefix)}[0-9]{{1,6}}"
    sep = r"[^\S\n]*[,;][^\S\n]*"
    return re.compile(rf"\[[^\S\n]*{label}(?:{sep}{label})*[^\S\n]*\]")


@lru_cache(maxsize=16)
def _old_label_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"{re.escape(prefix)}([0-9]{{1,6}})")


@lru_cache(maxsize=16)
def _old_strip_re(prefix: str) -> re.Pattern[str]:
    return re.compile(rf"[^\S\n]*{_old_group_re(prefix).pattern}")


def _old_groups(text: str, prefix: str) -> list[tuple[int, int, list[Tag]]]:
    label_re = _old_label_re(prefix)
    out = []
    for group in _old_group_re(prefix).finditer(text):
        tags = [
            Tag(m.group(0), int(m.group(1)), m.start(), m.end())
            for m in label_re.finditer(text, group.start(), group.end())
        ]
        out.append((group.start(), group.end(), tags))
    return out


def _old_find_tags(text: str, prefix: str = "R") -> list[Tag]:
    return [tag for _, _, tags in _old_groups(text, prefix) for tag in tags]


def _old_strip_tags(text: str, prefix: str = "R") -> str:
    return _old_strip_re(prefix).sub("", text)


_OLD_OPENER_RE = re.compile("[" + re.escape("".join(_QUOTE_CLOSERS)) + "]")
_OLD_CLOSER_RE = re.compile("[" + re.escape("".join(set("".join(_QUOTE_CLOSERS.values())))) + "]")


def _old_valid_closers(text: str) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for m in _OLD_CLOSER_RE.finditer(text):
        k = m.start()
        if k > 0 and not text[k - 1].isspace() and not (k + 1 < len(text) and text[k + 1].isalnum()):
            out.setdefault(m.group(), []).append(k)
    return out


def _old_find_quotes(text: str) -> list[QuotedSpan]:
    closers_at = _old_valid_closers(text)
    newlines = [m.start() for m in re.finditer("\n", text)]
    spans: list[QuotedSpan] = []
    resume = 0
    for m in _OLD_OPENER_RE.finditer(text):
        i, ch = m.start(), m.group()
        if i < resume or i + 1 >= len(text) or text[i + 1].isspace() or (i > 0 and text[i - 1].isalnum()):
            continue
        after = bisect_right(newlines, i)
        line_end = newlines[after] if after < len(newlines) else len(text)
        limit = min(line_end, i + 2 + MAX_SINGLE_QUOTE) if ch in _SINGLE_OPENERS else line_end
        candidates = [
            positions[j]
            for closer in _QUOTE_CLOSERS[ch]
            if (positions := closers_at.get(closer)) and (j := bisect_left(positions, i + 2)) < len(positions)
        ]
        k = min(candidates, default=len(text))
        if k < limit:
            spans.append(QuotedSpan(text[i + 1 : k], i + 1, k))
            resume = k + 1
    return spans


_OLD_END_RE = re.compile(r"[.!?…]+[\"'”“’»)\]]*(?:[^\S\n]*\[[^\[\]\n]{1,200}\])*")
_OLD_WORD_BEFORE_RE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")


def _old_is_abbreviation(line: str, dot: int, after: str) -> bool:
    m = _OLD_WORD_BEFORE_RE.search(line, max(0, dot - 40), dot)
    if not m:
        return False
    word = m.group(1)
    lower = word.lower()
    if len(word) == 1 and word.isupper():
        return True  # an initial: "J. K. Rowling"
    if lower in TITLE_ABBREVIATIONS or lower in INNER_ABBREVIATIONS:
        return True
    return lower in NUMBER_ABBREVIATIONS and after[:1].isdigit()


def _old_line_sentences(line: str, offset: int) -> list[tuple[int, int]]:
    quotes = _old_find_quotes(line)
    quote_starts = [q.start for q in quotes]
    spans = []
    start = 0
    for m in _OLD_END_RE.finditer(line):
        end = m.end()
        rest = line[end:]
        if rest and not rest[0].isspace():
            continue
        after = rest.lstrip()
        if after and after[0].islower():
            continue
        before = line[start : m.start()].strip()
        if not _old_has_words(before) or before.isdigit():  # "!!!" or a list number "1."
            continue
        inside = bisect_left(quote_starts, end) - 1  # the last quote opening before `end`
        if inside >= 0 and end <= quotes[inside].end:
            continue
        if (
            m.group(0).startswith(".")
            and not m.group(0).startswith("..")
            and _old_is_abbreviation(line, m.start(), after)
        ):
            continue
        spans.append((start, end))
        start = end
    spans.append((start, len(line)))
    out = []
    for a, b in spans:
        piece = line[a:b]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            out.append((offset + a + lead, offset + a + lead + len(stripped)))
    return out


def _old_split_sentences(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        out.extend(_old_line_sentences(line, offset))
        offset += len(line) + 1
    return out


_OLD_LEAD_RE = re.compile(r"(?:[\s,;:]|[-*•](?=\s)|[0-9]{1,3}[.)](?=\s))*")


def _old_has_words(fragment: str) -> bool:
    return any(ch.isalnum() for ch in fragment)


def _old_claim(
    text: str, a: int, b: int, quotes: list[QuotedSpan], tags: list[Tag], prefix: str
) -> CitedClaim:
    a += _OLD_LEAD_RE.match(text, a, b).end() - a  # type: ignore[union-attr]
    while b > a and text[b - 1].isspace():
        b -= 1
    inner = [q for q in quotes if a <= q.start < b]
    return CitedClaim(_old_strip_tags(text[a:b], prefix).strip(), a, b, inner, tags)


def _old_parse_citations(text: str, prefix: str = "R") -> list[CitedClaim]:
    groups = _old_groups(text, prefix)
    quotes = _old_find_quotes(text)
    quote_starts = [q.start for q in quotes]
    claims: list[CitedClaim] = []
    g = 0
    for s0, s1 in _old_split_sentences(text):
        while g < len(groups) and groups[g][0] < s0:  # cannot happen with our splitter; kept safe
            g += 1
        segments: list[list] = []  # [start, end, tags]
        pending: list[Tag] = []
        cursor = s0
        while g < len(groups) and groups[g][1] <= s1:
            g0, g1, tags = groups[g]
            g += 1
            if not _old_has_words(text[cursor:g0]):
                if segments:
                    segments[-1][1] = g1
                    segments[-1][2].extend(tags)
                else:
                    pending.extend(tags)
            else:
                segments.append([cursor, g1, pending + tags])
                pending = []
            cursor = g1
        trailing_quote = bisect_left(quote_starts, cursor) < bisect_left(quote_starts, s1)
        if segments and not trailing_quote:
            segments[-1][1] = s1
        elif _old_has_words(text[cursor:s1]) or trailing_quote or pending:
            segments.append([cursor if segments else s0, s1, pending])
        for a, b, tags in segments:
            claims.append(
                _old_claim(
                    text,
                    a,
                    b,
                    quotes[bisect_left(quote_starts, a) : bisect_left(quote_starts, b)],
                    tags,
                    prefix,
                )
            )
    return claims


# -- corpus ---------------------------------------------------------------------------------------------------


def responses(n_dialogues: int, seed: int) -> list[str]:
    """System responses of the demo dialogues, varied like ``bench_metrics.synthetic_run``."""
    from groundtrace.crs.build import build_dialogues
    from groundtrace.crs.demo_kb import generate_demo_kb

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

    from groundtrace.core import citations
    from groundtrace.crs.build import build_dialogues
    from groundtrace.crs.demo_kb import generate_demo_kb
    from groundtrace.crs.metrics import DEFAULT_METRICS, score_predictions
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
    print(f"setup: {len(short)} responses (mean {sum(map(len, short)) / len(short):.0f} chars), "
          f"{len(long)} long answers; old and new give equal claims on all ({time.perf_counter() - t0:.1f} s)")  # fmt: skip

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
