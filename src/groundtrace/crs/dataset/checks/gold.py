"""Pools and gold labels (``GT-G*``): the closed pool, each gold label, multi-references, the open pool.

With a KB, constraint satisfaction is :func:`groundtrace.crs.kb.constraints.satisfies` against the
dialogue's anchor; ids missing from the KB are left to the KB-reference rules (``GT-K001``).
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
    if len(d.candidates) != ctx.limits.pool_size:
        ctx.report(R.POOL_SIZE_RULE, None, n=len(d.candidates), expected=ctx.limits.pool_size)
    dupes = sorted({p for p in d.candidates if d.candidates.count(p) > 1})
    if dupes:
        ctx.report(R.POOL_DUPLICATES, None, ids=dupes)
    available = len(ctx.kb.pois_in(d.city, d.poi_type)) if ctx.kb is not None else None
    for turn in d.turns:
        if turn.gold is None:
            if turn.role == "system" and turn.act in RECOMMENDING_ACTS:
                ctx.report(R.GOLD_MISSING, turn.index, act=turn.act)
            continue
        _gold(ctx, turn, turn.gold)
        _open_pool(ctx, turn, turn.gold, available)


def _violated(ctx: CheckContext, pid: str, constraints: list[Constraint]) -> str:
    assert ctx.kb is not None
    poi = ctx.kb.poi(pid)
    bad = [c for c in constraints if not satisfies(poi, c, ctx.dialogue.anchor)]
    return "; ".join(f"{c.kind}={c.value!r} ({c.label!r})" for c in bad)


def _gold(ctx: CheckContext, turn: Turn, gold: TurnGold) -> None:
    d, kb = ctx.dialogue, ctx.kb
    candidates = set(d.candidates)
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
    if gold.gold_poi in kb.pois and not satisfies_all(kb.poi(gold.gold_poi), active, d.anchor):
        ctx.report(R.GOLD_VIOLATES, turn.index, poi=gold.gold_poi, why=_violated(ctx, gold.gold_poi, active))
    for pid in gold.multi_ref:
        if pid in candidates and pid in kb.pois and not satisfies_all(kb.poi(pid), active, d.anchor):
            ctx.report(R.MULTI_REF_VIOLATES, turn.index, poi=pid, why=_violated(ctx, pid, active))
    listed = {gold.gold_poi, *gold.multi_ref}
    missing = [
        pid
        for pid in dict.fromkeys(d.candidates)
        if pid not in listed and pid in kb.pois and satisfies_all(kb.poi(pid), active, d.anchor)
    ]
    if missing:
        ctx.report(R.MULTI_REF_MISSING, turn.index, ids=missing)


def _open_pool(ctx: CheckContext, turn: Turn, gold: TurnGold, available: int | None) -> None:
    """GT-G010..G013. Size: ``n`` distinct ids must lie in ``[min(open_min, KB POIs), open_max]``; a pool
    under ``open_min`` is only a warning when the whole KB has fewer POIs, or without a KB. A city × type
    with fewer than ``open_min`` POIs widens its pool with other cities' or types' POIs
    (``groundtrace.crs.build.pools.build_open_pool``); only then may the pool hold them."""
    d, lim = ctx.dialogue, ctx.limits
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
        where = f"{available} {d.poi_type} POIs in {d.city}"
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
        if not widened and poi is not None and (poi.city != d.city or poi.poi_type != d.poi_type):
            ctx.report(
                R.OPEN_POOL_POI,
                turn.index,
                poi=pid,
                poi_type=poi.poi_type,
                city=poi.city,
                want_type=d.poi_type,
                want_city=d.city,
            )
