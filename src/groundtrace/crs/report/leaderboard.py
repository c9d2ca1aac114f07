"""The numbers of a report: leaderboard cells with bootstrap CIs, paired tests, breakdowns, axis scores.

Axis score (radar and bar plots): the mean over the axis's metrics present in a run of a value mapped to
[0, 1] with 1 best — ``v`` for higher-is-better metrics, ``1 − v`` for the lower-is-better rates
(hallucinated-attribute rate, rejected-repeat rate), ``1 / v`` for turns-to-first-correct (T2R ≥ 1).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from groundtrace.crs.report.load import RunData
from groundtrace.crs.report.stats import PairedTest, bootstrap_ci, holm, paired_test, per_dialogue

HEADLINE: dict[str, tuple[str, ...]] = {
    "closed": (
        "recall@1",
        "recall@3",
        "mrr",
        "ndcg@3",
        "gs",
        "cgs",
        "citation_validity",
        "rejection_recovery",
        "task_success",
        "t2r",
    ),
    "open": (
        "open_recall@1",
        "open_recall@10",
        "open_mrr",
        "gs",
        "cgs",
        "citation_validity",
        "rejection_recovery",
        "task_success",
        "t2r",
    ),
}
TIER_ORDER = ("Easy", "Medium", "Hard", "Expert")
AXIS_NAMES = ("accuracy", "grounding", "recovery", "practicality")


@dataclass
class Cell:
    """A metric of a run: aggregate value, bootstrap 95% CI, number of units with a value."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


@dataclass
class RunRow:
    label: str
    system: str
    setting: str
    path: str
    cells: dict[str, Cell]
    axes: dict[str, float | None]
    unscorable_turns: int
    n_dialogues: int
    n_turns: int
    unavailable: dict[str, str] = field(default_factory=dict)  # metric -> reason (e.g. NLI without a scorer)
    usage: dict[str, float] = field(default_factory=dict)  # latency mean/p95 (s), tokens and USD per run


@dataclass
class Report:
    """Everything the renderers need."""

    rows: list[RunRow]
    tests: list[PairedTest]
    breakdown: dict[str, dict[str, dict[str, dict[str, float | None]]]]  # by → group → label → metric → value
    closed_vs_open: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    resamples: int = 1000
    seed: int = 0

    def settings(self) -> list[str]:
        return [s for s in ("closed", "open") if any(r.setting == s for r in self.rows)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "resamples": self.resamples,
            "seed": self.seed,
            "notes": self.notes,
            "leaderboard": [asdict(r) for r in self.rows],
            "tests": [asdict(t) for t in self.tests],
            "breakdown": self.breakdown,
            "closed_vs_open": self.closed_vs_open,
        }

    def to_markdown(self) -> str:
        """The leaderboard, paired tests and breakdowns as Markdown (``leaderboard.md``)."""
        from groundtrace.crs.report.render import markdown

        return markdown(self)

    def to_latex(self) -> str:
        """The leaderboard as a LaTeX table (``leaderboard.tex``)."""
        from groundtrace.crs.report.render import latex

        return latex(self)

    def to_csv(self) -> str:
        """One row per (run, metric) with value and CI (``leaderboard.csv``)."""
        from groundtrace.crs.report.render import csv_text

        return csv_text(self)


def unit_values(run: RunData, metric: str) -> dict[str, list[float]]:
    """``{dialogue_id: [present values]}``: turn values for turn metrics, the dialogue value otherwise."""
    out: dict[str, list[float]] = {}
    if run.level(metric) == "turn":
        for (did, _), v in run.turn_values(metric).items():
            if v is not None:
                out.setdefault(did, []).append(float(v))
    else:
        for did, v in run.dialogue_values(metric).items():
            if v is not None:
                out.setdefault(did, []).append(float(v))
    return out


def axis_value(metric: str, value: float | None) -> float | None:
    """A metric value mapped to [0, 1], 1 best (module docstring)."""
    if value is None:
        return None
    from groundtrace.crs.metrics import parse_metric

    m = parse_metric(metric)
    if m.name == "t2r":
        return 1.0 / value if value > 0 else None
    return value if m.higher_is_better else 1.0 - value


def axis_scores(run: RunData) -> dict[str, float | None]:
    """Mean mapped value per axis over the run's metrics (``None`` for an axis with none)."""
    from groundtrace.crs.metrics import parse_metric

    per_axis: dict[str, list[float]] = {a: [] for a in AXIS_NAMES}
    for metric in run.metrics:
        v = axis_value(metric, run.scores["aggregate"].get(metric))
        if v is not None:
            per_axis[parse_metric(metric).axis].append(v)
    return {a: (sum(vs) / len(vs) if vs else None) for a, vs in per_axis.items()}


def _row(run: RunData, resamples: int, seed: int) -> RunRow:
    cells: dict[str, Cell] = {}
    order = run.dialogue_ids()
    for k, metric in enumerate(run.metrics):
        values = unit_values(run, metric)
        sums, counts = per_dialogue(values, order)
        rng = np.random.default_rng([seed, k])  # same resample indices for every run: comparable CIs
        lo, hi = bootstrap_ci(sums, counts, rng, resamples)
        cells[metric] = Cell(run.scores["aggregate"].get(metric), lo, hi, int(counts.sum()))
    return RunRow(
        label=run.label,
        system=run.system,
        setting=run.setting,
        path=str(run.path),
        cells=cells,
        axes=axis_scores(run),
        unscorable_turns=sum(not t["scorable"] for t in run.scores["turns"]),
        n_dialogues=int(run.scores.get("n_dialogues", 0)),
        n_turns=int(run.scores.get("n_turns", 0)),
        unavailable=unavailable_metrics(run),
        usage=run_usage(run),
    )


def run_usage(run: RunData) -> dict[str, float]:
    """Latency (mean, p95 per turn, s) and LLM usage (tokens, USD in total and per turn) from ``run.json``;
    empty when the run recorded none (an offline file without latencies still reports zeros)."""
    usage = run.info.get("usage") or {}
    if not usage:
        return {}
    lat = usage.get("latency_s", {})
    return {
        "latency_mean_s": float(lat.get("mean", 0.0)),
        "latency_p95_s": float(lat.get("p95", 0.0)),
        "prompt_tokens": float(usage.get("prompt_tokens", 0)),
        "completion_tokens": float(usage.get("completion_tokens", 0)),
        "cost_usd": float(usage.get("cost_usd", 0.0)),
        "cost_usd_per_turn": float(usage.get("cost_usd_per_turn", 0.0)),
    }


def unavailable_metrics(run: RunData) -> dict[str, str]:
    """Metrics of the run's setting that could not be computed, with the reason (the other setting's
    metrics are left out: they never apply)."""
    from groundtrace.crs.metrics import parse_metric

    out = {}
    for metric, reason in run.scores.get("unavailable", {}).items():
        if parse_metric(metric).setting in ("any", run.setting):
            out[metric] = str(reason)
    return out


def all_metrics(report: Report, setting: str) -> list[str]:
    """Every metric with a value or an 'unavailable' mark in a run of ``setting``: the 27 in report order
    first, then any other requested metric."""
    from groundtrace.crs.metrics import DEFAULT_METRICS

    rows = [r for r in report.rows if r.setting == setting]
    present = list(dict.fromkeys(m for r in rows for m in (*r.cells, *r.unavailable)))
    order = [str(m) for m in DEFAULT_METRICS]
    return [m for m in order if m in present] + [m for m in present if m not in order]


def _aligned(a: RunData, b: RunData, metric: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Values of both runs on the units where both have one, and each unit's dialogue id."""
    if a.level(metric) == "turn":
        ta, tb = a.turn_values(metric), b.turn_values(metric)
        tkeys = [k for k in ta if ta[k] is not None and tb.get(k) is not None]
        xs = np.array([ta[k] for k in tkeys], dtype=float)
        ys = np.array([tb[k] for k in tkeys], dtype=float)
        return xs, ys, [k[0] for k in tkeys]
    da, db = a.dialogue_values(metric), b.dialogue_values(metric)
    dkeys = [k for k in da if da[k] is not None and db.get(k) is not None]
    xs = np.array([da[k] for k in dkeys], dtype=float)
    ys = np.array([db[k] for k in dkeys], dtype=float)
    return xs, ys, dkeys


def paired_tests(runs: list[RunData], resamples: int, seed: int, notes: list[str]) -> list[PairedTest]:
    """Every pair of runs of one setting and dataset, on every metric both have; Holm-adjusted."""
    tests: list[PairedTest] = []
    for a, b in itertools.combinations(runs, 2):
        if a.setting != b.setting:
            continue
        if a.info.get("dataset_hash") != b.info.get("dataset_hash"):
            notes.append(f"{a.label} and {b.label} ({a.setting}) ran on different datasets: not compared")
            continue
        for k, metric in enumerate(m for m in a.metrics if m in b.metrics):
            xs, ys, groups = _aligned(a, b, metric)
            rng = np.random.default_rng([seed, 1, k])
            tests.append(paired_test(a.setting, metric, a.label, b.label, xs, ys, rng, resamples, groups))
    for t, p in zip(tests, holm([t.p_permutation for t in tests]), strict=True):
        t.p_holm = p
    if tests:
        notes.append(
            f"{len(tests)} paired tests; p_holm is the Holm–Bonferroni adjustment of the permutation "
            "p-values over all of them (multiple comparisons). Signs are flipped per dialogue (turns of a "
            "dialogue are not independent); Wilcoxon p-values use the same per-dialogue differences and "
            "are unadjusted."
        )
    return tests


def _group_value(values: dict[str, list[float]], dialogue_ids: list[str]) -> float | None:
    total = [v for d in dialogue_ids for v in values.get(d, [])]
    return sum(total) / len(total) if total else None


def breakdowns(
    runs: list[RunData], notes: list[str]
) -> dict[str, dict[str, dict[str, dict[str, float | None]]]]:
    """Headline metrics per difficulty tier and per city, recomputed on each group's dialogues."""
    out: dict[str, dict[str, dict[str, dict[str, float | None]]]] = {"difficulty": {}, "city": {}}
    missing = [r.label for r in runs if not r.meta]
    if missing:
        notes.append(f"no dialogues.json in {', '.join(missing)}: left out of the breakdowns")
    for by, table in out.items():
        groups: set[str] = {str(m[by]) for r in runs for m in r.meta.values() if by in m}
        ordered = [t for t in TIER_ORDER if t in groups] if by == "difficulty" else sorted(groups)
        for group in ordered:
            table[group] = {}
            for run in runs:
                if not run.meta:
                    continue
                ids = [d for d in run.dialogue_ids() if str(run.meta.get(d, {}).get(by)) == group]
                key = f"{run.label} · {run.setting}"
                table[group][key] = {
                    m: _group_value(unit_values(run, m), ids)
                    for m in HEADLINE[run.setting]
                    if m in run.metrics
                }
                table[group][key]["dialogues"] = float(len(ids))
    return out


def closed_vs_open(rows: list[RunRow]) -> list[dict[str, Any]]:
    """Per system with both settings: closed R@1/MRR vs open R@1/MRR, and CGS in each."""
    by_system: dict[str, dict[str, RunRow]] = {}
    for row in rows:
        by_system.setdefault(row.system, {}).setdefault(row.setting, row)
    out = []
    for system, settings in by_system.items():
        if "closed" in settings and "open" in settings:
            c, o = settings["closed"].cells, settings["open"].cells
            out.append(
                {
                    "system": system,
                    "closed_recall@1": c["recall@1"].value if "recall@1" in c else None,
                    "open_recall@1": o["open_recall@1"].value if "open_recall@1" in o else None,
                    "closed_mrr": c["mrr"].value if "mrr" in c else None,
                    "open_mrr": o["open_mrr"].value if "open_mrr" in o else None,
                    "closed_cgs": c["cgs"].value if "cgs" in c else None,
                    "open_cgs": o["cgs"].value if "cgs" in o else None,
                }
            )
    return out


def build(runs: list[RunData], *, resamples: int = 1000, seed: int = 0) -> Report:
    """Compute the report numbers for labelled ``runs``."""
    notes: list[str] = []
    rows = [_row(r, resamples, seed) for r in runs]
    tests = paired_tests(runs, resamples, seed, notes)
    return Report(rows, tests, breakdowns(runs, notes), closed_vs_open(rows), notes, resamples, seed)
