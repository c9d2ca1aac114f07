"""``evaluate``: run a system on a dataset and score it — in memory, or into a run folder (``crs run``).

``crs run`` is this call plus argument parsing: the same inputs, pool check, failure semantics, scoring
and ``run.json`` (:class:`~.run_record.RunRecord`) — :func:`~.runner.run_system` is the one run path.
Without ``out`` nothing is written; :meth:`ScoreTable.save` writes the folder when wanted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from groundtrace.core.nli.entailment import make_scorer
from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.loading import DialogueList, RecordList, load_records, resolve_kb
from groundtrace.crs.evaluation.runner import TrainSource, check_setting, run_system
from groundtrace.crs.evaluation.score import ScoreTable
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.base import Metric, parse_metrics
from groundtrace.crs.systems.factory import SystemLike, system_factory


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
    out: Path | str | None = None,
    retry_errors: bool = False,
    label: str | None = None,
    run_config: dict[str, Any] | None = None,
    train: TrainSource = None,
) -> ScoreTable:
    """Run ``system`` on ``dataset`` and score it; returns the :class:`ScoreTable`.

    * ``system``: a registered name or alias, an ``http(s)://`` URL, a :class:`CRSSystem` subclass or
      instance, or a zero-argument factory; ``system_args`` go to its constructor (``seed`` too when it
      takes one) — see :func:`~groundtrace.crs.systems.factory.system_factory`.
    * ``dataset``: a dataset folder / JSONL file (``split`` is read from it by the fast reader,
      :func:`~.loading.load_records`) or a list of dialogues (e.g. from :func:`~.loading.load_records` /
      :func:`~.loading.load_dataset`); ``limit`` keeps the first N.
    * ``kb``: a :class:`KnowledgeBase`, a KB file, ``"demo"`` / ``"demo:SEED"``, or ``None`` (the demo
      city named by the dataset manifest); refused when its content hash is not the dataset's.
    * ``metrics``: ``None`` (the 25 defaults), ``"recall@1,cgs"`` or a list of names/metrics, plug-in
      metrics included. ``entailment``: a scorer object or a registered name (e.g. ``"lexical"``) for the
      NLI metric, else it is listed as unavailable.
    * ``out``: ``None`` runs in memory (:meth:`ScoreTable.save` writes the folder when wanted); a folder
      records the run as it goes, resumable — what ``crs run`` does (``retry_errors``: re-run dialogues
      with an errored turn on resume). ``label``, ``run_config``, ``train``: see
      :func:`~.runner.run_system`, the one run path this calls.

    The table carries the predictions (``outputs``), ``run.json``'s content (``info``, a
    :class:`~.run_record.RunRecord` as a dict, with the run key ``crs run`` would compute) and the
    per-dialogue metadata (``meta``).
    """
    check_setting(setting)
    dialogues = _dialogues(dataset, split)
    knowledge = _kb(kb, dialogues)
    wanted = parse_metrics(metrics) if metrics is not None else None
    path = getattr(dialogues, "path", None)
    result = run_system(
        system_factory(system, system_args, seed=seed),
        dialogues,
        knowledge,
        out,
        setting=setting,  # type: ignore[arg-type]
        split=split,
        workers=workers,
        limit=limit,
        retry_errors=retry_errors,
        metrics=wanted,
        entailment=_entailment(entailment),
        dataset=str(Path(path).resolve()) if path is not None else "",
        progress=progress,
        label=label,
        run_config=run_config,
        train=train,
    )
    return result.table
