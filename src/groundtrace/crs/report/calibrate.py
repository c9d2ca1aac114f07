"""Human calibration: Spearman correlation of a metric's per-unit values with human labels.

Human-label file (CSV, TSV or JSONL; the format is chosen by extension, ``.jsonl``/``.json`` = JSONL):
columns / keys ``dialogue_id``, ``turn_index``, ``label`` (a number, e.g. a 1–5 rating). For a
dialogue-level metric (recovery axis) ``turn_index`` is ignored and the labels of a dialogue are averaged.
Bad lines are skipped and listed as ``file:line: message``; repeated keys keep the first line.
Units whose metric value is missing or not applicable are left out and counted.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.crs.metrics import parse_metric
from groundtrace.crs.report.load import load_run


@dataclass
class HumanLabels:
    labels: dict[tuple[str, int | None], float]
    errors: list[str] = field(default_factory=list)


def read_human_labels(path: Path | str) -> HumanLabels:
    """Read a human-label file (module docstring)."""
    path = Path(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    if path.suffix.lower() in (".jsonl", ".json"):
        for number, obj, error in iter_jsonl(path, objects_only=True):
            if error is not None:
                errors.append(str(error))
            else:
                rows.append((number, obj))
    else:
        text = path.read_text(encoding="utf-8")
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
        missing = {"dialogue_id", "label"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}:1: missing column(s) {', '.join(sorted(missing))}")
        for number, row in enumerate(reader, 2):
            rows.append((number, dict(row)))
    labels: dict[tuple[str, int | None], float] = {}
    for number, row in rows:
        did = str(row.get("dialogue_id") or "").strip()
        raw_turn, raw_label = row.get("turn_index"), row.get("label")
        try:
            label = float(raw_label)  # type: ignore[arg-type]
            if not math.isfinite(label):
                raise ValueError
            turn = None if raw_turn in (None, "") else int(raw_turn)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            errors.append(
                f"{path}:{number}: label must be a finite number and turn_index an integer "
                f"(got label={raw_label!r}, turn_index={raw_turn!r})"
            )
            continue
        if not did:
            errors.append(f"{path}:{number}: empty dialogue_id")
            continue
        labels.setdefault((did, turn), label)
    return HumanLabels(labels, errors)


@dataclass
class Calibration:
    metric: str
    n: int
    rho: float | None
    p_value: float | None
    unmatched_labels: int
    not_applicable: int
    errors: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        head = (
            f"{self.metric}: Spearman rho = {self.rho:.4f} (p = {self.p_value:.4g}, n = {self.n})"
            if self.rho is not None
            else f"{self.metric}: rho undefined (n = {self.n}, or a constant series)"
        )
        tail = f"; {self.unmatched_labels} labels matched no unit, {self.not_applicable} units had no value"
        return head + tail + "".join(f"\nskipped {e}" for e in self.errors)


def spearman(xs: list[float], ys: list[float]) -> tuple[float | None, float | None]:
    """``scipy.stats.spearmanr`` (rho, two-sided p); ``(None, None)`` for n < 3 or a constant series."""
    from scipy.stats import spearmanr  # deferred: scipy.stats costs ~1-2 s to import

    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None, None
    result = spearmanr(xs, ys)
    return float(result.statistic), float(result.pvalue)


def calibrate_run(human: Path | str, run_dir: Path | str, metric: str = "cgs") -> Calibration:
    """Spearman rho of ``metric`` in ``run_dir``'s records against the labels in ``human``."""
    name = str(parse_metric(metric))
    run = load_run(run_dir)
    if name not in run.scores.get("counts", {}):
        raise KeyError(f"metric {name!r} is not in {run_dir} (have: {', '.join(run.metrics)})")
    data = read_human_labels(human)
    xs: list[float] = []
    ys: list[float] = []
    unmatched = not_applicable = 0
    if run.level(name) == "turn":
        values = run.turn_values(name)
        for (did, turn), label in data.labels.items():
            if turn is None or (did, turn) not in values:
                unmatched += 1
            elif values[(did, turn)] is None:
                not_applicable += 1
            else:
                xs.append(float(values[(did, turn)]))  # type: ignore[arg-type]
                ys.append(label)
    else:
        dvalues = run.dialogue_values(name)
        grouped: dict[str, list[float]] = {}
        for (did, _), label in data.labels.items():
            grouped.setdefault(did, []).append(label)
        for did, labels in grouped.items():
            if did not in dvalues:
                unmatched += len(labels)
            elif dvalues[did] is None:
                not_applicable += 1
            else:
                xs.append(float(dvalues[did]))  # type: ignore[arg-type]
                ys.append(sum(labels) / len(labels))
    rho, p = spearman(xs, ys)
    return Calibration(name, len(xs), rho, p, unmatched, not_applicable, data.errors)
