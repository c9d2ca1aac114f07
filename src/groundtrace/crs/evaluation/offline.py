"""Scoring a predictions file offline (``crs score``) into a run folder.

The runner's pool check applies (:func:`~.inputs.check_pools`), so a file scores exactly like the same
outputs given through :func:`~.runner.run_system`; the folder is the same (:mod:`.run_files`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.inputs import check_pools
from groundtrace.crs.evaluation.provenance import provenance
from groundtrace.crs.evaluation.run_files import (
    PREDICTIONS_FILE,
    RUN_FILE,
    RunKeyMismatchError,
    dataset_hash,
    prediction_lines,
    previous_run,
    read_predictions,
    scorer_name,
    write_json,
)
from groundtrace.crs.evaluation.run_record import RunRecord
from groundtrace.crs.evaluation.runner import RunResult, check_setting
from groundtrace.crs.evaluation.score import write_scores
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.systems.predictions import Setting


def score_file(
    predictions: Path | str,
    dialogues: Sequence[AnyDialogue],
    kb: KnowledgeBase,
    out: Path | str,
    *,
    setting: Setting = "closed",
    split: str = "test",
    limit: int | None = None,
    metrics: Sequence[Any] | None = None,
    entailment: Any = None,
    dataset: str = "",
    label: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Score a predictions JSONL offline into ``out`` (``scores.json``, ``run.json``, a copy of the file).

    Bad lines are skipped and listed (``file:line: message``) in ``run.json["prediction_errors"]``. The
    runner's pool check applies (:func:`check_pools`): a ranking naming a POI outside the turn's pool
    makes the turn errored with the runner's error text, so a file scores exactly like the same outputs
    given through :func:`run_system`. Predictions for dialogues of ``dialogues`` beyond ``limit`` are left
    out (they are not orphans). ``out`` holding another run (another ``run.json`` key, or a
    ``predictions.jsonl`` of other content without ``run.json``) raises :class:`RunKeyMismatchError`
    before anything is written. ``label`` (``run.json["label"]``) names the run in reports.
    ``progress(done, total)`` is called as recommendation turns are scored. ``run.json["provenance"]``
    records what the scores were made with (:mod:`.provenance`).

    The cyclic garbage collector is paused during the call, as in ``score_predictions``: reading tens of
    thousands of predictions next to a large loaded dataset otherwise spends most of its time in
    generation-2 collections (10k demo dialogues: reading the predictions 0.75 -> 0.26 s CPU).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _score_file(
            predictions,
            dialogues,
            kb,
            out,
            setting,
            split,
            limit,
            metrics,
            entailment,
            dataset,
            label,
            progress,
        )
    finally:
        if was_enabled:
            gc.enable()


def _score_file(
    predictions: Path | str,
    dialogues: Sequence[AnyDialogue],
    kb: KnowledgeBase,
    out: Path | str,
    setting: Setting,
    split: str,
    limit: int | None,
    metrics: Sequence[Any] | None,
    entailment: Any,
    dataset: str,
    label: str | None,
    progress: Callable[[int, int], None] | None,
) -> RunResult:
    check_setting(setting)
    out = Path(out)
    file = read_predictions(predictions)
    selected = list(dialogues[:limit] if limit is not None else dialogues)
    systems = sorted({p.system for p in file.predictions if p.system})
    parts = {
        "system": systems[0] if len(systems) == 1 else f"predictions:{Path(predictions).name}",
        "config": {"predictions": str(predictions)},
        "dataset_hash": dataset_hash(dialogues),
        "setting": setting,
        "split": split,
    }
    record = RunRecord.begin(
        parts,
        dataset=dataset,
        kb_name=kb.name,
        kb_hash=kb.content_hash,
        mode="offline",
        label=label or None,
        limit=limit,
        entailment=scorer_name(entailment),
        provenance=provenance(),
    )
    key = record.run_key
    checked, pool_errors = check_pools(file.predictions, selected, setting)
    copy = out / PREDICTIONS_FILE
    in_place = Path(predictions).resolve() == copy.resolve()
    text = prediction_lines(checked)
    previous = previous_run(out, key)
    if not previous and not in_place and copy.is_file() and copy.read_bytes() != text.encode("utf-8"):
        raise RunKeyMismatchError(
            f"{out} holds a {PREDICTIONS_FILE} of other predictions and no {RUN_FILE} — use another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    if not in_place:
        copy.write_text(text, encoding="utf-8")
    del text  # tens of MB for a large run: not held while scoring
    all_ids = {d.dialogue_id for d in dialogues}
    selected_ids = {d.dialogue_id for d in selected}
    scored = [p for p in checked if p.dialogue_id in selected_ids or p.dialogue_id not in all_ids]
    s0 = time.perf_counter()
    table = write_scores(out, selected, scored, kb, setting, metrics, entailment, progress=progress)
    preds = [p for p in checked if p.dialogue_id in selected_ids and p.setting == setting]
    record.runs = int(previous.get("runs", 0)) + 1
    record.finish(
        table,
        preds,
        dialogues=len(selected),
        dialogues_run=0,
        bad_lines=len(file.errors),
        out_of_pool=pool_errors,
    )
    record.prediction_errors = file.errors[:50]
    info = record.close(previous, run_s=None, score_s=time.perf_counter() - s0, dialogues_run=0)
    write_json(out / RUN_FILE, info)
    table.info = info
    return RunResult(out, table, info)
