"""Running an experiment file (:mod:`.config`): systems × settings × splits × seeds, one report per split.

:func:`plan_runs` turns a :class:`~.config.LoadedConfig` into :class:`PlannedRun` objects without running
anything: every system spec is resolved and its ``args`` are checked against its constructor
(:func:`~groundtrace.crs.systems.factory.system_factory`), so a typo fails at ``file:line`` before the first
run. ``all-offline`` expands to ``random`` + the offline systems (as in ``crs leaderboard``). A system whose
constructor takes ``seed`` (and whose ``args`` do not fix it) is run once per seed of ``seeds``, labelled
``LABEL · seed N`` when there are several; any other system is run once.

:func:`run_experiment` runs each planned run into ``out/runs/<label>-<setting>[-<split>][-seed<N>]`` (a
``crs run`` folder: resumable, the same run key; ``run.json["run_config"]`` holds the config and the run's
entry) and writes the report of each split (:func:`~groundtrace.crs.report.build_report`) into ``out``
(one split) or ``out/<split>`` (several).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.core.nli.entailment import make_scorer
from groundtrace.crs.evaluation.failures import run_problem
from groundtrace.crs.evaluation.loading import load_records, report_dialogues, resolve_kb
from groundtrace.crs.evaluation.runner import LazyTrainSplit, run_system
from groundtrace.crs.report import build_report
from groundtrace.crs.report.config import ALL_OFFLINE, LoadedConfig, SystemEntry
from groundtrace.crs.systems import OFFLINE_SYSTEMS, SYSTEMS
from groundtrace.crs.systems.factory import (
    accepted_options,
    built_first,
    is_class_spec,
    load_system_class,
    system_factory,
)
from groundtrace.crs.systems.http import is_url


@dataclass(frozen=True)
class PlannedRun:
    """One run of the experiment: label, system spec and options, setting, split, seed, folder."""

    label: str
    system: str
    args: dict[str, Any]
    setting: str
    split: str
    seed: int | None  # None: the system takes no seed (or its args fix one)
    folder: str  # below out/runs/
    entry: int  # index in the config's systems list


@dataclass
class ExperimentResult:
    """Run folders by planned run, wall seconds, failure problems, and the report files by split."""

    runs: list[tuple[PlannedRun, Path, Any]] = field(default_factory=list)  # (planned, folder, RunResult)
    seconds: dict[str, float] = field(default_factory=dict)  # folder -> run wall time
    problems: list[str] = field(default_factory=list)
    reports: dict[str, list[Path]] = field(default_factory=dict)

    def report_dirs(self) -> dict[str, Path]:
        return {split: paths[0].parent for split, paths in self.reports.items() if paths}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "run"


def _resolved_spec(loaded: LoadedConfig, spec: str) -> str:
    """``path/to/file.py:Class`` read relative to the config file's folder; anything else unchanged."""
    target, _, attr = spec.rpartition(":")
    if is_class_spec(spec) and target.endswith(".py") and not Path(target).is_absolute():
        return f"{loaded.resolve(target)}:{attr}"
    return spec


def _takes_seed(spec: str, args: dict[str, Any]) -> bool:
    """Whether ``system_factory`` would pass ``seed`` to this system's constructor."""
    if "seed" in args or is_url(spec):
        return False
    target = load_system_class(spec) if spec not in SYSTEMS and is_class_spec(spec) else SYSTEMS.get(spec)
    accepted = accepted_options(target)
    return accepted is not None and "seed" in accepted


def _entries(loaded: LoadedConfig) -> list[tuple[int, SystemEntry]]:
    """The config's systems with ``all-offline`` expanded (each keeps its entry index); repeats dropped."""
    out: list[tuple[int, SystemEntry]] = []
    seen: set[str] = set()
    for i, entry in enumerate(loaded.config.systems):
        expanded = (
            [SystemEntry(system=n) for n in ("random", *OFFLINE_SYSTEMS)]
            if entry.system == ALL_OFFLINE
            else [entry]
        )
        for e in expanded:
            label = e.label or e.system
            if label not in seen:
                seen.add(label)
                out.append((i, e))
    return out


def plan_runs(loaded: LoadedConfig) -> list[PlannedRun]:
    """Every run of the experiment in order (settings, then systems, then seeds; splits outermost);
    :class:`~groundtrace.core.files.yaml_loader.YamlError` at the system's line when a spec cannot be
    imported or its args do not fit its constructor."""
    cfg = loaded.config
    systems: list[tuple[int, SystemEntry, str, bool]] = []
    for i, entry in _entries(loaded):
        spec = _resolved_spec(loaded, entry.system)
        try:
            system_factory(spec, dict(entry.args), seed=cfg.seeds[0])  # checks the spec and its args
            seeded = _takes_seed(spec, dict(entry.args))
        except (LookupError, ImportError, ValueError, TypeError) as exc:
            raise loaded.error(str(exc).strip("'\""), "systems", i) from None
        systems.append((i, entry, spec, seeded))
    planned: list[PlannedRun] = []
    folders: set[str] = set()
    for split in cfg.splits:
        for setting in cfg.settings:
            for i, entry, spec, seeded in systems:
                base = entry.label or entry.system
                for seed in cfg.seeds if seeded else [None]:
                    many = seeded and len(cfg.seeds) > 1
                    label = f"{base} · seed {seed}" if many else base
                    folder = "-".join(
                        [_slug(base), setting]
                        + ([split] if len(cfg.splits) > 1 else [])
                        + ([f"seed{seed}"] if many else [])
                    )
                    while folder in folders:  # two labels with one slug
                        folder += "_"
                    folders.add(folder)
                    planned.append(PlannedRun(label, spec, dict(entry.args), setting, split, seed, folder, i))
    baseline = cfg.report.baseline
    if baseline is not None and all(baseline not in (p.label, p.system) for p in planned):
        labels = ", ".join(dict.fromkeys(p.label for p in planned))
        raise loaded.error(f"{baseline!r} is not the label of a run ({labels})", "report", "baseline")
    return planned


def output_folder(loaded: LoadedConfig, out: Path | str | None) -> Path:
    """``out`` if given, else the config's ``out`` (relative to the config file); ``YamlError`` if neither."""
    if out is not None:
        return Path(out)
    if loaded.config.out is None:
        raise loaded.error("no output folder: set 'out' in the config or pass --out")
    return loaded.resolve(loaded.config.out)


def _scorer(loaded: LoadedConfig) -> Any:
    if loaded.config.nli is None:
        return None

    try:
        return make_scorer(loaded.config.nli)
    except (FileNotFoundError, ImportError, ValueError) as exc:
        raise loaded.error(str(exc), "nli") from None


def run_experiment(
    loaded: LoadedConfig,
    out: Path | str | None = None,
    *,
    workers: int | None = None,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_run: Callable[[PlannedRun, Any, float], None] | None = None,
) -> ExperimentResult:
    """Run every planned run, then write one report per split (module docstring).

    ``out`` (default: the config's ``out``, relative to the config file) holds ``runs/`` and the reports;
    ``workers`` and ``limit`` override the config's. ``progress(done, total)`` counts dialogues over the
    whole experiment; ``on_run(planned, result, seconds)`` is called after each run. A run whose failed
    share exceeds ``max_failed_share`` is listed in ``problems`` (the other runs and the report go on).
    """
    cfg = loaded.config
    out = output_folder(loaded, out)
    planned = plan_runs(loaded)
    scorer = _scorer(loaded)
    dataset_path = loaded.resolve(cfg.dataset)
    limit = limit if limit is not None else cfg.limit
    data = {}
    for split in cfg.splits:
        try:
            data[split] = load_records(dataset_path, split)  # the fast reader, once per split
        except (ValueError, FileNotFoundError) as exc:
            raise loaded.error(str(exc), "dataset") from None
    first = data[cfg.splits[0]]
    demo = cfg.kb is None or cfg.kb == "demo" or cfg.kb.startswith("demo:")
    try:
        knowledge = resolve_kb(cfg.kb if demo else str(loaded.resolve(cfg.kb)), first.manifest, first)
    except (ValueError, FileNotFoundError) as exc:
        raise loaded.error(str(exc), "kb" if cfg.kb is not None else "dataset") from None
    sizes = {s: len(d) if limit is None else min(limit, len(d)) for s, d in data.items()}
    total = sum(sizes[p.split] for p in planned)
    finished = 0
    if progress is not None:
        progress(0, total)
    result = ExperimentResult()
    record = loaded.record()
    train = LazyTrainSplit(str(dataset_path.resolve()))  # read once, by the first system that learns
    for p in planned:
        factory = built_first(system_factory(p.system, dict(p.args), seed=p.seed))
        folder = out / "runs" / p.folder

        def step(done: int, _total: int, base: int = finished) -> None:
            if progress is not None:
                progress(base + done, total)

        t0 = time.perf_counter()
        run = run_system(
            factory,
            data[p.split],
            knowledge,
            folder,
            setting=p.setting,  # type: ignore[arg-type]
            split=p.split,
            workers=workers or cfg.workers,
            limit=limit,
            retry_errors=cfg.retry_errors,
            metrics=cfg.metrics,
            entailment=scorer,
            dataset=str(dataset_path.resolve()),
            progress=step,
            label=p.label,
            run_config={**record, "run": {"label": p.label, "entry": p.entry, "seed": p.seed}},
            train=train,
        )
        seconds = time.perf_counter() - t0
        finished += sizes[p.split]
        result.runs.append((p, folder, run))
        result.seconds[p.folder] = seconds
        problem = run_problem(run.info, cfg.max_failed_share)
        if problem is not None:
            result.problems.append(f"{p.label} · {p.setting} · {p.split}: {problem} (see {folder}/run.json)")
        if on_run is not None:
            on_run(p, run, seconds)
    for split in cfg.splits:
        target = out if len(cfg.splits) == 1 else out / split
        folders = [f for q, f, _ in result.runs if q.split == split]
        result.reports[split] = build_report(
            folders,
            target,
            resamples=cfg.report.resamples,
            seed=cfg.report.seed,
            knowledge_base=knowledge,
            dialogues=report_dialogues(data[split], dataset_path),
            html_turns=cfg.report.html_turns,
            sort_by=cfg.report.sort_by,
            baseline=cfg.report.baseline,
            all_pairs=cfg.report.all_pairs,
            test_bounds=cfg.report.test_bounds,
            dialogue_pages=None if cfg.report.dialogue_pages == "all" else cfg.report.dialogue_pages,
        )
    return result
