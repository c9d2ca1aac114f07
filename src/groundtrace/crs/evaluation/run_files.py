"""The run folder: file names, run keys, ``predictions.jsonl`` IO with resume, ``run.json`` helpers.

Layout of a run folder (``crs run`` / ``crs score`` / :meth:`ScoreTable.save`)
------------------------------------------------------------------------------
* ``run.json`` — the run key and its parts (system, config, dataset hash, setting, split), written when
  the run starts (``status: running``) and rewritten at the end with timings, counts, latency and cost;
  ``history`` keeps one entry (start, ``run_s``, dialogues run, workers) per invocation.
  The key is ``sha256`` of the canonical JSON of those parts; a folder holding another key is refused
  (:class:`RunKeyMismatchError`): one folder, one (dataset, system, config, setting, split).
* ``predictions.jsonl`` — one :class:`Prediction` per line; all turns of a dialogue are appended in one
  write and flushed when the dialogue finishes (:class:`PredictionLog`), so a crash of the process loses
  at most the dialogues in flight; the file is ``fsync``'ed at most every second and at the end (an OS
  crash or power loss loses at most that second).
* Re-running with the same key skips dialogues whose every recommendation turn is in the file (with
  ``retry_errors`` also re-runs dialogues with an errored turn). A torn last line, or lines of dialogues
  to redo, are removed first (the file is rewritten atomically) — :func:`prepare_resume`.
* ``scores.json`` — :meth:`ScoreTable.to_dict` over the selected dialogues.
* ``dialogues.json`` — per scored dialogue: city, POI type, difficulty tier, rejection flag
  (:func:`dialogue_meta`, for report breakdowns without re-reading the dataset).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import numpy as np
from pydantic import ValidationError

from groundtrace.core.files.indented_json import write_indented_json
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset.files import dialogue_line
from groundtrace.crs.dataset.lean import AnyDialogue, LeanDialogue
from groundtrace.crs.systems.predictions import Prediction

PREDICTIONS_FILE = "predictions.jsonl"
SCORES_FILE = "scores.json"
RUN_FILE = "run.json"
META_FILE = "dialogues.json"
RUN_FORMAT = "groundtrace-crs-run/1"


class RunKeyMismatchError(ValueError):
    """The run folder already holds a run of another dataset/system/config/setting/split."""


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def dataset_hash(dialogues: Sequence[AnyDialogue] | Sequence[LeanDialogue]) -> str:
    """sha256 over the canonical line (``dataset.files.dialogue_line``) of each dialogue, in order.

    A loaded split that knows its hash (``loading.RecordList.dataset_hash``, computed from the lines while
    reading) gives it; lean records alone cannot (they do not keep every field): ``TypeError``.
    """
    known = getattr(dialogues, "dataset_hash", None)
    if isinstance(known, str) and known:
        return known
    digest = hashlib.sha256()
    for d in dialogues:
        if isinstance(d, LeanDialogue):
            raise TypeError(
                "dataset_hash needs the dialogues as read (loading.load_records / load_dataset), "
                "not lean records alone"
            )
        digest.update(dialogue_line(d).encode("utf-8"))
    return digest.hexdigest()


def run_key(parts: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the key parts (system, config, dataset hash, setting, split)."""
    return hashlib.sha256(_canonical(parts).encode("utf-8")).hexdigest()


@dataclass
class PredictionsFile:
    """Predictions read from a JSONL file; ``errors`` holds ``file:line: message`` for skipped lines."""

    predictions: list[Prediction]
    errors: list[str] = field(default_factory=list)


def read_predictions(path: Path | str) -> PredictionsFile:
    """Read a predictions JSONL; a bad line is reported as ``file:line: message`` and skipped.

    Lines are read by ``core.files.jsonl.iter_jsonl``: a line that is not valid UTF-8, not JSON, too long
    or too deeply nested is reported and the other lines are kept.
    """
    path = Path(path)
    preds: list[Prediction] = []
    errors: list[str] = []
    for number, value, error in iter_jsonl(path):
        if error is not None:
            errors.append(str(error))
            continue
        try:
            preds.append(Prediction.model_validate(value))
        except ValidationError as exc:
            errors.append(f"{path}:{number}: {validation_message(exc, model=Prediction)}")
    return PredictionsFile(preds, errors)


def prediction_lines(preds: Sequence[Prediction]) -> str:
    """The JSONL text of ``preds``: one compact JSON object per line, each line ending in a newline."""
    return "".join(p.model_dump_json() + "\n" for p in preds)


def append_text(path: Path, text: str) -> None:
    """Append ``text`` to ``path`` in one write, flushed and fsync'ed (a crash loses nothing written)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


class PredictionLog:
    """``predictions.jsonl`` open for appending during a run: each dialogue's lines in one write, flushed
    at once (in the file as soon as the dialogue finishes: a killed process loses nothing written), and
    ``fsync``'ed at most every ``sync_s`` seconds and on :meth:`close` (an OS crash or power loss loses at
    most the last ``sync_s`` seconds). The file is opened (created) on the first append. A context
    manager."""

    def __init__(self, path: Path, sync_s: float = 1.0) -> None:
        self.path = path
        self.sync_s = sync_s
        self._handle: Any = None
        self._synced = time.monotonic()
        self._dirty = False

    def append(self, preds: Sequence[Prediction]) -> None:
        if self._handle is None:
            self._handle = self.path.open("a", encoding="utf-8")
        self._handle.write(prediction_lines(preds))
        self._handle.flush()
        self._dirty = True
        if time.monotonic() - self._synced >= self.sync_s:
            self.sync()

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._handle.fileno())
            self._dirty = False
        self._synced = time.monotonic()

    def close(self) -> None:
        if self._handle is not None and not self._handle.closed:
            self.sync()
            self._handle.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Resume:
    """What a run folder's ``predictions.jsonl`` holds before a run (:func:`prepare_resume`): the finished
    dialogues, the predictions kept in the file (file order) and the ``file:line`` messages of bad lines."""

    done: set[str] = field(default_factory=set)
    predictions: list[Prediction] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def prepare_resume(path: Path, dialogues: Sequence[AnyDialogue], retry_errors: bool) -> Resume:
    """Finished dialogue ids in ``path`` and the predictions kept; rewrites the file without torn lines,
    bad lines and unfinished dialogues (atomically), so that it holds exactly ``Resume.predictions``."""
    if not path.exists():
        return Resume()
    raw = path.read_bytes()
    torn = not raw.endswith(b"\n") and bool(raw)
    file = read_predictions(path)
    wanted = {d.dialogue_id: {t.index for t in d.recommendation_turns()} for d in dialogues}
    by_dialogue: dict[str, list[Prediction]] = {}
    for p in file.predictions:
        by_dialogue.setdefault(p.dialogue_id, []).append(p)
    done: set[str] = set()
    for did, preds in by_dialogue.items():
        have = {p.turn_index for p in preds}
        if did in wanted and wanted[did] <= have and not (retry_errors and any(p.error for p in preds)):
            done.add(did)
    keep = [p for p in file.predictions if p.dialogue_id in done or p.dialogue_id not in wanted]
    if torn or file.errors or len(keep) != len(file.predictions):
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(prediction_lines(keep), encoding="utf-8")
        tmp.replace(path)
    return Resume(done, keep, file.errors)


def usage_summary(preds: Sequence[Prediction]) -> dict[str, Any]:
    """Latency (mean, p50, p95, max, total in s; percentiles by ``numpy.percentile``'s default linear
    interpolation) and LLM usage (tokens, USD) over ``preds``; zeros when there are none."""
    lat = np.array([p.latency_s for p in preds], dtype=float)
    n = len(lat)
    cost = sum(p.cost_usd for p in preds)
    return {
        "turns": n,
        "latency_s": {
            "mean": float(lat.mean()) if n else 0.0,
            "p50": float(np.percentile(lat, 50)) if n else 0.0,
            "p95": float(np.percentile(lat, 95)) if n else 0.0,
            "max": float(lat.max()) if n else 0.0,
            "total": float(lat.sum()),
        },
        "prompt_tokens": sum(p.prompt_tokens for p in preds),
        "completion_tokens": sum(p.completion_tokens for p in preds),
        "cost_usd": cost,
        "cost_usd_per_turn": cost / n if n else 0.0,
    }


def write_json(path: Path, data: object) -> None:
    """Write ``data`` as indented JSON atomically (a temporary file, then ``replace``).

    NaN and infinities are refused (``ValueError`` naming the file; nothing is replaced): they are not
    JSON, and a ``NaN`` latency or score in ``run.json``/``scores.json`` would silently poison every mean
    computed from it. The text is ``json.dumps(data, indent=2, ensure_ascii=False)`` plus a newline,
    written in pieces of about 1 MiB as it is encoded (a 10k-dialogue ``scores.json`` is ~25 MB of text
    made of millions of small chunks: joined at once they took ~150 MB) by
    :func:`~groundtrace.core.files.indented_json.write_indented_json` (the same text, several times
    faster than the standard library's pure-Python indented encoder).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            write_indented_json(data, handle.write)
            handle.write("\n")
    except ValueError as exc:
        tmp.unlink(missing_ok=True)
        raise ValueError(f"{path}: refusing to write a non-finite number (NaN/inf): {exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def dialogue_meta(d: AnyDialogue) -> dict[str, Any]:
    """What report breakdowns group by: city, POI type, tier, rejection, recommendation turns."""
    return {
        "city": d.city,
        "poi_type": d.poi_type,
        "difficulty": d.difficulty,
        "has_rejection": d.has_rejection,
        "split": d.split,
        "recommendation_turns": len(d.recommendation_turns()),
    }


def previous_run(out: Path, key: str) -> dict[str, Any]:
    """The ``run.json`` already in ``out`` ({} when none); :class:`RunKeyMismatchError` when it holds
    another key (``crs run`` and ``crs score`` share this check: one folder, one run)."""
    run_path = out / RUN_FILE
    if not run_path.exists():
        return {}
    try:
        previous = json.loads(run_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunKeyMismatchError(f"{run_path}: not a run.json ({exc}) — use another --out") from None
    if not isinstance(previous, dict):
        raise RunKeyMismatchError(f"{run_path}: not a run.json (not a JSON object) — use another --out")
    shapes = {"runs": (int, "an integer"), "history": (list, "an array"), "config": (dict, "an object")}
    for name, (kind, what) in shapes.items():
        value = previous.get(name)
        if name in previous and (not isinstance(value, kind) or isinstance(value, bool)):
            raise RunKeyMismatchError(
                f"{run_path}: not a run.json ({name!r} is not {what}) — use another --out"
            )
    if previous.get("run_key") != key:
        source = previous.get("config", {}).get("predictions") if previous.get("mode") == "offline" else None
        what = f"predictions {source!r}" if isinstance(source, str) else f"system {previous.get('system')!r}"
        raise RunKeyMismatchError(
            f"{out} holds another run (key {str(previous.get('run_key'))[:12]}: {what}, "
            f"setting {previous.get('setting')!r}, split {previous.get('split')!r}); "
            f"this run has key {key[:12]} — use another --out"
        )
    return previous


def scorer_name(entailment: Any) -> str | None:
    """How ``run.json`` names the NLI scorer (None: the NLI metric is unavailable)."""
    if entailment is None:
        return None
    return str(getattr(entailment, "name", "") or type(entailment).__name__)


def note_summary(preds: Sequence[Prediction], limit: int = 20) -> dict[str, Any]:
    """``{"turns": n, "first": [...]}``: how many turns carry a ``note`` (answered in a degraded way, e.g.
    trace-hybrid's offline fallback) and the first ``limit`` as ``{dialogue_id, turn_index, note}``."""
    noted = [p for p in preds if p.note]
    return {
        "turns": len(noted),
        "first": [{"dialogue_id": p.dialogue_id, "turn_index": p.turn_index, "note": p.note} for p in noted][
            :limit
        ],
    }


def error_sample(preds: Sequence[Prediction], limit: int = 20) -> list[dict[str, Any]]:
    """The first ``limit`` errored turns as ``{dialogue_id, turn_index, error}``."""
    return [
        {"dialogue_id": p.dialogue_id, "turn_index": p.turn_index, "error": p.error}
        for p in preds
        if p.error is not None
    ][:limit]


def save_table(table: Any, out: Path | str) -> Path:
    """Write a :class:`~.score.ScoreTable` as a run folder: ``predictions.jsonl`` (its ``outputs``),
    ``scores.json``, ``dialogues.json`` and ``run.json`` (its ``info``; at least format and setting).

    A folder holding another run (another key in ``run.json``) raises :class:`RunKeyMismatchError`.
    """
    out = Path(out)
    info = {"format": RUN_FORMAT, "setting": table.setting, **table.info}
    if info.get("run_key"):
        previous_run(out, str(info["run_key"]))
    elif (out / RUN_FILE).exists():
        raise RunKeyMismatchError(f"{out} already holds a run — use another folder")
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{PREDICTIONS_FILE}.{os.getpid()}.tmp"
    tmp.write_text(prediction_lines(table.outputs), encoding="utf-8")
    tmp.replace(out / PREDICTIONS_FILE)
    write_json(out / SCORES_FILE, table.to_dict())
    write_json(out / META_FILE, table.meta)
    write_json(out / RUN_FILE, info)
    return out
