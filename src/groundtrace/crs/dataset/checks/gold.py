"""Pools and gold labels (``GT-G*``): the closed pool, each gold label, multi-references, the open pool.

With a KB, constraint satisfaction is :func:`groundtrace.crs.kb.constraints.satisfies` against the
anchor of the turn (``Dialogue.anchor_at``); ids missing from the KB are left to the KB-reference rules
(``GT-K001``). An itinerary dialogue is checked leg by leg: each leg's closed pool, and each turn against
its leg's pool, POI type and anchor (``Dialogue.legs``).
"""

from __future__ import annotations

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext
from groundtrace.crs.dataset.checks.structure import RECOMMENDING_ACTS
from groundtrace.crs.kb.constraints import satisfies, satisfies_all
from groundtrace.crs.schema import Constraint, Turn, TurnGold


def check_pools_and_gold(ctx: CheckContext) -> None:
    """GT-G001..G013 over the dialogue and each turn."""
    d = ctx.dialogue
    pools = [(leg.first_turn, leg.candidates) for leg in d.legs] or [(None, d.candidates)]
    for first_turn, pool in pools:
        if len(pool) != ctx.limits.pool_size:
            ctx.report(R.POOL_SIZE_RULE, first_turn, n=len(pool), expected=ctx.limits.pool_size)
        dupes = sorted({p for p in pool if pool.count(p) > 1})
        if dupes:
            ctx.report(R.POOL_DUPLICATES, first_turn, ids=dupes)
    for turn in d.turns:
        if turn.gold is None:
            if turn.role == "system" and turn.act in RECOMMENDING_ACTS:
                ctx.report(R.GOLD_MISSING, turn.index, act=turn.act)
            continue
        poi_type = d.poi_type_at(turn.index)
        available = len(ctx.kb.pois_in(d.city, poi_type)) if ctx.kb is not None else None
        _gold(ctx, turn, turn.gold)
        _open_pool(ctx, turn, turn.gold, available)


def check_legs(ctx: CheckContext) -> None:
    """GT-G014 on an itinerary's ``legs`` (nothing to check without legs)."""
    d = ctx.dialogue
    if not d.legs:
        return
    first = d.legs[0]
    if first.first_turn != 0:
        ctx.report(R.ITINERARY_LEGS, None, detail=f"the first leg starts at turn {first.first_turn}, not 0")
    if (first.poi_type, first.candidates, first.anchor) != (d.poi_type, d.candidates, d.anchor):
        detail = "the first leg's poi_type/candidates/anchor differ from the dialogue's"
        ctx.report(R.ITINERARY_LEGS, None, detail=detail)
    for before, leg in zip(d.legs, d.legs[1:], strict=False):
        turn = d.turns[leg.first_turn] if leg.first_turn < len(d.turns) else None
        if leg.first_turn <= before.first_turn:
            ctx.report(
                R.ITINERARY_LEGS,
                None,
                detail=f"leg starts {before.first_turn}, {leg.first_turn} not increasing",
            )
        elif turn is None or turn.role != "user" or turn.act != "request":
            what = "no such turn" if turn is None else f"a {turn.role} {turn.act} turn"
            ctx.report(R.ITINERARY_LEGS, leg.first_turn, detail=f"a leg starts at {what}, not a user request")
        if leg.poi_type == before.poi_type:
            ctx.report(R.ITINERARY_LEGS, leg.first_turn, detail=f"two legs in a row ask for a {leg.poi_type}")


def _violated(ctx: CheckContext, turn: Turn, pid: str, constraints: list[Constraint]) -> str:
    assert ctx.kb is not None
    poi = ctx.kb.poi(pid)
    bad = [c for c in constraints if not satisfies(poi, c, ctx.dialogue.anchor_at(turn.index))]
    return "; ".join(f"{c.kind}={c.value!r} ({c.label!r})" for c in bad)


def _gold(ctx: CheckContext, turn: Turn, gold: TurnGold) -> None:
    d, kb = ctx.dialogue, ctx.kb
    pool = d.candidates_at(turn.index)
    anchor = d.anchor_at(turn.index)
    candidates = set(pool)
    if not turn.recommended or turn.recommended[0] != gold.gold_poi:
        ctx.report(R.GOLD_NOT_MAIN, turn.index, poi=gold.gold_poi, main=turn.recommended[:1])
    if gold.gold_poi not in candidates:
        ctx.report(R.GOLD_NOT_CANDIDATE, turn.index, poi=gold.gold_poi)
    outside = [p for p in gold.multi_ref if p not in candidates]
    if outside:
        ctx.report(R.MULTI_REF_OUTSIDE, turn.index, ids=outside)
    if kb is None:
        return
    active = gold.active_constraints
    if gold.gold_poi in kb.pois and not satisfies_all(kb.poi(gold.gold_poi), active, anchor):
        why = _violated(ctx, turn, gold.gold_poi, active)
        ctx.report(R.GOLD_VIOLATES, turn.index, poi=gold.gold_poi, why=why)
    for pid in gold.multi_ref:
        if pid in candidates and pid in kb.pois and not satisfies_all(kb.poi(pid), active, anchor):
            ctx.report(R.MULTI_REF_VIOLATES, turn.index, poi=pid, why=_violated(ctx, turn, pid, active))
    listed = {gold.gold_poi, *gold.multi_ref}
    missing = [
        pid
        for pid in dict.fromkeys(pool)
        if pid not in listed and pid in kb.pois and satisfies_all(kb.poi(pid), active, anchor)
    ]
    if missing:
        ctx.report(R.MULTI_REF_MISSING, turn.index, ids=missing)


def _open_pool(ctx: CheckContext, turn: Turn, gold: TurnGold, available: int | None) -> None:
    """GT-G010..G013. Size: ``n`` distinct ids must lie in ``[min(open_min, KB POIs), open_max]``; a pool
    under ``open_min`` is only a warning when the whole KB has fewer POIs, or without a KB. A city × type
    with fewer than ``open_min`` POIs widens its pool with other cities' or types' POIs
    (``groundtrace.crs.build.pools.build_open_pool``); only then may the pool hold them."""
    d, lim = ctx.dialogue, ctx.limits
    want_type = d.poi_type_at(turn.index)
    pool = gold.open_pool
    if gold.gold_poi not in pool:
        ctx.report(R.OPEN_POOL_GOLD, turn.index, poi=gold.gold_poi)
    n = len(set(pool))
    if n != len(pool):
        ctx.report(R.OPEN_POOL_DUPLICATES, turn.index)
    if n > lim.open_max:
        ctx.report(R.OPEN_POOL_SIZE, turn.index, n=n, why=f"> {lim.open_max}")
    elif n < lim.open_min and available is None:
        why = f"< {lim.open_min}; no KB to tell whether the city is small"
        ctx.report(R.OPEN_POOL_SIZE, turn.index, soft=True, n=n, why=why)
    elif n < lim.open_min:
        total = len(ctx.kb.pois) if ctx.kb is not None else available or 0
        where = f"{available} {want_type} POIs in {d.city}"
        if n < min(lim.open_min, total):
            why = f"< {min(lim.open_min, total)}, although the KB has {total} POIs ({where}) to widen it"
            ctx.report(R.OPEN_POOL_SIZE, turn.index, n=n, why=why)
        else:
            why = f"< {lim.open_min}: the KB has only {total} POIs in all ({where})"
            ctx.report(R.OPEN_POOL_SIZE, turn.index, soft=True, n=n, why=why)
    if ctx.kb is None:
        return
    widened = (available or 0) < lim.open_min
    for pid in pool:
        poi = ctx.kb.pois.get(pid)
        if not widened and poi is not None and (poi.city != d.city or poi.poi_type != want_type):
            ctx.report(
                R.OPEN_POOL_POI,
                turn.index,
                poi=pid,
                poi_type=poi.poi_type,
                city=poi.city,
                want_type=want_type,
                want_city=d.city,
            )
