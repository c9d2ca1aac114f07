"""Reading run folders (``run.json``, ``scores.json``, ``dialogues.json``, ``predictions.jsonl``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from groundtrace.core.files.validation import validation_message
from groundtrace.crs.evaluation.run_files import (
    META_FILE,
    PREDICTIONS_FILE,
    RUN_FILE,
    SCORES_FILE,
    read_predictions,
)
from groundtrace.crs.systems.http import is_url
from groundtrace.crs.systems.predictions import Prediction


@dataclass
class RunData:
    """One run folder, loaded. ``label`` names the run in tables (system name, made unique by the caller)."""

    path: Path
    info: dict[str, Any]
    scores: dict[str, Any]
    meta: dict[str, dict[str, Any]] = field(default_factory=dict)
    label: str = ""

    @property
    def system(self) -> str:
        return str(self.info.get("system") or self.path.name)

    @property
    def setting(self) -> str:
        return str(self.scores.get("setting", self.info.get("setting", "closed")))

    @property
    def metrics(self) -> list[str]:
        """Metrics with an aggregate in this run (requested and available), in report order."""
        return [m for m in self.scores.get("metrics", []) if m in self.scores.get("aggregate", {})]

    def level(self, metric: str) -> str:
        """``turn`` or ``dialogue``: where the per-unit values of ``metric`` live."""
        return str(self.scores["counts"][metric]["unit"])

    def turn_values(self, metric: str) -> dict[tuple[str, int], float | None]:
        return {
            (t["dialogue_id"], int(t["turn_index"])): t["values"].get(metric)
            for t in self.scores.get("turns", [])
        }

    def dialogue_values(self, metric: str) -> dict[str, float | None]:
        return {d["dialogue_id"]: d["values"].get(metric) for d in self.scores.get("dialogues", [])}

    def dialogue_ids(self) -> list[str]:
        return [d["dialogue_id"] for d in self.scores.get("dialogues", [])]

    def predictions(self) -> list[Prediction]:
        """Predictions of the run (empty when the file is absent); bad lines are skipped."""
        path = self.path / PREDICTIONS_FILE
        return read_predictions(path).predictions if path.is_file() else []


def load_run(path: Path | str) -> RunData:
    """Load a run folder; ``FileNotFoundError`` naming the missing file, ``ValueError`` (one line naming
    the file, and the line for bad JSON) when ``run.json``/``scores.json``/``dialogues.json`` is not JSON,
    holds NaN/Infinity or lacks the fields the report reads."""
    path = Path(path)
    for name in (RUN_FILE, SCORES_FILE):
        if not (path / name).is_file():
            raise FileNotFoundError(
                f"{path}: not a run folder (no {name}); create it with `groundtrace crs run`"
            )
    info = _read_object(path / RUN_FILE, _RunFile)
    scores_raw = _read_json(path / SCORES_FILE)
    if isinstance(scores_raw, dict) and ("turns" not in scores_raw or "dialogues" not in scores_raw):
        raise ValueError(f"{path / SCORES_FILE}: no per-turn records (written with records=False?)")
    scores = _validated(path / SCORES_FILE, scores_raw, _ScoresFile)
    meta_path = path / META_FILE
    meta = _read_object(meta_path, _MetaFile) if meta_path.is_file() else {}
    return RunData(path, info, scores, meta)


# -- run folder files are untrusted input: JSON, finite numbers, the shapes the report reads -------------
class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class _Latency(_Loose):
    mean: float = 0.0
    p95: float = 0.0


class _Usage(_Loose):
    latency_s: _Latency = Field(default_factory=_Latency)
    prompt_tokens: float = 0
    completion_tokens: float = 0
    cost_usd: float = 0.0
    cost_usd_per_turn: float = 0.0


class _RunFile(_Loose):
    system: str | None = None
    setting: str | None = None
    run_key: str | None = None
    dataset: str | None = None
    dataset_hash: str | None = None
    usage: _Usage | None = None
    counts: dict[str, int] = Field(default_factory=dict)


class _Count(_Loose):
    unit: str


class _TurnRow(_Loose):
    dialogue_id: str
    turn_index: int
    values: dict[str, float | None]
    scorable: bool = True  # absent: the turn counts as scorable (the report reads it with that default)


class _DialogueRow(_Loose):
    dialogue_id: str
    values: dict[str, float | None]


class _ScoresFile(_Loose):
    setting: str = "closed"
    metrics: list[str] = Field(default_factory=list)
    aggregate: dict[str, float | None] = Field(default_factory=dict)
    counts: dict[str, _Count] = Field(default_factory=dict)
    turns: list[_TurnRow]
    dialogues: list[_DialogueRow]


class _MetaFile(RootModel[dict[str, dict[str, Any]]]):
    pass


def _read_json(file: Path) -> Any:
    """The JSON value of ``file``; a one-line ``ValueError`` naming ``file:line:column`` when it is not JSON
    (NaN and Infinity included: they are not JSON and would poison every mean)."""

    def refuse(name: str) -> float:
        raise ValueError(f"non-finite number {name}")

    try:
        return json.loads(file.read_text(encoding="utf-8"), parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{file}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{file}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise ValueError(f"{file}: JSON nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"{file}: {exc}") from None


def _validated(file: Path, value: Any, model: type[BaseModel]) -> dict[str, Any]:
    try:
        parsed = model.model_validate(value)
    except ValidationError as exc:
        raise ValueError(f"{file}: not a run file: {validation_message(exc, model=model)}") from None
    del parsed  # validated only: the report reads the plain dict
    return value


def _read_object(file: Path, model: type[BaseModel]) -> dict[str, Any]:
    return _validated(file, _read_json(file), model)


def default_label(run: RunData) -> str:
    """``run.json["label"]`` (``--label``); else the system name — except for an HTTP system, whose name is
    its URL: then the run folder's name (tables name systems, not endpoints)."""
    label = run.info.get("label")
    if label:
        return str(label)
    return run.path.name if is_url(run.system) else run.system


def label_runs(runs: list[RunData]) -> None:
    """Give each run a unique label (:func:`default_label`), plus the folder name when a name repeats in
    a setting."""
    seen: dict[tuple[str, str], int] = {}
    names = [default_label(run) for run in runs]
    for run, name in zip(runs, names, strict=True):
        seen[(name, run.setting)] = seen.get((name, run.setting), 0) + 1
    for run, name in zip(runs, names, strict=True):
        run.label = name if seen[(name, run.setting)] == 1 else f"{name} ({run.path.name})"
