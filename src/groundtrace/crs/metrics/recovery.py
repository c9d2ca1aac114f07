"""Recovery metrics (4, dialogue level): rejection recovery, T2R, task success, rejected-repeat rate.

Version 2 (rejection recovery, rejected repeat) reads the text as well as the ranking: a recommendation
turn whose answer recommends a rejected POI by name (``text_claims.recommends_by_name``: "I'd recommend
Olive Grove", "Olive Grove looks like a great fit") repeats it whatever the ranking says, and does not
recover from the rejection.

A recommendation turn "hits" when its top-1 is the gold POI or one of the turn's multi-reference POIs.
A recommendation turn with a missing or errored prediction has no top-1: it never hits and never
equals the gold; for the rejected-repeat rate it counts as a repeat (worst case).
"""

from __future__ import annotations

from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import DialogueContext, TurnContext
from groundtrace.crs.metrics.text_claims import recommends_by_name

#: definition version of rejection_recovery and rejected_repeat (2: the text is read too)
VERSION = 2


def hits(ctx: TurnContext) -> bool:
    """Top-1 ∈ {gold} ∪ multi_ref."""
    top = ctx.top1
    return top is not None and (top == ctx.gold.gold_poi or top in ctx.gold.multi_ref)


def text_repeats(ctx: TurnContext, rejected: set[str]) -> bool:
    """The answer recommends one of the ``rejected`` POIs by name (cached per turn and rejected set)."""
    if not rejected or ctx.prediction is None:
        return False
    key = "text_repeats:" + ",".join(sorted(rejected))
    found = ctx.memo.get(key)
    if found is None:
        pois = ctx.run.kb.pois
        ranked = tuple(pois[p].name for p in ctx.ranking if p in pois and p not in rejected)
        found = ctx.memo[key] = any(
            recommends_by_name(ctx.response, pois[p].name, ranked) for p in sorted(rejected) if p in pois
        )
    return bool(found)


def repeats(ctx: TurnContext, rejected: set[str]) -> bool:
    """The turn recommends a rejected POI: its top-1 was rejected, or its text recommends one by name."""
    return ctx.top1 in rejected or text_repeats(ctx, rejected)


def _rejection_recovery(metric: Metric, d: DialogueContext) -> float | None:
    events = 0
    recovered = 0
    rejected: set[str] = set()
    for turn in d.dialogue.turns:
        if turn.role == "user":
            rejected.update(turn.rejected)
        if turn.role != "user" or turn.act != "reject_and_refine":
            continue
        nxt = next((t for t in d.turns if t.turn.index > turn.index), None)
        if nxt is None:
            continue
        events += 1
        recovered += hits(nxt) and not text_repeats(nxt, rejected)
    return recovered / events if events else None


def _t2r(metric: Metric, d: DialogueContext) -> float | None:
    if not d.turns:
        return None
    for position, ctx in enumerate(d.turns, start=1):
        if ctx.top1 is not None and ctx.top1 == ctx.gold.gold_poi:
            return float(position)
    return float(len(d.turns) + 1)


def _task_success(metric: Metric, d: DialogueContext) -> float | None:
    if not d.turns:
        return None
    return 1.0 if hits(d.turns[-1]) else 0.0


def _rejected_repeat(metric: Metric, d: DialogueContext) -> float | None:
    rejected: set[str] = set()
    post = 0
    count = 0
    for turn in d.dialogue.turns:
        if turn.role == "user":
            rejected.update(turn.rejected)
            continue
        ctx = d.turn_context(turn.index)
        if ctx is None or not rejected:
            continue
        post += 1
        count += (not ctx.scorable) or repeats(ctx, rejected)
    return count / post if post else None


REJECTION_RECOVERY = register(
    MetricFamily(
        name="rejection_recovery",
        defaults=(None,),
        axis="recovery",
        level="dialogue",
        aggregation="dialogue-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_rejection_recovery,
        version=VERSION,
        formula=(
            "Rejection recovery rate (v2): for each user turn with act reject_and_refine, take the next\n"
            "recommendation turn; recovered when its top-1 ∈ {gold} ∪ multi_ref (the refined constraints'\n"
            "satisfying set) and its text recommends no rejected POI by name.\n"
            "Per dialogue: RRR_d = recovered / events; dialogues without such a turn are not applicable;\n"
            "mean over dialogues. A missing prediction at that turn: not recovered (0)."
        ),
    ),
    aliases=("rrr", "recovery", "rejection_recovery_rate"),
)

T2R = register(
    MetricFamily(
        name="t2r",
        defaults=(None,),
        axis="recovery",
        level="dialogue",
        aggregation="dialogue-mean",
        higher_is_better=False,
        default=None,
        default_note="never correct: number of recommendation turns + 1; a missing prediction is "
        "an incorrect turn",
        value_range=(1.0, None),
        kernel=_t2r,
        formula=(
            "Turns-to-first-correct: T2R = the 1-based position, among the dialogue's recommendation turns,\n"
            "of the first whose top-1 == gold POI; n_rec + 1 when none is (n_rec = number of recommendation\n"
            "turns). Mean over dialogues; lower is better. A missing prediction is an incorrect turn."
        ),
    ),
    aliases=("turns_to_first_correct", "T2R"),
)

TASK_SUCCESS = register(
    MetricFamily(
        name="task_success",
        defaults=(None,),
        axis="recovery",
        level="dialogue",
        aggregation="dialogue-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_task_success,
        formula=(
            "Task success rate: TSR_d = 1[top-1 of the final recommendation turn ∈ {gold} ∪ "
            "multi_ref]; mean over\n"
            "dialogues. A missing final prediction: 0."
        ),
    ),
    aliases=("tsr", "success"),
)

REJECTED_REPEAT = register(
    MetricFamily(
        name="rejected_repeat",
        defaults=(None,),
        axis="recovery",
        level="dialogue",
        aggregation="dialogue-mean",
        higher_is_better=False,
        default=1.0,
        kernel=_rejected_repeat,
        version=VERSION,
        formula=(
            "Rejected-repeat rate (v2): among recommendation turns after the first user turn that rejects\n"
            "a POI (Turn.rejected non-empty): RR_d = repeats / post-rejection turns, a repeat being a turn\n"
            "whose top-1 a previous user turn rejected or whose text recommends such a POI by name.\n"
            "Dialogues without a rejection are not applicable; mean over dialogues; lower is better.\n"
            "A missing prediction at a post-rejection turn counts as a repeat (1, worst)."
        ),
    ),
    aliases=("repeat_rate", "rejected_repeat_rate"),
)
