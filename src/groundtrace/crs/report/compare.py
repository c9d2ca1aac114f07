"""``compare``: the report's numbers (bootstrap CIs, paired tests, breakdowns) for in-memory score tables.

``crs report`` reads run folders; :func:`compare` builds the same :class:`~.leaderboard.Report` from
:class:`~groundtrace.crs.evaluation.score.ScoreTable` objects (e.g. from ``evaluate``), so comparing
systems in a notebook needs no folder on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundtrace.crs.report.leaderboard import Report, build
from groundtrace.crs.report.load import RunData, label_runs


def run_data(table: Any, name: str) -> RunData:
    """A :class:`RunData` view of a score table (``name`` stands in for the folder name in labels)."""
    info = {"setting": table.setting, **table.info}
    info.setdefault("system", name)
    return RunData(Path(name), info, table.to_dict(), dict(table.meta))


def compare(
    tables: Sequence[Any],
    *,
    labels: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
    sort_by: str | None = None,
    baseline: str | None = None,
    all_pairs: bool = False,
    test_bounds: bool = False,
) -> Report:
    """The report of ``tables``: per-run cells with bootstrap 95% CIs, paired tests between runs of the same
    setting (Holm-corrected), breakdowns and closed-vs-open rows — the numbers of ``crs report``.

    A run is labelled by its system name (``table.info["system"]``), or by ``labels[i]`` when given; a
    repeated system name gets ``(run-N)`` appended. ``seed`` fixes the resampling (same seed, same
    numbers). Rows are sorted by ``sort_by`` (default R@1) with the oracle (upper bound) first and
    ``random`` (lower bound) last; each run is tested against ``baseline`` (default: the last-ranked run
    that is not a bound) on the main-table metrics, or every pair with ``all_pairs``; bounds take part only
    with ``test_bounds`` (:func:`~.leaderboard.build`). Returns a :class:`Report` (``to_dict()``,
    ``to_markdown()``, ``to_latex()``, ``to_csv()``).
    """
    if not tables:
        raise ValueError("compare needs at least one ScoreTable")
    if labels is not None and len(labels) != len(tables):
        raise ValueError(f"{len(labels)} labels for {len(tables)} tables")
    runs = [run_data(t, f"run-{i + 1}") for i, t in enumerate(tables)]
    if labels is not None:
        for run, label in zip(runs, labels, strict=True):
            run.info["label"] = label  # the system name stays: the oracle is still an upper bound
    label_runs(runs)
    return build(
        runs,
        resamples=resamples,
        seed=seed,
        sort_by=sort_by,
        baseline=baseline,
        all_pairs=all_pairs,
        test_bounds=test_bounds,
    )
