"""Turn structure and dialogue-level rules (``GT-S*``, ``GT-D001``–``D003``, ``GT-R*``): numbering,
alternation, acts, role fields, coverage of recommendations and comparisons, and rejections."""

from __future__ import annotations

from typing import get_args

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext
from groundtrace.crs.kb.constraints import satisfies
from groundtrace.crs.schema import SystemAct, Turn, UserAct

USER_ACTS = frozenset(get_args(UserAct))
SYSTEM_ACTS = frozenset(get_args(SystemAct))
#: system acts that put POIs forward and carry a gold label
RECOMMENDING_ACTS = frozenset({"recommend", "compare"})


def check_turns(ctx: CheckContext) -> None:
    """GT-S001..S004 on every turn; an empty dialogue fails GT-S002."""
    if not ctx.dialogue.turns:
        ctx.report(R.ALTERNATION, None, detail="dialogue has no turns")
    for pos, turn in enumerate(ctx.dialogue.turns):
        if turn.index != pos:
            ctx.report(R.TURN_INDEX, turn.index, pos=pos, index=turn.index)
        expected = "user" if pos % 2 == 0 else "system"
        if turn.role != expected:
            ctx.report(
                R.ALTERNATION,
                turn.index,
                detail=f"expected a {expected} turn at position {pos} "
                f"(strict alternation starting with the user), got {turn.role}",
            )
        acts = USER_ACTS if turn.role == "user" else SYSTEM_ACTS
        if turn.act not in acts:
            ctx.report(R.ACT, turn.index, role=turn.role, act=turn.act, allowed=sorted(acts))
        _role_fields(ctx, turn)


def check_labels(ctx: CheckContext) -> None:
    """GT-S005: a user turn's added constraints are said in its text (``label`` is a substring)."""
    for turn in ctx.dialogue.turns:
        if turn.role != "user":
            continue
        for c in turn.constraints_added:
            if c.label not in turn.text:
                ctx.report(R.LABEL_IN_TEXT, turn.index, kind=c.kind, value=c.value, label=c.label)


def _role_fields(ctx: CheckContext, turn: Turn) -> None:
    if turn.role == "user":
        fields = ("recommended", "cited_tags", "quote_spans", "gold")
    else:
        fields = ("constraints_added", "rejected")
    present = [f for f in fields if getattr(turn, f)]
    if present:
        ctx.report(R.ROLE_FIELDS, turn.index, role=turn.role, fields="/".join(present))


def check_coverage(ctx: CheckContext) -> None:
    """GT-D001 (distinct POIs over recommend/compare turns), GT-D002 (a compare turn)."""
    system = [t for t in ctx.dialogue.turns if t.role == "system"]
    unique = {pid for t in system if t.act in RECOMMENDING_ACTS for pid in t.recommended}
    if len(unique) < R.MIN_UNIQUE_RECOMMENDATIONS:
        ctx.report(R.RECOMMENDATIONS, None, n=len(unique), need=R.MIN_UNIQUE_RECOMMENDATIONS)
    if not any(t.act == "compare" for t in system):
        ctx.report(R.COMPARISON, None)


def check_rejections(ctx: CheckContext) -> None:
    """GT-D003 and GT-R001..R004.

    GT-R003 needs the KB and a non-empty refinement (an empty one is GT-R001). GT-R004 looks at the first
    recommendation turn with gold after each rejection: its gold must not be any POI rejected so far.
    """
    d = ctx.dialogue
    rejections = [t for t in d.turns if t.role == "user" and t.act == "reject_and_refine"]
    if d.has_rejection != bool(rejections):
        ctx.report(R.HAS_REJECTION, None, flag=d.has_rejection, n=len(rejections))
    for t in rejections:
        if not t.constraints_added:
            ctx.report(R.REFINE, t.index)
        if not t.rejected:
            ctx.report(R.REJECT_NOTHING, t.index)
        if ctx.kb is not None and t.constraints_added:
            for pid in t.rejected:
                poi = ctx.kb.pois.get(pid)
                anchor = d.anchor_at(t.index)
                if poi is not None and all(satisfies(poi, c, anchor) for c in t.constraints_added):
                    ctx.report(R.REJECTED_SATISFIES, t.index, poi=pid)
    rejected: set[str] = set()
    pending = False
    for t in d.turns:
        if t.role == "user" and t.act == "reject_and_refine":
            rejected.update(t.rejected)
            pending = True
        elif pending and t.role == "system" and t.act in RECOMMENDING_ACTS and t.gold is not None:
            if t.gold.gold_poi in rejected:
                ctx.report(R.REJECTED_RECOMMENDED, t.index, poi=t.gold.gold_poi)
            pending = False
