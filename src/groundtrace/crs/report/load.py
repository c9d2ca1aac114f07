"""Reading run folders (``run.json``, ``scores.json``, ``dialogues.json``, ``predictions.jsonl``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
        from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, read_predictions

        path = self.path / PREDICTIONS_FILE
        return read_predictions(path).predictions if path.is_file() else []


def load_run(path: Path | str) -> RunData:
    """Load a run folder; ``FileNotFoundError`` naming the missing file."""
    from groundtrace.crs.evaluation.run_files import META_FILE, RUN_FILE, SCORES_FILE

    path = Path(path)
    for name in (RUN_FILE, SCORES_FILE):
        if not (path / name).is_file():
            raise FileNotFoundError(
                f"{path}: not a run folder (no {name}); create it with `groundtrace crs run`"
            )
    info = json.loads((path / RUN_FILE).read_text(encoding="utf-8"))
    scores = json.loads((path / SCORES_FILE).read_text(encoding="utf-8"))
    meta_path = path / META_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    if "turns" not in scores or "dialogues" not in scores:
        raise ValueError(f"{path / SCORES_FILE}: no per-turn records (written with records=False?)")
    return RunData(path, info, scores, meta)


def label_runs(runs: list[RunData]) -> None:
    """Give each run a unique label: the system name, plus the folder name when a name repeats in a
    setting."""
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        seen[(run.system, run.setting)] = seen.get((run.system, run.setting), 0) + 1
    for run in runs:
        run.label = run.system if seen[(run.system, run.setting)] == 1 else f"{run.system} ({run.path.name})"
