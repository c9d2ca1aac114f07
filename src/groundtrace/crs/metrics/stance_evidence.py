"""Metrics that see whether evidence supports what it is cited for: ``evidence_support`` and
``constraint_evidence`` (grounding axis).

Both read the KB's stored sentence stance (``groundtrace.crs.kb.stance``): the *stance of a quote* is the
polarity (+1, 0, -1) of the review sentence where the quote starts (verbatim, case-insensitive, in the
review its tag resolves to); a quote the stance of which cannot be found supports nothing. Only quotes
the anti-gaming rules count (:mod:`.support`: verbatim, not an echo, not negated) can support. A quote
is *cited as a warning* when a warning cue ("warns", "downside", "complained", ...) sits between the
previous tag group and the quote (``groundtrace.crs.dataset.stance.is_warning``).

* ``evidence_support`` = |{quoted citations q : q counts, cites a review of a recommended POI, and
  (q is a warning and stance(q) = -1, or q is not a warning, stance(q) >= 0 and q addresses an active
  constraint of the turn)}| / |quoted citations|. *Addresses* = the constraint's aspect-lexicon pattern
  (``groundtrace.crs.build.evidence.aspect_pattern``) matches the quote. With no active constraint, any
  non-negative counted quote of a recommended POI supports. Not applicable (left out) when the response
  quotes nothing; missing prediction: 0.
* ``constraint_evidence`` = |{active constraints c : some counted, non-warning quote q of the top-1 POI
  with stance(q) >= 0 expresses c (``groundtrace.crs.build.evidence.supports``: lexicon match, no
  negation cue)}| / |active constraints|, over the constraints reviews can address: minimum stars and
  distance are stated by the POI card (``groundtrace.crs.build.quality.CARD_KINDS``) and left out. Not
  applicable when the turn has no such constraint; missing prediction: 0.
"""

from __future__ import annotations

from typing import Any

from groundtrace.crs.build.evidence import aspect_pattern, supports
from groundtrace.crs.build.quality import CARD_KINDS
from groundtrace.crs.dataset.stance import is_warning
from groundtrace.crs.kb.stance import SentenceStance
from groundtrace.crs.metrics.base import Metric, MetricFamily, register
from groundtrace.crs.metrics.context import TurnContext


def quote_polarity(ctx: TurnContext, quote: str, review_id: str) -> int | None:
    """Stored polarity of the sentence of ``review_id`` where ``quote`` starts (None when not found);
    cached for the run."""
    key = ("polarity", quote, review_id)
    cache = ctx.run.cache
    if key not in cache:
        cache[key] = _quote_polarity(ctx, quote, review_id)
    return cache[key]  # type: ignore[no-any-return]


def _quote_polarity(ctx: TurnContext, quote: str, review_id: str) -> int | None:
    review = ctx.run.kb.reviews.get(review_id)
    if review is None:
        return None
    needle = quote.strip()
    at = review.text.find(needle)
    if at < 0:
        at = review.text.lower().find(needle.lower())
    if at < 0:
        return None
    stance: SentenceStance | None = ctx.run.kb.sentence_stance(review_id, at)
    return None if stance is None else stance.polarity


def _cited(ctx: TurnContext) -> list[tuple[str, bool, str, int]]:
    """``(quote, cited as a warning, poi_id, polarity)`` for each counted quoted citation with a known
    stance (first resolvable tag with one); once per turn for both metrics."""
    return ctx.memoised("cited", _cited_compute)


def _cited_compute(ctx: TurnContext) -> list[tuple[str, bool, str, int]]:
    out = []
    for q in ctx.grounding.counted:
        for tag in q.tags:
            ref = ctx.resolve(tag)
            if ref is None:
                continue
            polarity = quote_polarity(ctx, q.quote, ref.review_id)
            if polarity is not None:
                out.append((q.quote, is_warning(ctx.response, q.start), ref.poi_id, polarity))
                break
    return out


def _matches(ctx: TurnContext, quote: str, kind: str, value: object) -> bool:
    """``aspect_pattern(kind, value)`` matches ``quote`` (cached for the run)."""
    key = ("aspect", quote, kind, str(value))
    cache = ctx.run.cache
    found = cache.get(key)
    if found is None:
        pattern = aspect_pattern(kind, value)
        found = cache[key] = pattern is not None and pattern.search(quote) is not None
    return found  # type: ignore[no-any-return]


def _expresses(ctx: TurnContext, quote: str, c: Any) -> bool:
    """``build.evidence.supports(quote, c)``, cached for the run (it reads ``c.kind``, ``str(c.value)``)."""
    key = ("supports", quote, c.kind, str(c.value))
    cache = ctx.run.cache
    found = cache.get(key)
    if found is None:
        found = cache[key] = supports(quote, c)
    return found  # type: ignore[no-any-return]


def _addresses(quote: str, ctx: TurnContext) -> bool:
    constraints = ctx.gold.active_constraints
    if not constraints:
        return True
    return any(_matches(ctx, quote, c.kind, c.value) for c in constraints)


def _evidence_support(metric: Metric, ctx: TurnContext) -> float | None:
    total = ctx.grounding.n_quoted
    if total == 0:
        return None
    recommended = set(ctx.recommended)
    good = 0
    for quote, warning, poi_id, polarity in _cited(ctx):
        if poi_id not in recommended:
            continue
        if warning:
            good += polarity < 0
        else:
            good += polarity >= 0 and _addresses(quote, ctx)
    return good / total


def _review_constraints(ctx: TurnContext) -> list:
    return [c for c in ctx.gold.active_constraints if c.kind not in CARD_KINDS]


def _constraint_evidence(metric: Metric, ctx: TurnContext) -> float | None:
    constraints = _review_constraints(ctx)
    if not constraints:
        return None
    top = ctx.top1
    quotes = [
        quote
        for quote, warning, poi_id, polarity in _cited(ctx)
        if poi_id == top and polarity >= 0 and not warning
    ]
    covered = sum(1 for c in constraints if any(_expresses(ctx, q, c) for q in quotes))
    return covered / len(constraints)


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
        formula=(
            "Evidence support: ES = |{quoted citations q : q counts (rules S1-S5), cites a review of a\n"
            "recommended POI, and (q is cited as a warning and stance(q) = -1, or q is not a warning,\n"
            "stance(q) >= 0 and q addresses an active constraint)}| / |quoted citations|.\n"
            "stance(q) = the KB's stored polarity of the review sentence where q starts; q addresses c when\n"
            "c's aspect-lexicon pattern matches q (any q does when no constraint is active). Not applicable\n"
            "when the response quotes nothing. Missing prediction: 0."
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
        formula=(
            "Constraint evidence: CE = |{active constraints c : some counted quote q of the top-1 POI, not\n"
            "cited as a warning, with stance(q) >= 0 expresses c (aspect-lexicon match, no negation cue)}|\n"
            "/ |active constraints|, leaving out min_stars and max_distance_km (stated by the POI card).\n"
            "Not applicable when the turn has no other active constraint.\n"
            "Missing prediction: 0."
        ),
    ),
    aliases=("ce",),
)
