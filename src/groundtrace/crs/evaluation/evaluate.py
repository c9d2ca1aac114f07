"""``evaluate``: run a system on a dataset and score it, all in memory (no run folder).

The same steps as ``crs run`` — the same inputs, pool check, failure semantics, scoring and ``run.json``
content — without writing anything; :meth:`ScoreTable.save` writes the folder when wanted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.loading import DialogueList, RecordList, load_records, resolve_kb
from groundtrace.crs.evaluation.run_files import RUN_FORMAT, dialogue_meta, now_iso, run_key, scorer_name
from groundtrace.crs.evaluation.runner import (
    SystemPool,
    answer_dialogues,
    check_setting,
    final_info,
    run_parts,
)
from groundtrace.crs.evaluation.score import ScoreTable, score_predictions
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.base import Metric, parse_metrics
from groundtrace.crs.systems.factory import SystemLike, system_factory
from groundtrace.crs.systems.predictions import Prediction


def _dialogues(dataset: Path | str | Sequence[AnyDialogue], split: str) -> Sequence[AnyDialogue]:
    if isinstance(dataset, str | Path):
        return load_records(dataset, split)
    return dataset if isinstance(dataset, DialogueList | RecordList) else list(dataset)


def _kb(kb: KnowledgeBase | str | Path | None, dialogues: Sequence[AnyDialogue]) -> KnowledgeBase:
    """The KB to score against; its content hash must be the one the dialogues were built on."""
    manifest = getattr(dialogues, "manifest", {})
    if kb is None:
        return resolve_kb(None, manifest, dialogues)
    if not isinstance(kb, KnowledgeBase):
        return resolve_kb(str(kb), manifest, dialogues)
    expected = manifest.get("kb_hash") or next((d.kb_hash for d in dialogues if d.kb_hash), "")
    if expected and kb.content_hash != expected:
        raise ValueError(
            f"KB {kb.name} has content hash {kb.content_hash[:12]}, the dataset was built on {expected[:12]}"
        )
    return kb


def _entailment(entailment: Any) -> Any:
    if isinstance(entailment, str):
        from groundtrace.core.nli.entailment import make_scorer

        return make_scorer(entailment)
    return entailment


def evaluate(
    system: SystemLike,
    dataset: Path | str | Sequence[AnyDialogue],
    kb: KnowledgeBase | str | Path | None = None,
    setting: str = "closed",
    metrics: str | Iterable[str | Metric] | None = None,
    *,
    split: str = "test",
    workers: int = 1,
    limit: int | None = None,
    entailment: Any = None,
    system_args: dict[str, Any] | None = None,
    seed: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoreTable:
    """Run ``system`` on ``dataset`` and score it in memory; returns the :class:`ScoreTable`.

    * ``system``: a registered name or alias, an ``http(s)://`` URL, a :class:`CRSSystem` subclass or
      instance, or a zero-argument factory; ``system_args`` go to its constructor (``seed`` too when it
      takes one) — see :func:`~groundtrace.crs.systems.factory.system_factory`.
    * ``dataset``: a dataset folder / JSONL file (``split`` is read from it) or a list of dialogues
      (e.g. from :func:`~groundtrace.crs.evaluation.loading.load_dataset`); ``limit`` keeps the first N.
    * ``kb``: a :class:`KnowledgeBase`, a KB file, ``"demo"`` / ``"demo:SEED"``, or ``None`` (the demo
      city named by the dataset manifest); refused when its content hash is not the dataset's.
    * ``metrics``: ``None`` (the 25 defaults), ``"recall@1,cgs"`` or a list of names/metrics, plug-in
      metrics included. ``entailment``: a scorer object or a registered name (e.g. ``"lexical"``) for the
      NLI metric, else it is listed as unavailable.

    The table carries the predictions (``outputs``), ``run.json``'s content (``info``, with the run key
    ``crs run`` would compute) and the per-dialogue metadata (``meta``).
    """
    check_setting(setting)
    dialogues = _dialogues(dataset, split)
    knowledge = _kb(kb, dialogues)
    wanted = parse_metrics(metrics) if metrics is not None else None
    scorer = _entailment(entailment)
    systems = SystemPool(system_factory(system, system_args, seed=seed), workers)
    parts = run_parts(systems.first, dialogues, setting, split)
    selected = list(dialogues[:limit] if limit is not None else dialogues)
    preds: list[Prediction] = []
    started = now_iso()

    finished = [0]

    def record(answers: list[Prediction]) -> None:
        preds.extend(answers)
        finished[0] += 1
        if progress is not None:
            progress(finished[0], len(selected))

    t0 = time.perf_counter()
    try:
        answer_dialogues(systems, selected, knowledge, setting, workers, record)  # type: ignore[arg-type]
    finally:
        systems.close()
    run_wall = time.perf_counter() - t0
    s0 = time.perf_counter()
    table = score_predictions(selected, preds, knowledge, setting=setting, metrics=wanted, entailment=scorer)
    path = getattr(dialogues, "path", None)
    table.outputs = preds
    table.meta = {d.dialogue_id: dialogue_meta(d) for d in selected}
    table.info = {
        "format": RUN_FORMAT,
        "run_key": run_key(parts),
        **parts,
        "dataset": str(Path(path).resolve()) if path is not None else "",
        "kb_name": knowledge.name,
        "kb_hash": knowledge.content_hash,
        "mode": "memory",
        "started": started,
        "limit": limit,
        "workers": workers,
        "needs_gold": systems.first.needs_gold,
        "entailment": scorer_name(scorer),
        **final_info(table, preds, len(selected), len(selected), 0),
        "timings": {"run_s": run_wall, "score_s": time.perf_counter() - s0},
    }
    return table
