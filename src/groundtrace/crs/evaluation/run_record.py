"""``run.json``: one typed record for every way a run is made.

:class:`RunRecord` is the content of ``run.json`` (and of ``ScoreTable.info``) whether the run was made
by ``crs run`` / :func:`~.evaluate.evaluate` with a folder (``mode: "run"``), in memory by
:func:`~.evaluate.evaluate` (``mode: "memory"``, saved by ``ScoreTable.save``) or by scoring a predictions
file, ``crs score`` (``mode: "offline"``). Every mode writes every field; a value a mode cannot know is
``None`` (``workers`` and ``needs_gold`` of a predictions file, ``run_s`` of offline scoring) and a count it
does not make is 0. ``tests/crs/evaluation/test_run_record.py`` runs every path and compares the records.

The run key is ``sha256`` of the canonical JSON of ``{system, config, dataset_hash, setting, split}``
(:func:`~.run_files.run_key`); :meth:`RunRecord.begin` computes it from those parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.crs.evaluation.run_files import (
    RUN_FORMAT,
    error_sample,
    note_summary,
    now_iso,
    run_key,
    usage_summary,
)
from groundtrace.crs.systems.predictions import Prediction

RunMode = Literal["run", "memory", "offline"]


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunCounts(_Part):
    """Dialogues and turns of the run. ``dialogues_resumed`` = ``dialogues - dialogues_run``;
    ``unscorable_turns`` counts turns with no usable answer (errored, missing or out of pool)."""

    dialogues: int = 0
    dialogues_run: int = 0
    dialogues_resumed: int = 0
    turns: int = 0
    unscorable_turns: int = 0
    errored_turns: int = 0
    out_of_pool_turns: int = 0
    bad_prediction_lines: int = 0


class Latency(_Part):
    """Seconds per answered turn: mean, median, 95th percentile (numpy's linear interpolation), max, sum."""

    mean: float = 0.0
    p50: float = 0.0
    p95: float = 0.0
    max: float = 0.0
    total: float = 0.0


class RunUsage(_Part):
    """Latency and LLM usage over the run's predictions (:func:`~.run_files.usage_summary`)."""

    turns: int = 0
    latency_s: Latency = Field(default_factory=Latency)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_usd_per_turn: float = 0.0


class TurnError(_Part):
    dialogue_id: str
    turn_index: int
    error: str | None


class TurnNote(_Part):
    dialogue_id: str
    turn_index: int
    note: str | None


class RunNotes(_Part):
    """How many turns carry a ``note`` (answered in a degraded way) and the first 20."""

    turns: int = 0
    first: list[TurnNote] = Field(default_factory=list)


class RunTimings(_Part):
    """Wall seconds answering (``run_s``; ``None`` when no system was asked) and scoring."""

    run_s: float | None = None
    score_s: float | None = None


class HistoryEntry(_Part):
    """One invocation of a resumable run folder."""

    started: str
    run_s: float | None
    dialogues_run: int
    workers: int | None
    groundtrace: str | None = None
    git_commit: str | None = None


class RunRecord(_Part):
    """The content of ``run.json`` (module docstring), fields in the order they are written."""

    format: str = RUN_FORMAT
    run_key: str
    system: str
    config: dict[str, Any]
    dataset_hash: str
    setting: Literal["closed", "open"]
    split: str
    dataset: str = ""
    kb_name: str
    kb_hash: str
    mode: RunMode
    status: Literal["running", "complete"] = "running"
    label: str | None = None
    started: str = Field(default_factory=now_iso)
    finished: str | None = None
    limit: int | None = None
    workers: int | None = None
    needs_gold: bool | None = None
    entailment: str | None = None
    runs: int = 1
    counts: RunCounts = Field(default_factory=RunCounts)
    usage: RunUsage = Field(default_factory=RunUsage)
    errors: list[TurnError] = Field(default_factory=list)
    notes: RunNotes = Field(default_factory=RunNotes)
    prediction_errors: list[str] = Field(default_factory=list)
    timings: RunTimings = Field(default_factory=RunTimings)
    history: list[HistoryEntry] = Field(default_factory=list)
    provenance: dict[str, Any] | None = None
    run_config: dict[str, Any] | None = None

    @classmethod
    def begin(cls, parts: dict[str, Any], **fields: Any) -> RunRecord:
        """A ``running`` record for the key parts (system, config, dataset_hash, setting, split) and the
        other known ``fields``; ``run_key`` is computed from the parts."""
        return cls(run_key=run_key(parts), **parts, **fields)

    def finish(
        self,
        table: Any,
        preds: Sequence[Prediction],
        *,
        dialogues: int,
        dialogues_run: int,
        dialogues_resumed: int = 0,
        bad_lines: int = 0,
        out_of_pool: int = 0,
    ) -> None:
        """Complete the record from the scores ``table`` (a :class:`~.score.ScoreTable`) and the run's
        predictions ``preds`` (those of the selected dialogues in the run's setting): status, finish time,
        counts (``dialogues_resumed``: dialogues whose answers a resumed folder already held), usage, the
        first errors and notes."""
        self.status = "complete"
        self.finished = now_iso()
        self.counts = RunCounts(
            dialogues=dialogues,
            dialogues_run=dialogues_run,
            dialogues_resumed=dialogues_resumed,
            turns=table.n_turns,
            unscorable_turns=sum(not t.scorable for t in table.turns),
            errored_turns=sum(p.error is not None for p in preds),
            out_of_pool_turns=out_of_pool,
            bad_prediction_lines=bad_lines,
        )
        self.usage = RunUsage.model_validate(usage_summary(preds))
        self.errors = [TurnError.model_validate(e) for e in error_sample(preds)]
        self.notes = RunNotes.model_validate(note_summary(preds))

    def close(
        self, previous: dict[str, Any], *, run_s: float | None, score_s: float, dialogues_run: int
    ) -> dict[str, Any]:
        """Set the timings, append this invocation to the ``history`` of the folder's ``previous``
        ``run.json`` (entries that are not history entries are dropped) and return :meth:`to_json`."""
        self.timings = RunTimings(run_s=run_s, score_s=score_s)
        kept = []
        for entry in previous.get("history") or []:
            try:
                kept.append(HistoryEntry.model_validate(entry))
            except ValidationError:
                continue
        prov = self.provenance or {}
        git = prov.get("git")
        kept.append(
            HistoryEntry(
                started=self.started,
                run_s=run_s,
                dialogues_run=dialogues_run,
                workers=self.workers,
                groundtrace=prov.get("groundtrace"),
                git_commit=git.get("commit") if isinstance(git, dict) else None,
            )
        )
        self.history = kept
        return self.to_json()

    def to_json(self) -> dict[str, Any]:
        """The ``run.json`` content as a plain JSON-ready dict (what ``ScoreTable.info`` holds)."""
        return self.model_dump(mode="json")
