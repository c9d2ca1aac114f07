"""The TRACE-CRS evaluation runner: ask a system at every recommendation turn, record, score.

At each recommendation turn (a system turn with ``gold``) of each dialogue a system sees a
:class:`SystemInput`: the gold history before the turn (role/act/text only), the candidate pool of the
setting (closed: ``Dialogue.candidates``; open: the turn's ``gold.open_pool``) as cards, and those
candidates' reviews under their ``[Rn]`` tags (closed: ``Dialogue.review_refs``; open:
``groundtrace.crs.kb.knowledge_base.open_review_refs``). Its answer becomes a :class:`Prediction`.

Failure semantics: an exception, an output that is not a :class:`SystemOutput` (e.g. ``ranking`` not a
list) or a ranking naming a POI outside the pool makes that turn a prediction with ``error`` set — an
unscorable turn for the metrics (default value, counted) — never NaN, never dropped. :func:`score_file`
applies the same pool check to a predictions file (:func:`check_pools`), so identical outputs score
identically whichever path they come through.

Run directory (``out``) and resume
----------------------------------
* ``run.json`` — the run key and its parts (system, config, dataset hash, setting, split), written when
  the run starts (``status: running``) and rewritten at the end with timings, counts, latency and cost;
  ``history`` keeps one entry (start, ``run_s``, dialogues run, workers) per invocation.
  The key is ``sha256`` of the canonical JSON of those parts; a directory holding another key is refused
  (:class:`RunKeyMismatchError`): one directory, one (dataset, system, config, setting, split).
  :func:`score_file` makes the same check (its config is the predictions path).
* ``predictions.jsonl`` — one :class:`Prediction` per line; all turns of a dialogue are appended in one
  write, flushed and fsync'ed when the dialogue finishes, so a crash loses at most the dialogues in flight.
* Re-running with the same key skips dialogues whose every recommendation turn is in the file (with
  ``retry_errors`` also re-runs dialogues with an errored turn). A torn last line, or lines of dialogues
  to redo, are removed first (the file is rewritten atomically).
* ``scores.json`` — :meth:`ScoreTable.to_dict` over the selected dialogues (``limit`` applies here too).
* ``dialogues.json`` — per scored dialogue: city, POI type, difficulty tier, rejection flag (for report
  breakdowns without re-reading the dataset).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundtrace.core.files.text import utf8_error_message
from groundtrace.crs.kb.knowledge_base import KnowledgeBase, open_review_refs
from groundtrace.crs.schema import Dialogue, Turn
from groundtrace.crs.systems.base import CRSSystem, SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import (
    CandidateCard,
    HistoryTurn,
    Prediction,
    Setting,
    SystemInput,
    SystemOutput,
    TaggedReview,
)

PREDICTIONS_FILE = "predictions.jsonl"
SCORES_FILE = "scores.json"
RUN_FILE = "run.json"
META_FILE = "dialogues.json"
RUN_FORMAT = "groundtrace-crs-run/1"


class RunKeyMismatchError(ValueError):
    """The run directory already holds a run of another dataset/system/config/setting/split."""


# -- inputs ------------------------------------------------------------------------------------------


def candidate_card(kb: KnowledgeBase, poi_id: str) -> CandidateCard:
    """The card of a KB POI as shown to systems."""
    poi = kb.pois[poi_id]
    return CandidateCard(
        poi_id=poi.poi_id,
        name=poi.name,
        city=poi.city,
        poi_type=poi.poi_type,
        categories=list(poi.categories),
        price_level=poi.price_level,
        stars=poi.stars,
        lat=poi.lat,
        lon=poi.lon,
        attributes=dict(poi.attributes),
    )


def system_inputs(
    dialogue: Dialogue, kb: KnowledgeBase, setting: Setting
) -> Iterator[tuple[Turn, SystemInput]]:
    """``(turn, SystemInput)`` for each recommendation turn of ``dialogue`` in order (module docstring)."""
    anchor = dialogue.anchor.model_dump(mode="json") if dialogue.anchor is not None else None
    cards: dict[str, CandidateCard] = {}
    tagged: dict[tuple[str, ...], list[TaggedReview]] = {}  # per pool: every closed turn shares one list
    for turn in dialogue.recommendation_turns():
        assert turn.gold is not None
        pool = list(dialogue.candidates) if setting == "closed" else list(turn.gold.open_pool)
        for pid in pool:
            if pid not in cards:
                cards[pid] = candidate_card(kb, pid)
        reviews = tagged.get(tuple(pool))
        if reviews is None:
            refs = (
                dialogue.review_refs
                if setting == "closed"
                else open_review_refs(kb, dialogue.review_refs, pool)
            )
            in_pool = set(pool)
            reviews = tagged[tuple(pool)] = [
                TaggedReview(
                    tag=tag, review_id=ref.review_id, poi_id=ref.poi_id, text=kb.reviews[ref.review_id].text
                )
                for tag, ref in refs.items()
                if ref.poi_id in in_pool
            ]
        history = [HistoryTurn(role=t.role, act=t.act, text=t.text) for t in dialogue.turns[: turn.index]]
        yield (
            turn,
            SystemInput(
                dialogue_id=dialogue.dialogue_id,
                turn_index=turn.index,
                setting=setting,
                city=dialogue.city,
                poi_type=dialogue.poi_type,
                anchor=anchor,
                history=history,
                candidates=[cards[p] for p in pool],
                reviews=reviews,
            ),
        )


# -- one turn, one dialogue ----------------------------------------------------------------------------


def check_output(raw: object, pool: Sequence[str]) -> tuple[SystemOutput, TurnUsage]:
    """Coerce a system's return value to a valid output; ``ValueError`` naming the problem otherwise.

    Accepts a :class:`SystemReply`, a :class:`SystemOutput` or a dict in its shape. Every ranked id must
    be in ``pool``.
    """
    usage = TurnUsage()
    if isinstance(raw, SystemReply):
        raw, usage = raw.output, raw.usage
    if isinstance(raw, dict):
        try:
            raw = SystemOutput.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(root)"
            raise ValueError(f"invalid output: {where}: {first['msg']}") from None
    if not isinstance(raw, SystemOutput):
        raise ValueError(f"invalid output: expected SystemOutput, got {type(raw).__name__}")  # noqa: TRY004
    # model_construct or later mutation can bypass validation: check the shape again
    if not isinstance(raw.ranking, list) or not all(isinstance(p, str) for p in raw.ranking):
        raise ValueError("invalid output: ranking must be a list of POI id strings")
    if not isinstance(raw.response, str):
        raise ValueError("invalid output: response must be a string")  # noqa: TRY004
    problem = pool_violation(raw.ranking, pool)
    if problem is not None:
        raise ValueError(problem)
    return raw, usage


def pool_violation(ranking: Sequence[str], pool: Sequence[str] | set[str]) -> str | None:
    """The message for ranked ids outside ``pool`` (None when every id is in it).

    One function for the runner (:func:`check_output`) and for predictions files (:func:`check_pools`), so
    that both paths make the same turns unscorable with the same error text.
    """
    allowed = pool if isinstance(pool, set) else set(pool)
    unknown = [p for p in ranking if p not in allowed]
    if not unknown:
        return None
    more = f" (+{len(unknown) - 3} more)" if len(unknown) > 3 else ""
    return f"invalid output: unknown POI id(s) {', '.join(map(repr, unknown[:3]))}{more} not in the candidate pool"


def check_pools(
    preds: Sequence[Prediction], dialogues: Sequence[Dialogue], setting: Setting
) -> tuple[list[Prediction], int]:
    """``preds`` with the runner's pool check applied, and how many turns it made errored.

    A prediction of ``setting`` for a recommendation turn of ``dialogues`` whose ranking names a POI
    outside that turn's pool (closed: ``Dialogue.candidates``; open: ``gold.open_pool``) becomes errored
    exactly as :func:`run_dialogue` records it: ``error`` = ``"ValueError: invalid output: unknown POI
    id(s) ..."``, empty ranking and response (latency and usage are kept). Other predictions are unchanged.
    """
    pools: dict[tuple[str, int], set[str]] = {}
    for d in dialogues:
        closed = set(d.candidates) if setting == "closed" else None
        for turn in d.recommendation_turns():
            assert turn.gold is not None
            pools[(d.dialogue_id, turn.index)] = closed if closed is not None else set(turn.gold.open_pool)
    out: list[Prediction] = []
    errored = 0
    for p in preds:
        pool = pools.get((p.dialogue_id, p.turn_index)) if p.setting == setting and p.error is None else None
        problem = pool_violation(p.ranking, pool) if pool is not None else None
        if problem is None:
            out.append(p)
            continue
        errored += 1
        out.append(
            p.model_copy(update={"error": f"{ValueError.__name__}: {problem}", "ranking": [], "response": ""})
        )
    return out, errored


def run_dialogue(
    system: CRSSystem, dialogue: Dialogue, kb: KnowledgeBase, setting: Setting
) -> list[Prediction]:
    """The system's :class:`Prediction` at each recommendation turn of ``dialogue`` (errors recorded)."""
    out: list[Prediction] = []
    for turn, inp in system_inputs(dialogue, kb, setting):
        pool = [c.poi_id for c in inp.candidates]
        start = time.perf_counter()
        try:
            raw = system.respond(inp, turn.gold) if system.needs_gold else system.respond(inp)  # type: ignore[call-arg]
            latency = time.perf_counter() - start
            output, usage = check_output(raw, pool)
        except Exception as exc:  # noqa: BLE001 - any system failure makes the turn unscorable
            latency = time.perf_counter() - start
            out.append(
                Prediction(
                    dialogue_id=dialogue.dialogue_id,
                    turn_index=turn.index,
                    setting=setting,
                    system=system.name,
                    error=f"{type(exc).__name__}: {exc}",
                    latency_s=latency,
                )
            )
            continue
        out.append(
            Prediction(
                dialogue_id=dialogue.dialogue_id,
                turn_index=turn.index,
                setting=setting,
                system=system.name,
                ranking=list(output.ranking),
                response=output.response,
                latency_s=latency,
                cost_usd=usage.cost_usd,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
        )
    return out


# -- hashing and keys ----------------------------------------------------------------------------------


def _canonical(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def dataset_hash(dialogues: Sequence[Dialogue]) -> str:
    """sha256 over the canonical line (``dataset_io.dialogue_line``) of each dialogue, in order."""
    from groundtrace.crs.dataset.files import dialogue_line

    digest = hashlib.sha256()
    for d in dialogues:
        digest.update(dialogue_line(d).encode("utf-8"))
    return digest.hexdigest()


def run_key(parts: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the key parts (system, config, dataset hash, setting, split)."""
    return hashlib.sha256(_canonical(parts).encode("utf-8")).hexdigest()


# -- predictions files ---------------------------------------------------------------------------------


@dataclass
class PredictionsFile:
    """Predictions read from a JSONL file; ``errors`` holds ``file:line: message`` for skipped lines."""

    predictions: list[Prediction]
    errors: list[str] = field(default_factory=list)


def read_predictions(path: Path | str) -> PredictionsFile:
    """Read a predictions JSONL; a bad line is reported as ``file:line: message`` and skipped.

    The file is read as bytes and each line decoded on its own: a line that is not valid UTF-8 is
    reported as ``file:line: not valid UTF-8 (...)`` and the other lines are kept (a UTF-8 byte order mark
    at the start of the file is ignored).
    """
    path = Path(path)
    preds: list[Prediction] = []
    errors: list[str] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                errors.append(f"{path}:{number}: {utf8_error_message(raw, exc)}")
                continue
            if not line.strip():
                continue
            try:
                preds.append(Prediction.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "(line)"
                errors.append(f"{path}:{number}: {where}: {first['msg']}")
    return PredictionsFile(preds, errors)


def _prediction_lines(preds: Sequence[Prediction]) -> str:
    return "".join(p.model_dump_json() + "\n" for p in preds)


def _append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _prepare_resume(
    path: Path, dialogues: Sequence[Dialogue], retry_errors: bool
) -> tuple[set[str], list[str]]:
    """Finished dialogue ids in ``path``; rewrites the file without torn lines and unfinished dialogues."""
    if not path.exists():
        return set(), []
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
        tmp.write_text(_prediction_lines(keep), encoding="utf-8")
        tmp.replace(path)
    return done, file.errors


# -- summaries -----------------------------------------------------------------------------------------


def _percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of an ascending list."""
    if not sorted_values:
        return 0.0
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def usage_summary(preds: Sequence[Prediction]) -> dict[str, Any]:
    """Latency (mean, p50, p95, max, total in s) and LLM usage (tokens, USD) over ``preds``."""
    lat = sorted(p.latency_s for p in preds)
    n = len(lat)
    return {
        "turns": n,
        "latency_s": {
            "mean": sum(lat) / n if n else 0.0,
            "p50": _percentile(lat, 0.5),
            "p95": _percentile(lat, 0.95),
            "max": lat[-1] if lat else 0.0,
            "total": sum(lat),
        },
        "prompt_tokens": sum(p.prompt_tokens for p in preds),
        "completion_tokens": sum(p.completion_tokens for p in preds),
        "cost_usd": sum(p.cost_usd for p in preds),
        "cost_usd_per_turn": sum(p.cost_usd for p in preds) / n if n else 0.0,
    }


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(
        json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    tmp.replace(path)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- the run ------------------------------------------------------------------------------------------


@dataclass
class RunResult:
    """What :func:`run_system` / :func:`score_file` produced (also written to ``out``)."""

    out: Path
    table: Any  # ScoreTable
    info: dict[str, Any]


def dialogue_meta(d: Dialogue) -> dict[str, Any]:
    """What report breakdowns group by: city, POI type, tier, rejection, recommendation turns."""
    return {
        "city": d.city,
        "poi_type": d.poi_type,
        "difficulty": d.difficulty,
        "has_rejection": d.has_rejection,
        "split": d.split,
        "recommendation_turns": len(d.recommendation_turns()),
    }


def _score_and_write(
    out: Path,
    dialogues: Sequence[Dialogue],
    preds: Sequence[Prediction],
    kb: KnowledgeBase,
    setting: Setting,
    metrics: Sequence[str] | None,
    entailment: Any,
) -> Any:
    from groundtrace.crs.evaluation.score import score_predictions

    table = score_predictions(dialogues, preds, kb, setting=setting, metrics=metrics, entailment=entailment)
    _write_json(out / SCORES_FILE, table.to_dict())
    _write_json(out / META_FILE, {d.dialogue_id: dialogue_meta(d) for d in dialogues})
    return table


def run_system(
    system: CRSSystem | Callable[[], CRSSystem],
    dialogues: Sequence[Dialogue],
    kb: KnowledgeBase,
    out: Path | str,
    *,
    setting: Setting = "closed",
    split: str = "test",
    workers: int = 1,
    limit: int | None = None,
    retry_errors: bool = False,
    metrics: Sequence[str] | None = None,
    entailment: Any = None,
    dataset: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> RunResult:
    """Run ``system`` on ``dialogues`` (the whole split: it defines the dataset hash) into ``out``.

    ``system`` is an instance or a zero-argument factory; a factory is called once per worker thread
    when the system is not ``thread_safe``. ``limit`` keeps the first N dialogues. ``progress(done, total)``
    is called after each dialogue (skipped ones first). Returns the scores and the ``run.json`` content.
    """
    if setting not in ("closed", "open"):
        raise ValueError(f"setting must be 'closed' or 'open', got {setting!r}")
    factory: Callable[[], CRSSystem] = system if not isinstance(system, CRSSystem) else (lambda: system)  # type: ignore[assignment]
    first = factory()
    if isinstance(system, CRSSystem) and not system.thread_safe and workers > 1:
        raise ValueError(
            f"{type(system).__name__} is not thread-safe: pass a factory (e.g. the class) so that each of the "
            f"{workers} workers gets its own instance, or use workers=1"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parts = {
        "system": first.name or type(first).__name__,
        "config": first.config(),
        "dataset_hash": dataset_hash(dialogues),
        "setting": setting,
        "split": split,
    }
    key = run_key(parts)
    run_path = out / RUN_FILE
    previous = _previous_run(out, key)
    selected = list(dialogues[:limit] if limit is not None else dialogues)
    pred_path = out / PREDICTIONS_FILE
    done, bad_lines = _prepare_resume(pred_path, selected, retry_errors)
    todo = [d for d in selected if d.dialogue_id not in done]
    info: dict[str, Any] = {
        "format": RUN_FORMAT,
        "run_key": key,
        **parts,
        "dataset": dataset,
        "kb_name": kb.name,
        "kb_hash": kb.content_hash,
        "status": "running",
        "started": _now(),
        "limit": limit,
        "workers": workers,
        "needs_gold": first.needs_gold,
        "entailment": _scorer_name(entailment),
        "runs": int(previous.get("runs", 0)) + 1,
    }
    _write_json(run_path, info)

    total = len(selected)
    finished = len(selected) - len(todo)
    if progress is not None:
        progress(finished, total)
    t0 = time.perf_counter()
    local = threading.local()
    instances: list[CRSSystem] = [first]
    lock = threading.Lock()

    def worker_system() -> CRSSystem:
        if first.thread_safe or workers <= 1:
            return first
        if not hasattr(local, "system"):
            local.system = factory()
            with lock:
                instances.append(local.system)
        return local.system

    def job(d: Dialogue) -> list[Prediction]:
        return run_dialogue(worker_system(), d, kb, setting)

    try:
        if workers <= 1:
            for d in todo:
                _append(pred_path, _prediction_lines(job(d)))
                finished += 1
                if progress is not None:
                    progress(finished, total)
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="crs-run") as pool:
                pending: set[Future[list[Prediction]]] = set()
                queue = iter(todo)
                for d in queue:  # keep at most 2 × workers dialogues in flight
                    pending.add(pool.submit(job, d))
                    if len(pending) >= 2 * workers:
                        break
                while pending:
                    ready, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in ready:
                        _append(pred_path, _prediction_lines(fut.result()))
                        finished += 1
                        if progress is not None:
                            progress(finished, total)
                        nxt = next(queue, None)
                        if nxt is not None:
                            pending.add(pool.submit(job, nxt))
    finally:
        for instance in instances:  # release connections (HTTP) and other resources
            close = getattr(instance, "close", None)
            if callable(close):
                close()
    run_wall = time.perf_counter() - t0

    file = read_predictions(pred_path)
    selected_ids = {d.dialogue_id for d in selected}
    preds = [p for p in file.predictions if p.dialogue_id in selected_ids]
    s0 = time.perf_counter()
    table = _score_and_write(out, selected, preds, kb, setting, metrics, entailment)
    info.update(
        {
            "status": "complete",
            "finished": _now(),
            "timings": {"run_s": run_wall, "score_s": time.perf_counter() - s0},
            "counts": {
                "dialogues": len(selected),
                "dialogues_run": len(todo),
                "dialogues_resumed": len(selected) - len(todo),
                "turns": table.n_turns,
                "unscorable_turns": sum(not t.scorable for t in table.turns),
                "errored_turns": sum(p.error is not None for p in preds),
                "bad_prediction_lines": len(bad_lines),
            },
            "usage": usage_summary(preds),
            "errors": _error_sample(preds),
            "history": [
                *previous.get("history", []),
                {
                    "started": info["started"],
                    "run_s": run_wall,
                    "dialogues_run": len(todo),
                    "workers": workers,
                },
            ],
        }
    )
    _write_json(run_path, info)
    return RunResult(out, table, info)


def _previous_run(out: Path, key: str) -> dict[str, Any]:
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
    if previous.get("run_key") != key:
        source = previous.get("config", {}).get("predictions") if previous.get("mode") == "offline" else None
        what = f"predictions {source!r}" if isinstance(source, str) else f"system {previous.get('system')!r}"
        raise RunKeyMismatchError(
            f"{out} holds another run (key {str(previous.get('run_key'))[:12]}: {what}, "
            f"setting {previous.get('setting')!r}, split {previous.get('split')!r}); "
            f"this run has key {key[:12]} — use another --out"
        )
    return previous


def _scorer_name(entailment: Any) -> str | None:
    """How ``run.json`` names the NLI scorer (None: the NLI metric is unavailable)."""
    if entailment is None:
        return None
    return str(getattr(entailment, "name", "") or type(entailment).__name__)


def _error_sample(preds: Sequence[Prediction], limit: int = 20) -> list[dict[str, Any]]:
    return [
        {"dialogue_id": p.dialogue_id, "turn_index": p.turn_index, "error": p.error}
        for p in preds
        if p.error is not None
    ][:limit]


def score_file(
    predictions: Path | str,
    dialogues: Sequence[Dialogue],
    kb: KnowledgeBase,
    out: Path | str,
    *,
    setting: Setting = "closed",
    split: str = "test",
    limit: int | None = None,
    metrics: Sequence[str] | None = None,
    entailment: Any = None,
    dataset: str = "",
) -> RunResult:
    """Score a predictions JSONL offline into ``out`` (``scores.json``, ``run.json``, a copy of the file).

    Bad lines are skipped and listed (``file:line: message``) in ``run.json["prediction_errors"]``. The
    runner's pool check applies (:func:`check_pools`): a ranking naming a POI outside the turn's pool
    makes the turn errored with the runner's error text, so a file scores exactly like the same outputs
    given through :func:`run_system`. Predictions for dialogues of ``dialogues`` beyond ``limit`` are left
    out (they are not orphans). ``out`` holding another run (another ``run.json`` key, or a
    ``predictions.jsonl`` of other content without ``run.json``) raises :class:`RunKeyMismatchError`
    before anything is written.
    """
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
    key = run_key(parts)
    checked, pool_errors = check_pools(file.predictions, selected, setting)
    copy = out / PREDICTIONS_FILE
    in_place = Path(predictions).resolve() == copy.resolve()
    text = _prediction_lines(checked)
    previous = _previous_run(out, key)
    if not previous and not in_place and copy.is_file() and copy.read_bytes() != text.encode("utf-8"):
        raise RunKeyMismatchError(
            f"{out} holds a {PREDICTIONS_FILE} of other predictions and no {RUN_FILE} — use another --out"
        )
    out.mkdir(parents=True, exist_ok=True)
    if not in_place:
        copy.write_text(text, encoding="utf-8")
    all_ids = {d.dialogue_id for d in dialogues}
    selected_ids = {d.dialogue_id for d in selected}
    scored = [p for p in checked if p.dialogue_id in selected_ids or p.dialogue_id not in all_ids]
    s0 = time.perf_counter()
    table = _score_and_write(out, selected, scored, kb, setting, metrics, entailment)
    preds = [p for p in checked if p.dialogue_id in selected_ids and p.setting == setting]
    info: dict[str, Any] = {
        "format": RUN_FORMAT,
        "run_key": key,
        **parts,
        "dataset": dataset,
        "kb_name": kb.name,
        "kb_hash": kb.content_hash,
        "status": "complete",
        "mode": "offline",
        "entailment": _scorer_name(entailment),
        "finished": _now(),
        "limit": limit,
        "timings": {"score_s": time.perf_counter() - s0},
        "counts": {
            "dialogues": len(selected),
            "turns": table.n_turns,
            "unscorable_turns": sum(not t.scorable for t in table.turns),
            "errored_turns": sum(p.error is not None for p in preds),
            "out_of_pool_turns": pool_errors,
            "bad_prediction_lines": len(file.errors),
        },
        "prediction_errors": file.errors[:50],
        "usage": usage_summary(preds),
        "errors": _error_sample(preds),
    }
    _write_json(out / RUN_FILE, info)
    return RunResult(out, table, info)


# -- loading a dataset and its KB ----------------------------------------------------------------------


@dataclass
class LoadedDataset:
    """The dialogues of one split (``all`` = every split), the manifest and the line errors."""

    dialogues: list[Dialogue]
    manifest: dict[str, Any]
    errors: list[str]


def load_split(path: Path | str, split: str = "test") -> LoadedDataset:
    """Dialogues of ``split`` from a dataset folder or file (a single file is its own split)."""
    from groundtrace.crs.dataset.files import read_dataset

    data = read_dataset(path)
    if split == "all" or Path(path).is_file():
        dialogues = data.all_dialogues()
    elif split in data.splits:
        dialogues = data.splits[split]
    else:
        raise ValueError(
            f"{path}: no split {split!r} (have: {', '.join(sorted(data.splits)) or 'none'}, or 'all')"
        )
    return LoadedDataset(dialogues, data.manifest, [str(e) for e in data.errors])


def resolve_kb(spec: str | None, manifest: dict[str, Any], dialogues: Sequence[Dialogue]) -> KnowledgeBase:
    """The KB of a dataset: a KB file, ``demo`` / ``demo:SEED``, or (``spec=None``) the generated demo city
    named by the manifest when its regenerated content hash matches. Raises ``ValueError`` otherwise."""
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.kb.store import load_kb

    expected = manifest.get("kb_hash") or next((d.kb_hash for d in dialogues if d.kb_hash), "")
    if spec is None:
        name = str(manifest.get("kb_name", ""))
        if name.startswith("demo:") and name.rsplit(":", 1)[-1].startswith("seed"):
            kb = generate_demo_kb(int(name.rsplit("seed", 1)[-1]))
            if not expected or kb.content_hash == expected:
                return kb
        raise ValueError(
            f"cannot locate the KB of this dataset (kb {name or '?'}, hash {expected[:12] or '?'}): pass --kb FILE"
        )
    if spec == "demo" or spec.startswith("demo:"):
        kb = generate_demo_kb(int(spec.split(":", 1)[1]) if ":" in spec else 0)
    else:
        kb = load_kb(spec)
    if expected and kb.content_hash != expected:
        raise ValueError(
            f"KB {spec} has content hash {kb.content_hash[:12]}, the dataset was built on {expected[:12]}"
        )
    return kb
