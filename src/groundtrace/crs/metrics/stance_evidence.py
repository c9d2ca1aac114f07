"""Metrics that see whether evidence supports what it is cited for: ``evidence_support`` and
``constraint_evidence`` (grounding axis), version :data:`VERSION`.

Every quoted citation of the answer is judged by the one support judge,
:func:`groundtrace.crs.metrics.support_judge.judge_support` (one review sentence, negation parity with it,
no reversal cue around the quote — after the tag too —, stored stance, warning framing, and for a
constraint the builder's own ``build.evidence.supports`` on the whole sentence), after the anti-gaming
rules S1–S5 of :mod:`.support` (verbatim, not an echo, not a repeat).

* **Claimed POIs** of a turn: the top-1; in a ``compare`` turn also each other POI of the recommended set
  (top-3) that the answer names. A quote is **attached** to the POI named last before it — among the
  recommended set, the POIs the user rejected so far and the POIs of the cited reviews — else to the
  top-1: ``For Sakura: "..." [R3]`` attaches to Sakura, ``I'd recommend <a rejected POI>. "..." [R5]``
  to the rejected POI. A quote supports only a claimed POI it is attached to, and only when the review
  it quotes is that POI's.
* **Constraints** of the turn: the gold's active constraints with an aspect-lexicon pattern; the *review
  constraints* are those other than ``min_stars`` / ``max_distance_km`` (the POI card states those,
  ``build.quality.CARD_KINDS``).
* A quote is **good** when it counts (S1–S5), quotes a review of the POI it is attached to, that POI is
  claimed, and the judge finds it either *supports* one of the constraints, or is a *valid warning*
  (a negative sentence cited after a warning cue) about one of them; at a turn without a review
  constraint, also when it supports the recommendation in general (non-negative, not reframed). A
  warning never supports.
* ``P`` (precision) = good quotes / (quoted citations + bare tag groups + unresolved tags): every citation
  that supports nothing — a fabricated, repeated, reframed, off-topic or other-POI quote, a tag with no
  quote — lowers it.

``evidence_support`` = P × 1[some good, supporting (non-warning) quote is attached to the top-1], on
every recommendation turn; a turn that cites nothing scores 0 (no precision, no support). Why a product:
precision alone lets a system quote one safe sentence about another POI, or a warning, and never back
its recommendation; support alone lets it pad with unsupported citations. (A compare turn's other POIs
need no support — the answer may argue against them — but every quote about them must be good.)

``constraint_evidence`` = P × (review constraints that some supporting good quote attached to the top-1
supports / review constraints). Not applicable without a review constraint. Weighting by P makes a dump
of every sentence of the POI's reviews score its share of on-topic sentences, not 1.

Missing prediction: 0 for both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundtrace.core.evidence.normalize import fold_unicode
from groundtrace.crs.build.evidence import aspect_pattern
from groundtrace.crs.build.quality import CARD_KINDS
from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import TurnContext
from groundtrace.crs.metrics.support_judge import for_constraint, judge_quote
from groundtrace.crs.metrics.text_claims import name_positions
from groundtrace.crs.schema import Constraint

#: Recorded in ``scores.json`` (``metric_versions``): 2 = judged by ``support_judge`` (claim attachment,
#: frame, negation parity, one sentence), precision × coverage, no-quote turns score 0.
VERSION = 2


@dataclass(frozen=True, slots=True)
class JudgedQuote:
    """One counted quoted citation as ES/CE see it."""

    poi_id: str
    attached: str | None
    supported: frozenset[int]  # indexes into the turn's constraints the quote supports
    general: bool  # supports the recommendation in general (no constraint)
    warning_about: bool  # a valid warning about one of the constraints


def constraints_of(ctx: TurnContext) -> list[Constraint]:
    """The turn's active constraints that have an aspect-lexicon pattern (reviews can speak to them)."""
    return [c for c in ctx.gold.active_constraints if aspect_pattern(c.kind, c.value) is not None]


def claimed_pois(ctx: TurnContext) -> tuple[str, ...]:
    """The top-1, plus in a compare turn each other recommended POI the answer names."""
    return ctx.memoised("claimed", _claimed_compute)


def _name_re(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(fold_unicode(name).lower())}(?!\w)")


def _claimed_compute(ctx: TurnContext) -> tuple[str, ...]:
    top = ctx.top1
    if top is None or top not in ctx.run.kb.pois:
        return ()
    if ctx.turn.act != "compare":
        return (top,)
    text = fold_unicode(ctx.response).lower()
    pois = ctx.run.kb.pois
    others = [p for p in ctx.recommended[1:] if _name_re(pois[p].name).search(text)]
    return (top, *others)


def nameable_pois(ctx: TurnContext) -> tuple[str, ...]:
    """POIs a quote may be attached to by name: the recommended set (top-3), the POIs the user rejected
    earlier in the dialogue and the POIs of the answer's resolvable cited reviews (KB POIs only)."""
    pois = ctx.run.kb.pois
    out = list(ctx.recommended)
    for turn in ctx.dialogue.turns[: ctx.turn.index]:
        out += [p for p in turn.rejected if p in pois]
    for q in ctx.grounding.counted:
        for tag in q.tags:
            ref = ctx.resolve(tag)
            if ref is not None and ref.poi_id in pois:
                out.append(ref.poi_id)
    return tuple(dict.fromkeys(out))


def _attachments(ctx: TurnContext) -> list[tuple[int, str]]:
    """``(position, poi_id)`` of each name occurrence of a :func:`nameable_pois` POI in the answer, in
    text order (``text_claims.name_positions``)."""
    pois = ctx.run.kb.pois
    return name_positions(ctx.response, {p: pois[p].name for p in nameable_pois(ctx)})


def attached_poi(ctx: TurnContext, quote_start: int) -> str | None:
    """The POI named last before ``quote_start`` among :func:`nameable_pois` (the top-1 when none is):
    ``I'd recommend <rejected POI>. "q" [R5]`` attaches q to the rejected POI, which is not claimed."""
    claimed = claimed_pois(ctx)
    if not claimed:
        return None
    found = claimed[0]
    for at, poi_id in ctx.memoised("attachments", _attachments):
        if at >= quote_start:
            break
        found = poi_id
    return found


def judged_quotes(ctx: TurnContext) -> list[JudgedQuote]:
    """Every counted quoted citation, judged once per turn for both metrics."""
    return ctx.memoised("judged", _judged_compute)


def _polarity_at(ctx: TurnContext, review_id: str):
    def at(start: int) -> int | None:
        stance = ctx.run.kb.sentence_stance(review_id, start)
        return None if stance is None else stance.polarity

    return at


def _judged_compute(ctx: TurnContext) -> list[JudgedQuote]:
    constraints = constraints_of(ctx)
    out = []
    for q in ctx.grounding.counted:
        ref = next((r for r in map(ctx.resolve, q.tags) if r is not None), None)
        if ref is None:
            continue
        review = ctx.run.kb.reviews[ref.review_id]
        general = judge_quote(
            q.quote,
            review.text,
            ctx.response,
            quote_start=q.start,
            polarity_at=_polarity_at(ctx, ref.review_id),
        )
        supported: set[int] = set()
        warning_about = False
        if general.supported or general.warning:
            for i, c in enumerate(constraints):
                v = for_constraint(general, q.quote, c)
                if v.supported:
                    supported.add(i)
                warning_about = warning_about or v.warning
        out.append(
            JudgedQuote(
                ref.poi_id, attached_poi(ctx, q.start), frozenset(supported), general.supported, warning_about
            )
        )
    return out


def _good(ctx: TurnContext) -> tuple[list[JudgedQuote], list[JudgedQuote]]:
    """``(good quotes, good supporting quotes)`` of the turn (see the module docstring)."""
    claimed = set(claimed_pois(ctx))
    specific = bool(_review_constraints(ctx))
    good, supporting = [], []
    for j in judged_quotes(ctx):
        if j.poi_id != j.attached or j.poi_id not in claimed:
            continue
        supports = bool(j.supported) or (not specific and j.general)
        if supports:
            supporting.append(j)
            good.append(j)
        elif j.warning_about:
            good.append(j)
    return good, supporting


def precision(ctx: TurnContext) -> float:
    """P: good quotes / (quoted citations + bare tag groups + unresolved tags); 0 when there are none."""
    attempts = ctx.grounding.attempts
    return len(_good(ctx)[0]) / attempts if attempts else 0.0


def _evidence_support(metric: Metric, ctx: TurnContext) -> float:
    top = ctx.top1
    p = precision(ctx)
    if p == 0.0 or top is None:
        return 0.0
    return p if any(j.poi_id == top for j in _good(ctx)[1]) else 0.0


def _review_constraints(ctx: TurnContext) -> list[Constraint]:
    return [c for c in ctx.gold.active_constraints if c.kind not in CARD_KINDS]


def _constraint_evidence(metric: Metric, ctx: TurnContext) -> float | None:
    wanted = _review_constraints(ctx)
    if not wanted:
        return None
    top = ctx.top1
    p = precision(ctx)
    if p == 0.0 or top is None:
        return 0.0
    constraints = constraints_of(ctx)
    covered: set[int] = set()
    for j in _good(ctx)[1]:
        if j.poi_id == top:
            covered |= j.supported
    hit = {id(constraints[i]) for i in covered}
    return p * sum(1 for c in wanted if id(c) in hit) / len(wanted)


def _has_constraints(ctx: TurnContext) -> bool:
    return bool(_review_constraints(ctx))


EVIDENCE_SUPPORT = register(
    MetricFamily(
        name="evidence_support",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_evidence_support,
        version=VERSION,
        formula=(
            "Evidence support (v2): ES = P x 1[a good supporting quote is attached to the top-1].\n"
            "Claimed: the top-1, and in a compare turn each other top-3 POI the answer names; a quote is\n"
            "attached to the claimed POI named last before it (else the top-1). Good quote: counts (S1-S5),\n"
            "quotes a review of the POI it is attached to, and support_judge finds it supports an active\n"
            "constraint (or any non-negative one without a review constraint: not min_stars/distance)\n"
            "or is a valid warning about one.\n"
            "P = good quotes / (quoted citations + bare tag groups + unresolved tags). A turn citing\n"
            "nothing scores 0. Missing prediction: 0."
        ),
    ),
    aliases=("es", "stance_support"),
)

CONSTRAINT_EVIDENCE = register(
    MetricFamily(
        name="constraint_evidence",
        defaults=(None,),
        axis="grounding",
        level="turn",
        aggregation="turn-mean",
        higher_is_better=True,
        default=0.0,
        kernel=_constraint_evidence,
        applies=_has_constraints,
        version=VERSION,
        formula=(
            "Constraint evidence (v2): CE = P x |{active constraints c : a good quote attached to the top-1\n"
            "supports c (support_judge)}| / |active constraints|, leaving out min_stars and\n"
            "max_distance_km (stated by the POI card); P as for evidence_support, so a dump of every\n"
            "sentence scores its share of on-topic ones. Not applicable when the turn has no other\n"
            "active constraint. Missing prediction: 0."
        ),
    ),
    aliases=("ce",),
)
