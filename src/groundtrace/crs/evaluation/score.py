"""``score_predictions``: compute metrics for one run and aggregate them into a :class:`ScoreTable`.

Contract
--------
* Only recommendation turns (system turns with ``gold``) are scored. A turn whose prediction is
  missing, or has ``error`` set, is *unscorable*: each turn metric takes its documented default for it
  (pooled metrics: ``(default, 1)``) and the turn is counted under ``unscorable`` — never NaN, never
  dropped. Dialogue metrics see such a turn as having no top-1 (see :mod:`.recovery`).
* A value of ``None`` means *not applicable* (e.g. price alignment without a price constraint); it is
  left out of the mean and counted under ``not_applicable``. A metric with no value at all aggregates
  to ``None``.
* Metrics of the other setting (``recall@k`` in an open run, ``open_recall@k`` in a closed run) and the
  NLI metric without an ``entailment`` scorer are listed in ``unavailable`` with the reason.
* Predictions for another setting are ignored; predictions that match no recommendation turn are
  orphans; repeated (dialogue_id, turn_index) keep the first. All three are counted.
* Rankings are scored as given, ids outside the candidate pool or the KB included (the metric fixtures
  rely on it). The CLI/HTTP paths first apply the runner's pool check (``inputs.check_output`` for a
  live system, ``inputs.check_pools`` in ``score_file``), which makes such turns errored; a library
  caller wanting the same should call ``inputs.check_pools`` first.
* Each metric is computed by its own kernel (``Metric.family.kernel``): a metric registered by a
  plug-in is computed exactly like a built-in one.
* The NLI scorer is called once per run with every distinct (premise, hypothesis) pair.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from groundtrace.crs.dataset.lean import AnyDialogue
from groundtrace.crs.evaluation.run_files import META_FILE, SCORES_FILE, dialogue_meta, save_table, write_json
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.metrics.base import Metric, parse_metric
from groundtrace.crs.metrics.context import DialogueContext, DialogueState, RunState, TurnContext
from groundtrace.crs.metrics.defaults import DEFAULT_METRICS
from groundtrace.crs.metrics.lexicon import Lexicon, load_lexicon
from groundtrace.crs.systems.predictions import Prediction


class EntailmentLike(Protocol):
    """What the NLI metric needs: ``score([(premise, hypothesis), ...]) -> [P(entailment), ...]``."""

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


@dataclass
class MetricCounts:
    """How a metric's aggregate was formed (units are turns or dialogues, see ``unit``)."""

    unit: str
    scored: int = 0
    unscorable: int = 0
    not_applicable: int = 0


@dataclass
class TurnRecord:
    dialogue_id: str
    turn_index: int
    scorable: bool
    error: str | None
    values: dict[str, float | None]


@dataclass
class DialogueRecord:
    dialogue_id: str
    unscorable_turns: int
    values: dict[str, float | None]


@dataclass
class PredictionStats:
    used: int = 0
    missing: int = 0
    errored: int = 0
    other_setting: int = 0
    orphan: int = 0
    duplicate: int = 0
    over_limit: int = 0
    """Answers over a size limit of the grounding metrics (longer than MAX_RESPONSE_CHARS, or more than
    MAX_QUOTES_PER_TURN quoted citations): their excess was not analysed (``crs.metrics.support``)."""


@dataclass
class ScoreTable:
    """Per-turn and per-dialogue values, aggregates, counts and unavailable metrics of one run."""

    setting: str
    metrics: list[str]
    aggregate: dict[str, float | None]
    counts: dict[str, MetricCounts]
    unavailable: dict[str, str]
    turns: list[TurnRecord] = field(default_factory=list)
    dialogues: list[DialogueRecord] = field(default_factory=list)
    predictions: PredictionStats = field(default_factory=PredictionStats)
    n_dialogues: int = 0
    n_turns: int = 0
    #: What a run folder needs besides the scores (filled by ``evaluate`` and the runner, else empty):
    #: the scored predictions, ``run.json``'s content and the per-dialogue metadata of ``dialogues.json``.
    outputs: list[Prediction] = field(default_factory=list, repr=False)
    info: dict[str, Any] = field(default_factory=dict, repr=False)
    meta: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    @property
    def system(self) -> str:
        """The system's name as recorded in ``info`` (``""`` when unknown)."""
        return str(self.info.get("system", ""))

    def value(self, metric: str | Metric) -> float | None:
        """The aggregate of ``metric`` (any alias); ``KeyError`` when it was not requested or unavailable."""
        return self.aggregate[str(parse_metric(metric))]

    def to_dict(self, *, records: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "setting": self.setting,
            "n_dialogues": self.n_dialogues,
            "n_turns": self.n_turns,
            "metrics": list(self.metrics),
            "metric_versions": {m: _version(m) for m in self.metrics},
            "aggregate": dict(self.aggregate),
            "counts": {k: asdict(v) for k, v in self.counts.items()},
            "unavailable": dict(self.unavailable),
            "predictions": asdict(self.predictions),
        }
        if records:  # what dataclasses.asdict gives, built directly (asdict deep-copies: 10x slower)
            out["turns"] = [
                {
                    "dialogue_id": t.dialogue_id,
                    "turn_index": t.turn_index,
                    "scorable": t.scorable,
                    "error": t.error,
                    "values": dict(t.values),
                }
                for t in self.turns
            ]
            out["dialogues"] = [
                {
                    "dialogue_id": d.dialogue_id,
                    "unscorable_turns": d.unscorable_turns,
                    "values": dict(d.values),
                }
                for d in self.dialogues
            ]
        return out

    def save(self, out: Path | str) -> Path:
        """Write the run folder ``crs run`` writes (``predictions.jsonl``, ``scores.json``,
        ``dialogues.json``, ``run.json``) into ``out``; a folder holding another run is refused."""
        return save_table(self, out)


def _version(metric: str) -> int:
    """The definition version of ``metric`` (``MetricFamily.version``; 1 for a name no longer registered)."""
    try:
        return parse_metric(metric).family.version
    except (KeyError, ValueError):
        return 1


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def score_predictions(
    dialogues: Iterable[AnyDialogue],
    predictions: Iterable[Prediction],
    kb: KnowledgeBase,
    *,
    setting: str = "closed",
    metrics: Iterable[str | Metric] | None = None,
    entailment: EntailmentLike | None = None,
    lexicon: Lexicon | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoreTable:
    """Score ``predictions`` of one run on ``dialogues`` (see the module docstring for the contract).

    ``progress(done, total)`` is called after each recommendation turn's metrics (``total``: all of them).

    The cyclic garbage collector is paused during the call: scoring allocates many small acyclic
    objects, and generation-2 collections over a large loaded dataset otherwise dominate the run time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _score(dialogues, predictions, kb, setting, metrics, entailment, lexicon, progress)
    finally:
        if was_enabled:
            gc.enable()


def _score(
    dialogues: Iterable[AnyDialogue],
    predictions: Iterable[Prediction],
    kb: KnowledgeBase,
    setting: str,
    metrics: Iterable[str | Metric] | None,
    entailment: EntailmentLike | None,
    lexicon: Lexicon | None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoreTable:
    if setting not in ("closed", "open"):
        raise ValueError(f"setting must be 'closed' or 'open', got {setting!r}")
    requested, active, unavailable = _select_metrics(metrics, setting, entailment)
    dialogues = _unique_dialogues(dialogues)
    run = RunState(kb, lexicon or load_lexicon(), setting)
    stats = PredictionStats()
    index = _index_predictions(predictions, setting, stats)
    dctxs, errors = _contexts(dialogues, index, run, stats)
    all_turns = [t for d in dctxs for t in d.turns]
    if entailment is not None and any(m.requires == "entailment" for m in active):
        run.entailment = _entailment_scores(entailment, all_turns, kb)

    counts = {str(m): MetricCounts(unit=m.level) for m in active}
    turn_values, aggregate = _turn_metrics(
        [m for m in active if m.level == "turn"], all_turns, counts, progress
    )
    stats.over_limit = sum(t.limited for t in all_turns)
    dialogue_values = _dialogue_metrics(
        [m for m in active if m.level == "dialogue"], dctxs, counts, aggregate
    )

    turn_records = [
        TurnRecord(
            dialogue_id=t.dialogue.dialogue_id,
            turn_index=t.turn.index,
            scorable=t.scorable,
            error=errors.get(
                (t.dialogue.dialogue_id, t.turn.index), None if t.scorable else "missing prediction"
            ),
            values=turn_values[i],
        )
        for i, t in enumerate(all_turns)
    ]
    dialogue_records = [
        DialogueRecord(
            dialogue_id=d.dialogue.dialogue_id,
            unscorable_turns=sum(not t.scorable for t in d.turns),
            values=dialogue_values[j],
        )
        for j, d in enumerate(dctxs)
    ]
    return ScoreTable(
        setting=setting,
        metrics=[str(m) for m in requested],
        aggregate={str(m): aggregate[str(m)] for m in requested if str(m) in aggregate},
        counts=counts,
        unavailable=unavailable,
        turns=turn_records,
        dialogues=dialogue_records,
        predictions=stats,
        n_dialogues=len(dctxs),
        n_turns=len(all_turns),
    )


def _select_metrics(
    metrics: Iterable[str | Metric] | None, setting: str, entailment: EntailmentLike | None
) -> tuple[list[Metric], list[Metric], dict[str, str]]:
    """(requested metrics without repeats, those computable in this run, unavailable ones → reason)."""
    requested = list(
        dict.fromkeys(parse_metric(m) for m in (DEFAULT_METRICS if metrics is None else metrics))
    )
    unavailable: dict[str, str] = {}
    active: list[Metric] = []
    for metric in requested:
        if metric.setting not in ("any", setting):
            unavailable[str(metric)] = f"{metric.setting}-set metric; this run's setting is {setting!r}"
        elif metric.requires == "entailment" and entailment is None:
            unavailable[str(metric)] = (
                "no entailment scorer configured (CLI: --nli NAME|DIR; API: entailment=EntailmentScorer)"
            )
        else:
            active.append(metric)
    return requested, active, unavailable


def _unique_dialogues(dialogues: Iterable[AnyDialogue]) -> list[AnyDialogue]:
    """``dialogues`` as a list; ``ValueError`` when a dialogue id repeats."""
    out = list(dialogues)
    seen_ids: set[str] = set()
    for d in out:
        if d.dialogue_id in seen_ids:
            raise ValueError(f"dialogue_id {d.dialogue_id!r} appears twice in the scored dialogues")
        seen_ids.add(d.dialogue_id)
    return out


def _index_predictions(
    predictions: Iterable[Prediction], setting: str, stats: PredictionStats
) -> dict[tuple[str, int], Prediction]:
    """Predictions of ``setting`` by (dialogue_id, turn_index), the first kept; the rest counted."""
    index: dict[tuple[str, int], Prediction] = {}
    for p in predictions:
        if p.setting != setting:
            stats.other_setting += 1
            continue
        key = (p.dialogue_id, p.turn_index)
        if key in index:
            stats.duplicate += 1
            continue
        index[key] = p
    return index


def _contexts(
    dialogues: list[AnyDialogue],
    index: dict[tuple[str, int], Prediction],
    run: RunState,
    stats: PredictionStats,
) -> tuple[list[DialogueContext], dict[tuple[str, int], str | None]]:
    """One context per dialogue and recommendation turn (an errored prediction counts as no answer)."""
    dctxs: list[DialogueContext] = []
    errors: dict[tuple[str, int], str | None] = {}
    matched = 0
    for dialogue in dialogues:
        dstate = DialogueState(dialogue, run)
        tctxs = []
        for position, turn in enumerate(dialogue.recommendation_turns()):
            key = (dialogue.dialogue_id, turn.index)
            pred = index.get(key)
            if pred is None:
                stats.missing += 1
            else:
                matched += 1
                if pred.error is not None:
                    stats.errored += 1
                    errors[key] = pred.error
                    pred = None
                else:
                    stats.used += 1
            tctxs.append(TurnContext(dstate, turn, position, pred))
        dctxs.append(DialogueContext(dstate, tctxs))
    stats.orphan = len(index) - matched
    return dctxs, errors


def _entailment_scores(
    entailment: EntailmentLike, turns: list[TurnContext], kb: KnowledgeBase
) -> dict[tuple[str, str], float]:
    """P(entailment) of every distinct (review text, claim) pair of the scorable turns: one scorer call."""
    pairs: dict[tuple[str, str], None] = {}
    for t in turns:
        if t.scorable:
            for hypothesis, review_ids in t.claims:
                for rid in review_ids:
                    pairs[(kb.reviews[rid].text, hypothesis)] = None
    unique = list(pairs)
    scores = list(entailment.score(unique)) if unique else []
    if len(scores) != len(unique):
        raise ValueError(f"entailment scorer returned {len(scores)} scores for {len(unique)} pairs")
    floats = [float(x) for x in scores]
    bad = next((x for x in floats if not 0.0 <= x <= 1.0), None)  # NaN fails both comparisons
    if bad is not None:
        raise ValueError(f"entailment scorer returned {bad!r}; scores must be probabilities in [0, 1]")
    return dict(zip(unique, floats, strict=True))


class _TurnMetric:
    """One turn metric as the scoring loop reads it: its kernel and rules looked up once per run."""

    __slots__ = ("acc", "applies", "count", "default", "kernel", "metric", "name", "pooled")

    def __init__(self, metric: Metric, count: MetricCounts) -> None:
        self.name = str(metric)
        self.metric = metric
        self.kernel = metric.family.kernel
        self.pooled = metric.aggregation == "pooled"
        self.default = metric.default
        self.applies = metric.family.applies
        self.count = count
        self.acc = [0.0, 0.0]  # [Σ value, n] for a turn mean, [Σ numerator, Σ denominator] if pooled

    def value(self, t: TurnContext, scorable: bool) -> float | None:
        """The value at ``t`` (the metric object's own kernel), added to ``acc``/``count``: an unscorable
        turn contributes the metric's default (pooled: ``(default, 1)``) unless ``applies`` says the
        metric does not apply to it."""
        acc, count = self.acc, self.count
        if not scorable:
            if self.applies is not None and not self.applies(t):
                count.not_applicable += 1
                return None
            count.unscorable += 1
            value = self.default
            assert value is not None
            acc[0] += value
            acc[1] += 1.0
            return value
        if self.pooled:
            num, den = self.kernel(self.metric, t)
            acc[0] += num
            acc[1] += den
            if den > 0:
                count.scored += 1
                return num / den
            count.not_applicable += 1
            return None
        value = self.kernel(self.metric, t)
        if value is None:
            count.not_applicable += 1
        else:
            count.scored += 1
            acc[0] += value
            acc[1] += 1.0
        return value


def _turn_metrics(
    metrics: list[Metric],
    turns: list[TurnContext],
    counts: dict[str, MetricCounts],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[dict[str, float | None]], dict[str, float | None]]:
    """Per-turn values and run aggregates (Σ/n or Σnum/Σden) of the turn metrics.

    Turn-major, so each turn's parsed text is freed (``release``) once its values are known, and each
    dialogue's open-setting tag tables once its last turn is done (turns come in dialogue order);
    ``progress(done, len(turns))`` after each turn.
    """
    plan = [_TurnMetric(m, counts[str(m)]) for m in metrics]
    values: list[dict[str, float | None]] = []
    total = len(turns)
    if progress is not None:
        progress(0, total)
    previous = None
    for done, t in enumerate(turns, 1):
        if previous is not None and t.dstate is not previous:
            previous.release()
        previous = t.dstate
        scorable = t.scorable
        values.append({m.name: m.value(t, scorable) for m in plan})
        t.release()
        if progress is not None:
            progress(done, total)
    if previous is not None:
        previous.release()
    aggregate = {m.name: (m.acc[0] / m.acc[1] if m.acc[1] else None) for m in plan}
    return values, aggregate


def _dialogue_metrics(
    metrics: list[Metric],
    dctxs: list[DialogueContext],
    counts: dict[str, MetricCounts],
    aggregate: dict[str, float | None],
) -> list[dict[str, float | None]]:
    """Per-dialogue values of the dialogue metrics; their means are added to ``aggregate``."""
    dialogue_values: list[dict[str, float | None]] = [{} for _ in dctxs]
    for metric in metrics:
        name, kernel, count = str(metric), metric.family.kernel, counts[str(metric)]
        values = []
        for j, d in enumerate(dctxs):
            value = kernel(metric, d)
            if value is None:
                count.not_applicable += 1
            else:
                values.append(value)
                if d.scorable:
                    count.scored += 1
                else:
                    count.unscorable += 1
            dialogue_values[j][name] = value
        aggregate[name] = _mean(values)
    return dialogue_values


def write_scores(
    out: Path,
    dialogues: Sequence[AnyDialogue],
    preds: Sequence[Prediction],
    kb: Any,
    setting: str,
    metrics: Sequence[Any] | None,
    entailment: Any,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """Score ``preds`` on ``dialogues`` and write ``scores.json`` and ``dialogues.json`` into ``out``
    (``progress(done, total)``: recommendation turns scored, see ``score_predictions``).

    Returns the :class:`~.score.ScoreTable`, carrying the predictions (``outputs``) and the dialogue
    metadata (``meta``) so that :meth:`~.score.ScoreTable.save` can write the folder again elsewhere.
    """
    table = score_predictions(
        dialogues, preds, kb, setting=setting, metrics=metrics, entailment=entailment, progress=progress
    )
    table.outputs = list(preds)
    table.meta = {d.dialogue_id: dialogue_meta(d) for d in dialogues}
    write_json(out / SCORES_FILE, table.to_dict())
    write_json(out / META_FILE, table.meta)
    return table
