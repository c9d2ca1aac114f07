"""Run several systems in several settings on one dataset and write one report (``crs leaderboard``).

``run_suite`` answers the split with each system in each setting into ``out/runs/<system>-<setting>``
(resumable run folders, the same as ``crs run``), then writes the report of :func:`build_report` into
``out``. ``all-offline`` expands to ``random`` (the chance reference) plus
:data:`~groundtrace.crs.systems.OFFLINE_SYSTEMS`; the oracle (an upper bound reading the gold) is only run
when named.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.loading import report_dialogues
from groundtrace.crs.evaluation.runner import LazyTrainSplit, RunResult, run_system
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.report import build_report
from groundtrace.crs.systems import OFFLINE_SYSTEMS, SYSTEMS
from groundtrace.crs.systems.factory import system_factory

ALL_OFFLINE = "all-offline"


def expand_systems(spec: str | Sequence[str]) -> list[str]:
    """``"all-offline"`` → ``random`` + the offline systems; ``"a,b"`` → ``[a, b]`` (canonical names;
    an unknown name raises the registry's did-you-mean error)."""
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for name in filter(None, names):
        expanded = ["random", *OFFLINE_SYSTEMS] if name == ALL_OFFLINE else [SYSTEMS.canonical(name)]
        out += [n for n in expanded if n not in out]
    if not out:
        raise ValueError("no system named")
    return out


@dataclass
class SuiteResult:
    """The run results by (system, setting), their wall times, and the report files written."""

    runs: dict[tuple[str, str], RunResult] = field(default_factory=dict)
    seconds: dict[tuple[str, str], float] = field(default_factory=dict)
    report: list[Path] = field(default_factory=list)


def _offset(
    progress: Callable[[int, int], None] | None, base: int, total: int
) -> Callable[[int, int], None] | None:
    """One run's ``progress(done, _)`` as a count over the whole suite (``base`` dialogues before it)."""
    if progress is None:
        return None
    return lambda done, _total: progress(base + done, total)


def run_suite(
    systems: Sequence[str],
    dialogues: Sequence[AnyDialogue],
    kb: KnowledgeBase,
    out: Path | str,
    *,
    settings: Sequence[str] = ("closed", "open"),
    split: str = "test",
    options: dict[str, dict[str, Any]] | None = None,
    dataset: str = "",
    workers: int = 1,
    on_run: Callable[[str, str, RunResult, float], None] | None = None,
    resamples: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> SuiteResult:
    """Run every system in every setting, then build the report (module docstring).

    Each run is :func:`~groundtrace.crs.evaluation.runner.run_system` (the one run path, as ``crs run``).
    ``dialogues``: the split as read (lean records from ``load_records``, or ``Dialogue`` models); the
    report's dialogue pages get the validated dialogues of ``dataset`` on demand
    (:class:`~groundtrace.crs.dataset.lean_reader.DialogueLines`) when ``dialogues`` are lean records.
    ``options`` gives constructor options per system name (e.g. ``{"hybrid-rrf": {"dense": False}}``).
    ``on_run(system, setting, result, seconds)`` is called after each run; ``progress(done, total)``
    counts dialogues over all runs (resumed ones included), as they finish.
    """
    out = Path(out)
    result = SuiteResult()
    run_dirs: list[Path] = []
    train = LazyTrainSplit(dataset)  # read once, by the first system that learns
    total = len(settings) * len(systems) * len(dialogues)
    finished = 0
    if progress is not None:
        progress(0, total)
    for setting in settings:
        for name in systems:
            run_dir = out / "runs" / f"{name}-{setting}"
            factory = system_factory(name, (options or {}).get(name))
            t0 = time.perf_counter()
            run = run_system(
                factory,
                dialogues,
                kb,
                run_dir,
                setting=setting,
                split=split,
                workers=workers,
                dataset=dataset,  # type: ignore[arg-type]
                progress=_offset(progress, finished, total),
                train=train,
            )
            finished += len(dialogues)
            seconds = time.perf_counter() - t0
            result.runs[(name, setting)] = run
            result.seconds[(name, setting)] = seconds
            run_dirs.append(run_dir)
            if on_run is not None:
                on_run(name, setting, run, seconds)
    result.report = build_report(
        run_dirs,
        out,
        dataset=Path(dataset) if dataset else None,
        knowledge_base=kb,
        dialogues=report_dialogues(dialogues, dataset),
        resamples=resamples,
    )
    return result
