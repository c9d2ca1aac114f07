"""Our leaderboard next to the paper's reference rows (docs/crs-baselines.md, "Against the paper").

Reads the run folders of ``crs leaderboard`` / ``crs run`` (``scores.json`` + ``run.json``) and prints one
Markdown table per setting: per system our value and the paper's (SPEC.md; seed 000, 10,000 dialogues,
closed 8 candidates; the LLM rows from gpt-5.4-mini) for R@1, MRR, CGS, CD, rejection recovery and T2R,
plus our evidence support (the paper has no such column) and spatial coherence.

    python benchmarks/crs_paper_rows.py LB/runs/*           # closed and open tables
    python benchmarks/crs_paper_rows.py --json LB/runs/*    # the numbers as JSON

The paper's numbers are copied from its tables; nothing here re-computes them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# system -> (R@1, MRR, CGS, CD, recovery, T2R), closed set
PAPER_CLOSED: dict[str, tuple[float, float, float, float, float, float]] = {
    "popularity": (0.140, 0.164, 0.802, 0.411, 0.626, 5.57),
    "tfidf": (0.257, 0.289, 0.776, 0.377, 0.891, 4.02),
    "aspect": (0.179, 0.206, 0.750, 0.391, 0.715, 4.96),
    "dense": (0.243, 0.274, 0.864, 0.393, 0.821, 4.17),
    "spatial": (0.257, 0.288, 0.727, 0.437, 0.893, 4.02),
    "hybrid-rrf": (0.254, 0.286, 0.775, 0.412, 0.854, 4.01),
    "itinerary": (0.257, 0.289, 0.684, 0.310, 0.891, 4.02),
    "knowledge": (0.206, 0.234, 0.708, 0.375, 0.842, 4.70),
    "persona": (0.191, 0.218, 0.706, 0.354, 0.828, 4.83),
    "llm-zero-shot": (0.533, 0.638, 0.636, 0.162, 0.988, 3.00),
    "llm-dst": (0.442, 0.508, 0.634, 0.194, 0.895, 3.38),
    "rag-citation": (0.381, 0.409, 0.658, 0.388, 0.863, 3.69),
    "multi-review-synthesis": (0.281, 0.289, 0.008, 0.001, 0.263, 4.55),
}
# system -> (open R@1, open CGS), 1,000 dialogues
PAPER_OPEN: dict[str, tuple[float, float]] = {
    "popularity": (0.012, 0.802),
    "tfidf": (0.099, 0.772),
    "aspect": (0.017, 0.737),
    "dense": (0.033, 0.855),
    "spatial": (0.099, 0.726),
    "hybrid-rrf": (0.078, 0.772),
    "itinerary": (0.099, 0.679),
    "knowledge": (0.052, 0.698),
    "persona": (0.018, 0.724),
    "llm-zero-shot": (0.132, 0.591),
    "llm-dst": (0.125, 0.586),
    "rag-citation": (0.093, 0.630),
    "multi-review-synthesis": (0.100, 0.196),
}
CLOSED_COLS = ("recall@1", "mrr", "cgs", "cd", "rejection_recovery", "t2r")
HEAD = ("R@1", "MRR", "CGS", "CD", "recovery", "T2R")


def load(folder: Path) -> dict[str, object]:
    run = json.loads((folder / "run.json").read_text("utf-8"))
    scores = json.loads((folder / "scores.json").read_text("utf-8"))
    return {
        "system": run.get("system", folder.name),
        "label": run.get("label") or run.get("system", folder.name),
        "setting": scores["setting"],
        "n_dialogues": scores["n_dialogues"],
        "n_turns": scores["n_turns"],
        "aggregate": scores["aggregate"],
    }


def fmt(value: object, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def pair(ours: object, paper: float | None, digits: int = 3) -> str:
    return f"{fmt(ours, digits)} / {fmt(paper, digits)}"


def closed_table(runs: list[dict]) -> list[str]:
    lines = [
        "| system | "
        + " | ".join(f"{h} ours / paper" for h in HEAD)
        + " | evidence support | spatial coh. |",
        "|---|" + "---|" * (len(HEAD) + 2),
    ]
    for r in runs:
        agg, paper = r["aggregate"], PAPER_CLOSED.get(str(r["system"]))
        cells = [
            pair(agg.get(m), paper[i] if paper else None, 2 if m == "t2r" else 3)
            for i, m in enumerate(CLOSED_COLS)
        ]
        lines.append(
            f"| {r['label']} | "
            + " | ".join(cells)
            + f" | {fmt(agg.get('evidence_support'))} | {fmt(agg.get('spatial_coherence'))} |"
        )
    return lines


def open_table(runs: list[dict]) -> list[str]:
    lines = [
        "| system | open R@1 ours / paper | open MRR | CGS ours / paper | evidence support |",
        "|---|---|---|---|---|",
    ]
    for r in runs:
        agg, paper = r["aggregate"], PAPER_OPEN.get(str(r["system"]))
        lines.append(
            f"| {r['label']} | {pair(agg.get('open_recall@1'), paper[0] if paper else None)} | "
            f"{fmt(agg.get('open_mrr'))} | {pair(agg.get('cgs'), paper[1] if paper else None)} | "
            f"{fmt(agg.get('evidence_support'))} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (scores.json + run.json)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    runs = [load(f) for f in args.runs if (f / "scores.json").is_file()]
    runs.sort(key=lambda r: -(r["aggregate"].get("recall@1") or r["aggregate"].get("open_recall@1") or 0))
    if args.json:
        print(json.dumps(runs, indent=2))
        return 0
    for setting, table in (("closed", closed_table), ("open", open_table)):
        chosen = [r for r in runs if r["setting"] == setting]
        if chosen:
            n = {(r["n_dialogues"], r["n_turns"]) for r in chosen}
            print(f"\n{setting} ({', '.join(f'{d} dialogues / {t} turns' for d, t in sorted(n))})\n")
            print("\n".join(table(chosen)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
