"""The numbers of a report: leaderboard cells with bootstrap CIs, paired tests, breakdowns, axis scores.

Rows and tests (:func:`build`):

* **Order.** Per setting, rows are sorted by one metric (``sort_by``; default :data:`DEFAULT_SORT`,
  ``recall@1`` closed and ``open_recall@1`` open; a closed-set name is mapped to its open-set twin and back,
  :data:`TWINS`), best first in the metric's own direction, rows without a value last, ties by label.
  **Bounds** come outside that order: an *upper bound* (the ``oracle``, or any run with ``needs_gold``:
  it reads the gold) first, a *lower bound* (``random``: chance) last; they are marked in every table.
* **Significance** (:func:`comparisons`): by default each other run is compared with **one baseline**
  (``baseline``: a label or system name; default the last-ranked run that is not a bound, i.e. the weakest
  real system), only on the main-table metrics :data:`MAIN`, and bounds are left out (``test_bounds``
  puts them in); ``all_pairs`` compares every two runs instead. Holm–Bonferroni runs over exactly the
  tests made, so fewer tests keep more power. Rows are lettered ``a, b, …`` in table order (ranx's
  convention); a cell carries the letters of the runs it is significantly *better* than on that metric
  (``p_holm < alpha``, default 0.05, in the metric's direction) — :attr:`RunRow.beats`.

Discrimination (:func:`discrimination`): per metric, ``value(oracle) − value(random)`` on the report's own
runs of a setting — how far the metric separates a system that reads the gold from chance *on this data*.
A metric whose discrimination is ~0 cannot rank systems here (CGS on extractive template data: every
system quotes reviews verbatim near every attribute word, so oracle and random both score 1.000).
``None`` (shown "—") unless the setting has exactly one ``oracle`` run and one ``random`` run with a value.

Axis score (radar and bar plots): the mean over the axis's metrics present in a run of a value mapped to
[0, 1] with 1 best — ``v`` for higher-is-better metrics, ``1 − v`` for the lower-is-better rates
(hallucinated-attribute rate, rejected-repeat rate), ``1 / v`` for turns-to-first-correct (T2R ≥ 1).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from groundtrace.crs.metrics import parse_metric
from groundtrace.crs.report.load import RunData
from groundtrace.crs.report.render import csv_text, latex, markdown
from groundtrace.crs.report.stats import PairedTest, bootstrap_ci, holm, paired_test, per_dialogue
from groundtrace.crs.report.tables import (
    HEADLINE,
    LOWER,
    MAIN,
    UPPER,
    discrimination,
)

DEFAULT_SORT = {"closed": "recall@1", "open": "open_recall@1"}
#: closed-set metric ↔ its open-set twin (for ``sort_by``)
TWINS = {
    "recall@1": "open_recall@1",
    "recall@3": "open_recall@3",
    "recall@5": "open_recall@5",
    "recall@10": "open_recall@10",
    "mrr": "open_mrr",
}
LETTERS = "abcdefghijklmnopqrstuvwxyz"
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
    bound: str | None = None  # "upper" (reads the gold), "lower" (chance) or None
    letter: str = ""  # ranx-style row letter (rows taking part in the tests), "" otherwise
    baseline: bool = False  # the run the others are tested against
    beats: dict[str, list[str]] = field(default_factory=dict)  # metric -> letters of runs it is better than

    @property
    def tested(self) -> bool:
        return bool(self.letter)


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
    sort_by: dict[str, str] = field(default_factory=dict)  # setting -> metric the rows are sorted by
    baseline: dict[str, str | None] = field(default_factory=dict)  # setting -> its label; None: all pairs
    all_pairs: bool = False
    alpha: float = 0.05
    test_bounds: bool = False
    #: setting -> how many different sets of dialogues its runs answer (dataset hash and --limit); > 1
    #: means rows of that table do not compare
    datasets: dict[str, int] = field(default_factory=dict)

    def settings(self) -> list[str]:
        return [s for s in ("closed", "open") if any(r.setting == s for r in self.rows)]

    def setting_rows(self, setting: str) -> list[RunRow]:
        """The rows of ``setting`` in table order (upper bounds, sorted runs, lower bounds)."""
        return [r for r in self.rows if r.setting == setting]

    def tests_of(self, setting: str) -> list[PairedTest]:
        return [t for t in self.tests if t.setting == setting]

    def to_dict(self) -> dict[str, Any]:
        return {
            "discrimination": {s: discrimination(self, s) for s in self.settings()},
            "resamples": self.resamples,
            "seed": self.seed,
            "sort_by": self.sort_by,
            "baseline": self.baseline,
            "all_pairs": self.all_pairs,
            "test_bounds": self.test_bounds,
            "alpha": self.alpha,
            "datasets": self.datasets,
            "notes": self.notes,
            "leaderboard": [asdict(r) for r in self.rows],
            "tests": [asdict(t) for t in self.tests],
            "breakdown": self.breakdown,
            "closed_vs_open": self.closed_vs_open,
        }

    def to_markdown(self) -> str:
        """The leaderboard, paired tests and breakdowns as Markdown (``leaderboard.md``)."""
        return markdown(self)

    def to_latex(self) -> str:
        """The leaderboard as a LaTeX table (``leaderboard.tex``)."""
        return latex(self)

    def to_csv(self) -> str:
        """One row per (run, metric) with value and CI (``leaderboard.csv``)."""
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

    m = parse_metric(metric)
    if m.name == "t2r":
        return 1.0 / value if value > 0 else None
    return value if m.higher_is_better else 1.0 - value


def axis_scores(run: RunData) -> dict[str, float | None]:
    """Mean mapped value per axis over the run's metrics (``None`` for an axis with none)."""
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
        unscorable_turns=sum(not t.get("scorable", True) for t in run.scores["turns"]),
        n_dialogues=int(run.scores.get("n_dialogues", 0)),
        n_turns=int(run.scores.get("n_turns", 0)),
        unavailable=unavailable_metrics(run),
        usage=run_usage(run),
        bound=bound_of(run),
    )


def bound_of(run: RunData) -> str | None:
    """``"upper"`` for a run that reads the gold (``needs_gold`` in ``run.json``, or the ``oracle``),
    ``"lower"`` for ``random`` (chance), else ``None``."""
    if run.info.get("needs_gold") or run.system == "oracle":
        return UPPER
    if run.system == "random":
        return LOWER
    return None


def sort_metric(setting: str, requested: str | None, available: set[str]) -> str | None:
    """The metric rows of ``setting`` are sorted by: ``requested`` (any alias; mapped to its closed/open
    twin when that is what the setting has), else :data:`DEFAULT_SORT`; ``None`` when no run has it."""
    wanted = str(parse_metric(requested)) if requested else DEFAULT_SORT[setting]
    twin = {**TWINS, **{v: k for k, v in TWINS.items()}}.get(wanted)
    for name in (wanted, twin):
        if name is not None and name in available:
            return name
    return None


def order_rows(rows: list[RunRow], metric: str | None) -> list[RunRow]:
    """Upper bounds, then the other rows best first on ``metric`` (no value last, ties by label), then
    lower bounds (module docstring)."""
    sign = -1.0 if metric is None or parse_metric(metric).higher_is_better else 1.0

    def key(row: RunRow) -> tuple[int, int, float, str]:
        cell = row.cells.get(metric) if metric else None
        value = cell.value if cell is not None else None
        group = 0 if row.bound == UPPER else 2 if row.bound == LOWER else 1
        return (group, value is None, sign * value if value is not None else 0.0, row.label)

    return sorted(rows, key=key)


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
    out = {}
    for metric, reason in run.scores.get("unavailable", {}).items():
        if parse_metric(metric).setting in ("any", run.setting):
            out[metric] = str(reason)
    return out


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


def comparisons(
    rows: list[RunRow],
    *,
    baseline: str | None = None,
    all_pairs: bool = False,
    test_bounds: bool = False,
) -> tuple[list[tuple[RunRow, RunRow]], RunRow | None]:
    """The pairs of rows (of one setting, in table order) to test, and the baseline row (None for all
    pairs); rows taking part get their letter. ``baseline`` names a row by label or system name;
    ``ValueError`` when it names none of ``rows`` (module docstring)."""
    pool = [r for r in rows if test_bounds or r.bound is None]
    named: RunRow | None = None
    if baseline is not None:
        named = next((r for r in rows if r.label == baseline), None) or next(
            (r for r in rows if r.system == baseline), None
        )
        if named is None:
            names = ", ".join(r.label for r in rows)
            raise ValueError(f"baseline {baseline!r} is not a run of the {rows[0].setting} set ({names})")
    base: RunRow | None = None
    if not all_pairs and (pool or named is not None):
        if named is not None:
            base = named
            if all(r is not base for r in pool):  # a bound named as the baseline takes part
                pool.append(base)
        else:
            base = pool[-1]  # the last-ranked run that is not a bound
    chosen = {id(r) for r in pool}
    members = [r for r in rows if id(r) in chosen]  # table order
    for i, row in enumerate(members):
        row.letter = LETTERS[i] if i < len(LETTERS) else f"z{i - len(LETTERS) + 1}"
    if base is None:
        return list(itertools.combinations(members, 2)), None
    base.baseline = True
    position = {id(r): i for i, r in enumerate(members)}
    pairs = [
        (base, r) if position[id(base)] < position[id(r)] else (r, base) for r in members if r is not base
    ]
    return pairs, base


def paired_tests(
    runs: dict[str, RunData],
    pairs: list[tuple[RunRow, RunRow]],
    resamples: int,
    seed: int,
    notes: list[str],
    metrics: tuple[str, ...] | None = None,
) -> list[PairedTest]:
    """The paired tests of ``pairs`` (rows of one setting; ``runs`` by label) on every metric of
    ``metrics`` (default: every metric) both runs have. Runs on different datasets are not compared (a
    note says so). Holm adjustment is left to the caller (it spans the whole report)."""
    tests: list[PairedTest] = []
    for ra, rb in pairs:
        a, b = runs[ra.label], runs[rb.label]
        if a.info.get("dataset_hash") != b.info.get("dataset_hash"):
            notes.append(f"{a.label} and {b.label} ({a.setting}) ran on different datasets: not compared")
            continue
        shared = [m for m in a.metrics if m in b.metrics and (metrics is None or m in metrics)]
        for metric in shared:
            k = a.metrics.index(metric)
            xs, ys, groups = _aligned(a, b, metric)
            rng = np.random.default_rng([seed, 1, k])
            tests.append(paired_test(a.setting, metric, a.label, b.label, xs, ys, rng, resamples, groups))
    return tests


def mark_winners(rows: list[RunRow], tests: list[PairedTest], alpha: float) -> None:
    """Give each row the letters of the rows it is significantly better than (``p_holm < alpha``, in the
    metric's direction) — the superscripts of the tables."""
    by_label = {(r.setting, r.label): r for r in rows}
    for t in tests:
        if t.p_holm >= alpha or not t.mean_diff:
            continue
        a, b = by_label[(t.setting, t.a)], by_label[(t.setting, t.b)]
        a_better = (t.mean_diff > 0) == parse_metric(t.metric).higher_is_better
        winner, loser = (a, b) if a_better else (b, a)
        winner.beats.setdefault(t.metric, []).append(loser.letter)
    for row in rows:
        for metric, letters in row.beats.items():
            row.beats[metric] = sorted(set(letters), key=lambda x: (len(x), x))


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


def dataset_groups(runs: list[RunData]) -> dict[tuple[str, str], list[RunData]]:
    """Runs grouped by the dialogues they answer: ``(dataset hash, limit)`` from ``run.json`` (the hash
    covers the split's dialogues, so two splits of one dataset are two groups)."""
    groups: dict[tuple[str, str], list[RunData]] = {}
    for run in runs:
        key = (str(run.info.get("dataset_hash") or "?"), str(run.info.get("limit") or ""))
        groups.setdefault(key, []).append(run)
    return groups


def _mixed_note(setting: str, groups: dict[tuple[str, str], list[RunData]]) -> str:
    parts = []
    for (digest, limit), members in groups.items():
        run = members[0]
        where = f"{run.info.get('dataset') or '?'}, split {run.info.get('split') or '?'}"
        where += f", limit {limit}" if limit else ""
        labels = ", ".join(r.label for r in members)
        parts.append(f"{labels} ({where}, {run.scores.get('n_dialogues', '?')} dialogues, {digest[:12]})")
    return (
        f"{setting} set: the runs answer {len(groups)} different sets of dialogues — "
        + "; ".join(parts)
        + ": rows of different sets do not compare, and are never tested against each other"
    )


def build(
    runs: list[RunData],
    *,
    resamples: int = 1000,
    seed: int = 0,
    sort_by: str | None = None,
    baseline: str | None = None,
    all_pairs: bool = False,
    test_bounds: bool = False,
    alpha: float = 0.05,
) -> Report:
    """Compute the report numbers for labelled ``runs`` (module docstring: order, bounds, tests).

    ``ValueError`` when ``baseline`` names no run of a setting that has runs to compare.
    """
    notes: list[str] = []
    rows = [_row(r, resamples, seed) for r in runs]
    by_label = {(r.setting, r.label): r for r in runs}
    ordered: list[RunRow] = []
    tests: list[PairedTest] = []
    order: dict[str, str] = {}
    bases: dict[str, str | None] = {}
    datasets: dict[str, int] = {}
    for setting in ("closed", "open"):
        mine = [r for r in rows if r.setting == setting]
        if not mine:
            continue
        metric = sort_metric(setting, sort_by, {m for r in mine for m in r.cells})
        if metric is None:
            notes.append(f"{setting} set: no run has {sort_by or DEFAULT_SORT[setting]}; rows are not sorted")
        else:
            order[setting] = metric
        mine = order_rows(mine, metric)
        ordered += mine
        here = baseline
        elsewhere = baseline is not None and all(baseline not in (r.label, r.system) for r in mine)
        if elsewhere and any(baseline in (r.label, r.system) for r in rows):  # the other setting's only
            notes.append(f"{setting} set: no run {baseline!r}; tested against the default baseline")
            here = None
        pairs, base = comparisons(mine, baseline=here, all_pairs=all_pairs, test_bounds=test_bounds)
        bases[setting] = base.label if base is not None else None
        runs_here = {label: run for (s, label), run in by_label.items() if s == setting}
        groups = dataset_groups(list(runs_here.values()))
        datasets[setting] = len(groups)
        if len(groups) > 1:
            notes.append(_mixed_note(setting, groups))
        tests += paired_tests(runs_here, pairs, resamples, seed, notes, MAIN[setting])
    for t, p in zip(tests, holm([t.p_permutation for t in tests]), strict=True):
        t.p_holm = p
    mark_winners(ordered, tests, alpha)
    if tests:
        against = "every two runs" if all_pairs else "each run and the baseline"
        notes.append(
            f"{len(tests)} paired tests ({against}, main-table metrics"
            f"{'' if test_bounds else ', bounds left out'}); p_holm is the Holm–Bonferroni adjustment of "
            "the permutation p-values over all of them (multiple comparisons). Signs are flipped per "
            "dialogue (turns of a dialogue are not independent); Wilcoxon p-values use the same "
            "per-dialogue differences and are unadjusted."
        )
    return Report(
        ordered,
        tests,
        breakdowns(runs, notes),
        closed_vs_open(ordered),
        notes,
        resamples,
        seed,
        sort_by=order,
        baseline=bases,
        all_pairs=all_pairs,
        alpha=alpha,
        test_bounds=test_bounds,
        datasets=datasets,
    )
