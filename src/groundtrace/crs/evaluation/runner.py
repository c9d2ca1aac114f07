"""Asking a system: every recommendation turn of every dialogue, with worker threads and resume.

:func:`run_dialogue` asks one system for one dialogue (inputs from :mod:`.inputs`; an exception or an
invalid output makes that turn a prediction with ``error`` set — unscorable, never NaN, never dropped).
:func:`answer_dialogues` does it for many dialogues, ``workers`` at a time. :func:`run_system` is the one
run path (``crs run``, ``crs leaderboard``, experiments and :func:`~.evaluate.evaluate` all call it): it
records the answers in a run folder (:mod:`.run_files`: ``run.json`` — a :class:`~.run_record.RunRecord` —
with the run key, ``predictions.jsonl`` appended per dialogue, resume, ``scores.json``, ``dialogues.json``)
or keeps them in memory, and scores them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundtrace.crs.dataset.lean import AnyDialogue, AnyTurn, gold_model
from groundtrace.crs.evaluation.inputs import check_output, system_inputs
from groundtrace.crs.evaluation.loading import load_dataset
from groundtrace.crs.evaluation.provenance import provenance
from groundtrace.crs.evaluation.run_files import (
    PREDICTIONS_FILE,
    RUN_FILE,
    PredictionLog,
    Resume,
    dataset_hash,
    dialogue_meta,
    prepare_resume,
    previous_run,
    scorer_name,
    write_json,
)
from groundtrace.crs.evaluation.run_record import RunRecord
from groundtrace.crs.evaluation.score import score_predictions, write_scores
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.systems.base import CRSSystem, SystemReply
from groundtrace.crs.systems.predictions import Prediction, Setting, SystemInput

SystemSpec = CRSSystem | Callable[[], CRSSystem]


@dataclass
class RunResult:
    """What :func:`run_system` / :func:`~.offline.score_file` produced (also written to ``out``; ``None``:
    a run in memory)."""

    out: Path | None
    table: Any  # ScoreTable
    info: dict[str, Any]


def check_setting(setting: str) -> None:
    """``ValueError`` unless ``setting`` is ``closed`` or ``open``."""
    if setting not in ("closed", "open"):
        raise ValueError(f"setting must be 'closed' or 'open', got {setting!r}")


# -- one turn, one dialogue ----------------------------------------------------------------------------


def _ask(
    system: CRSSystem, dialogue: AnyDialogue, turn: AnyTurn, inp: SystemInput, setting: Setting
) -> Prediction:
    """The system's answer to one turn as a :class:`Prediction` (``error`` set when it failed)."""
    pool = [c.poi_id for c in inp.candidates]
    where = {"dialogue_id": dialogue.dialogue_id, "turn_index": turn.index, "setting": setting}
    gold = gold_model(turn.gold) if system.needs_gold and turn.gold is not None else None  # pydantic
    start = time.perf_counter()
    try:
        raw = system.respond(inp, gold) if system.needs_gold else system.respond(inp)  # type: ignore[call-arg]
        latency = time.perf_counter() - start
        output, usage = check_output(raw, pool)
        note = raw.note[:500] if isinstance(raw, SystemReply) and raw.note else None
    except Exception as exc:  # noqa: BLE001 - any system failure makes the turn unscorable
        latency = time.perf_counter() - start
        spent = getattr(exc, "turn_usage", None)  # LLM calls the failed turn made (usage_on_failure)
        return Prediction(
            **where,
            system=system.name,
            error=f"{type(exc).__name__}: {exc}",
            latency_s=latency,
            cost_usd=max(0.0, getattr(spent, "cost_usd", 0.0)),
            prompt_tokens=max(0, getattr(spent, "prompt_tokens", 0)),
            completion_tokens=max(0, getattr(spent, "completion_tokens", 0)),
        )
    return Prediction(
        **where,
        system=system.name,
        ranking=list(output.ranking),
        response=output.response,
        latency_s=latency,
        cost_usd=usage.cost_usd,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        note=note,
    )


def run_dialogue(
    system: CRSSystem, dialogue: AnyDialogue, kb: KnowledgeBase, setting: Setting
) -> list[Prediction]:
    """The system's :class:`Prediction` at each recommendation turn of ``dialogue`` (errors recorded)."""
    return [_ask(system, dialogue, turn, inp, setting) for turn, inp in system_inputs(dialogue, kb, setting)]


# -- many dialogues ------------------------------------------------------------------------------------


class SystemPool:
    """The instances answering a run: one shared instance, or one per worker thread.

    ``system`` is an instance or a zero-argument factory (e.g. a class). A factory is called once up
    front (:attr:`first`, which names the run and gives its config) and, when the system is not
    ``thread_safe`` and ``workers > 1``, once more in each worker thread. An *instance* of a
    non-thread-safe system with ``workers > 1`` is refused (``ValueError``). ``prepare(instance)`` runs on
    every instance before it answers (the training hook, :func:`fit_on`).
    """

    def __init__(
        self, system: SystemSpec, workers: int, prepare: Callable[[CRSSystem], None] | None = None
    ) -> None:
        if isinstance(system, CRSSystem) and not system.thread_safe and workers > 1:
            raise ValueError(
                f"{type(system).__name__} is not thread-safe: pass a factory (e.g. the class) so that each "
                f"of the {workers} workers gets its own instance, or use workers=1"
            )
        self._factory: Callable[[], CRSSystem] = (
            (lambda: system) if isinstance(system, CRSSystem) else system  # type: ignore[assignment]
        )
        self._prepare = prepare
        self.first = self._build()
        self._shared = self.first.thread_safe or workers <= 1
        self._local = threading.local()
        self._instances = [self.first]
        self._lock = threading.Lock()

    def get(self) -> CRSSystem:
        """The instance for the calling thread."""
        if self._shared:
            return self.first
        if not hasattr(self._local, "system"):
            self._local.system = self._build()
            with self._lock:
                self._instances.append(self._local.system)
        return self._local.system

    def _build(self) -> CRSSystem:
        instance = self._factory()
        if self._prepare is not None:
            self._prepare(instance)
        return instance

    def close(self) -> None:
        """Call ``close()`` on every instance that has one (HTTP connections and other resources)."""
        for instance in self._instances:
            close = getattr(instance, "close", None)
            if callable(close):
                close()


def fit_on(train: Sequence[AnyDialogue] | None, kb: KnowledgeBase) -> Callable[[CRSSystem], None] | None:
    """The training hook: ``system.learn(train, kb)`` for a system that has ``learn`` (the systems
    learn their constraint understanding from the train split, ``crs/systems/toolkit/learning.py``);
    None without train dialogues."""
    if not train:
        return None

    def prepare(system: CRSSystem) -> None:
        learn = getattr(system, "learn", None)
        if callable(learn):
            learn(train, kb)

    return prepare


TrainSource = Sequence[AnyDialogue] | Callable[[], Sequence[AnyDialogue]] | None


def trainer(train: TrainSource, dataset: str, kb: KnowledgeBase) -> Callable[[CRSSystem], None]:
    """The training hook of a run: :func:`fit_on` with ``train`` (dialogues, or a zero-argument function
    giving them, e.g. :class:`LazyTrainSplit` shared by the runs of a suite), or (``None``) with the
    ``train`` split of the ``dataset`` folder — read only when a system that has ``learn`` asks (once per
    run): a system that learns nothing costs no read of the train split."""
    read: list[Callable[[CRSSystem], None] | None] = []
    lock = threading.Lock()  # worker threads build their own instances

    def prepare(system: CRSSystem) -> None:
        if not callable(getattr(system, "learn", None)):
            return
        with lock:
            if not read:
                dialogues = train() if callable(train) else train
                read.append(fit_on(dialogues if dialogues is not None else train_split_of(dataset), kb))
        if read[0] is not None:
            read[0](system)

    return prepare


class LazyTrainSplit:
    """The ``train`` split of a dataset folder, read on the first call (by a system that learns) and kept
    for the next ones: the runs of ``crs leaderboard`` / an experiment read it at most once."""

    def __init__(self, dataset: str) -> None:
        self.dataset = dataset
        self._dialogues: list[AnyDialogue] | None = None
        self._lock = threading.Lock()

    def __call__(self) -> list[AnyDialogue]:
        with self._lock:
            if self._dialogues is None:
                self._dialogues = train_split_of(self.dataset)
            return self._dialogues


def train_split_of(dataset: str) -> list[AnyDialogue]:
    """The ``train`` split of the dataset folder ``dataset`` (empty for a file, a folder without one,
    or an empty path), as the validated dialogues a system learns from (every field)."""
    path = Path(dataset) if dataset else None
    if path is None or not (path / "train.jsonl").is_file():
        return []

    return list(load_dataset(path, "train"))


def answer_dialogues(
    systems: SystemPool,
    dialogues: Sequence[AnyDialogue],
    kb: KnowledgeBase,
    setting: Setting,
    workers: int,
    on_dialogue: Callable[[list[Prediction]], None],
) -> None:
    """Ask for every dialogue; ``on_dialogue(predictions)`` runs in the calling thread as each finishes.

    With ``workers > 1`` a thread pool keeps at most ``2 × workers`` dialogues in flight, and dialogues
    are reported in completion order.
    """

    def job(d: AnyDialogue) -> list[Prediction]:
        return run_dialogue(systems.get(), d, kb, setting)

    if workers <= 1:
        for d in dialogues:
            on_dialogue(job(d))
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crs-run") as pool:
        pending: set[Future[list[Prediction]]] = set()
        queue = iter(dialogues)
        for d in queue:
            pending.add(pool.submit(job, d))
            if len(pending) >= 2 * workers:
                break
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in ready:
                on_dialogue(fut.result())
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(pool.submit(job, nxt))


def run_parts(
    system: CRSSystem, dialogues: Sequence[AnyDialogue], setting: str, split: str
) -> dict[str, Any]:
    """The parts of a run key: system name, config, dataset hash (of the whole split), setting, split."""
    return {
        "system": system.name or type(system).__name__,
        "config": system.config(),
        "dataset_hash": dataset_hash(dialogues),
        "setting": setting,
        "split": split,
    }


def run_system(
    system: SystemSpec,
    dialogues: Sequence[AnyDialogue],
    kb: KnowledgeBase,
    out: Path | str | None = None,
    *,
    setting: Setting = "closed",
    split: str = "test",
    workers: int = 1,
    limit: int | None = None,
    retry_errors: bool = False,
    metrics: Sequence[Any] | None = None,
    entailment: Any = None,
    dataset: str = "",
    progress: Callable[[int, int], None] | None = None,
    label: str | None = None,
    run_config: dict[str, Any] | None = None,
    train: TrainSource = None,
) -> RunResult:
    """Run ``system`` on ``dialogues`` (the whole split: it defines the dataset hash) and score it — the one
    run path: :func:`~.evaluate.evaluate` (the library and ``crs run``), ``crs leaderboard`` and
    ``crs run --config`` all come here.

    ``out`` is the run folder (recorded as it goes and resumable, ``run.json["mode"] == "run"``); ``None``
    runs in memory (nothing written, ``mode: "memory"``; :meth:`~.score.ScoreTable.save` writes the same
    folder later). ``system`` is an instance or a zero-argument factory (see :class:`SystemPool`).
    ``limit`` keeps the first N dialogues. ``progress(done, total)`` is called after each dialogue (skipped
    ones first). ``label`` (``run.json["label"]``) names the run in reports instead of the system name; it
    is not part of the run key, so a run can be relabelled on resume. ``run.json["provenance"]`` records
    what the run was made with (:mod:`.provenance`); ``run_config`` (e.g. the ``crs run --config`` file's
    content) is stored as ``run.json["run_config"]``. ``train``: the dialogues a system with ``learn``
    learns from before the run (:func:`fit_on`; or a function giving them, :class:`LazyTrainSplit`); None
    reads the ``train`` split of the ``dataset`` folder when it has one and the system learns
    (:func:`trainer`). Returns the scores and the ``run.json``
    content (:class:`~.run_record.RunRecord`); a folder holding another run raises
    :class:`~.run_files.RunKeyMismatchError`.
    """
    check_setting(setting)
    systems = SystemPool(system, workers, trainer(train, dataset, kb))
    parts = run_parts(systems.first, dialogues, setting, split)
    record = RunRecord.begin(
        parts,
        dataset=dataset,
        kb_name=kb.name,
        kb_hash=kb.content_hash,
        mode="memory" if out is None else "run",
        label=label or None,
        limit=limit,
        workers=workers,
        needs_gold=systems.first.needs_gold,
        entailment=scorer_name(entailment),
        provenance=provenance(),
        run_config=run_config,
    )
    selected = list(dialogues[:limit] if limit is not None else dialogues)
    previous: dict[str, Any] = {}
    resume = Resume()
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        previous = previous_run(out, record.run_key)
        resume = prepare_resume(out / PREDICTIONS_FILE, selected, retry_errors)
        record.runs = int(previous.get("runs", 0)) + 1
        write_json(out / RUN_FILE, record.to_json())
    todo = [d for d in selected if d.dialogue_id not in resume.done]

    finished = [len(selected) - len(todo)]
    if progress is not None and finished[0]:  # resumed: the dialogues already answered, at once
        progress(finished[0], len(selected))
    answered: list[Prediction] = []
    log = PredictionLog(out / PREDICTIONS_FILE) if out is not None else None

    def keep(preds: list[Prediction]) -> None:
        if log is not None:
            log.append(preds)
        answered.extend(preds)
        finished[0] += 1
        if progress is not None:
            progress(finished[0], len(selected))

    t0 = time.perf_counter()
    try:
        answer_dialogues(systems, todo, kb, setting, workers, keep)
    finally:
        if log is not None:
            log.close()
        systems.close()
    run_wall = time.perf_counter() - t0

    # what the file now holds, without reading it back: the kept lines, then this run's, in file order
    selected_ids = {d.dialogue_id for d in selected}
    preds = [p for p in resume.predictions if p.dialogue_id in selected_ids] + answered
    s0 = time.perf_counter()
    if out is not None:
        table = write_scores(out, selected, preds, kb, setting, metrics, entailment)
    else:
        table = score_predictions(
            selected, preds, kb, setting=setting, metrics=metrics, entailment=entailment
        )
        table.outputs = preds
        table.meta = {d.dialogue_id: dialogue_meta(d) for d in selected}
    record.finish(
        table,
        preds,
        dialogues=len(selected),
        dialogues_run=len(todo),
        dialogues_resumed=len(selected) - len(todo),
        bad_lines=len(resume.errors),
    )
    info = record.close(previous, run_s=run_wall, score_s=time.perf_counter() - s0, dialogues_run=len(todo))
    if out is not None:
        write_json(out / RUN_FILE, info)
    table.info = info
    return RunResult(out, table, info)
