"""Stage 3a for itinerary dialogues: one traveller plans a day across POI types in one city, leg by leg.

A city can host an itinerary when it has at least ``pool_size`` POIs of two or more types
(:func:`itinerary_types`). The legs run hotel first (the traveller settles where to stay), then the
other types in a seeded order — e.g. hotel → restaurant → attraction ("dinner near the hotel, then
something to see"). Shape::

    leg 1   U request [C1]            → S recommend A1 → U ask_comparison → S compare [A2, A1]
    leg 2   U request [near A2 + C2]  → S recommend B1
            (a dialogue with a rejection: U reject_and_refine B1 (+c) → S recommend B2)
    leg 3   U request [near B + C3]   → S recommend C1
            U accept → S close

(10 turns, 12 with the rejection: no detail question — a day plan is long enough, and it keeps the
build's mean near the paper's 10.5 turns.)

Each leg has its own closed pool of ``pool_size`` candidates of its type (built like a single-type
dialogue's: the recommended POIs, extra satisfiers, near misses, stratified violators), its own open pool
(50–100 POIs of its type, widened like any pool when the city is small) and gold labels per
recommendation turn; its constraints are a distance to the previous leg's pick (``max_distance_km``, the
pick is the leg's anchor; radius drawn from :data:`LEG_RADII_KM`, the first that leaves >= 3 good,
quotable POIs) plus 1–2 of the persona's typical constraints for that type (the first that shrink the
set, evidence-backed, as for a single-type dialogue). The persona is drawn among archetypes that ask
about every leg's type and must use one of its typical constraints in some leg. ``Dialogue.legs`` records
each leg's first turn, type, candidates and anchor (``groundtrace.crs.schema.Leg``); the review tags
``R1..Rn`` number the pools' reviews leg by leg.
"""

from __future__ import annotations

import random
from weakref import WeakKeyDictionary

from groundtrace.crs.build.personas import Persona, constraint_order
from groundtrace.crs.build.planner import (
    SINGLE_VALUED,
    DialoguePlan,
    PlanContext,
    PlanningError,
    TurnMaker,
    TurnPlan,
    _find_refinement,
    _pick,
    _same,
)
from groundtrace.crs.build.pools import build_closed_pool, build_open_pool, number_reviews
from groundtrace.crs.build.quality import near_misses
from groundtrace.crs.schema import POI_TYPES, Anchor, Constraint, Leg

#: Radii (km) a leg's distance constraint may take; tried in a seeded order.
LEG_RADII_KM: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0)
#: Legs per itinerary, at most (one per POI type).
MAX_LEGS = 3


def itinerary_types(ctx: PlanContext, city: str) -> list[str]:
    """The POI types of ``city`` with a full closed pool, hotel first (the others in POI_TYPES order)."""
    types = [t for t in POI_TYPES if city in ctx.cities_for.get(t, [])]
    return sorted(types, key=lambda t: (t != "hotel", POI_TYPES.index(t)))


_CITIES: WeakKeyDictionary[PlanContext, list[str]] = WeakKeyDictionary()


def itinerary_cities(ctx: PlanContext) -> list[str]:
    """Cities where an itinerary of two or more legs fits (sorted; cached per context)."""
    cities = _CITIES.get(ctx)
    if cities is None:
        cities = _CITIES[ctx] = sorted(c for c in ctx.kb.cities() if len(itinerary_types(ctx, c)) >= 2)
    return cities


def _leg_types(ctx: PlanContext, city: str, rng: random.Random) -> list[str]:
    types = itinerary_types(ctx, city)
    first, rest = types[0], types[1:]
    rng.shuffle(rest)
    return [first, *rest][:MAX_LEGS]


def _persona(ctx: PlanContext, rng: random.Random, types: list[str]) -> Persona:
    pool = [p for p in ctx.personas if set(types) <= set(p.poi_types)]
    if not pool:
        raise PlanningError(f"no persona asks about all of {types}")
    return rng.choice(pool)


def _distance(
    ctx: PlanContext, rng: random.Random, city: str, poi_type: str, prev: Anchor, usable: frozenset[str]
) -> Constraint:
    """The distance constraint of a leg: the first radius (seeded order) leaving >= 3 ``usable`` POIs."""
    radii = list(LEG_RADII_KM)
    rng.shuffle(radii)
    for radius in radii:
        c = Constraint(kind="max_distance_km", value=radius, label=f"within {radius:g} km of {prev.name}")
        if len(usable & ctx.sat(city, poi_type, c, prev)) >= 3:
            return c
    raise PlanningError(f"too few {poi_type} POIs near {prev.name} in {city}")


def _leg_constraints(
    ctx: PlanContext,
    rng: random.Random,
    persona: Persona,
    city: str,
    poi_type: str,
    anchor: Anchor,
    first: Constraint | None,
) -> tuple[list[Constraint], list[Constraint], frozenset[str]]:
    """``(constraints, the rest of the persona's order, the backed satisfying set)`` of one leg: ``first``
    (the distance, when given), then up to 1–2 persona constraints that each shrink the set and leave
    >= 3 POIs."""
    order = [pc.to_constraint(anchor.name) for pc in constraint_order(persona, poi_type, rng)]
    order = [c for c in order if c.kind != "max_distance_km"]  # a leg's distance is to the previous pick
    chosen = [first] if first is not None else []
    current = ctx.sat_all_backed(city, poi_type, chosen, anchor)
    k = rng.choice((1, 2))
    for c in order:
        if len(chosen) - (first is not None) >= k:
            break
        if c.kind in SINGLE_VALUED and any(x.kind == c.kind for x in chosen):
            continue
        nxt = current & ctx.sat_backed(city, poi_type, c, anchor)
        if 3 <= len(nxt) < len(current):
            chosen.append(c)
            current = nxt
    if len(chosen) == (first is not None):
        raise PlanningError(f"no informative constraint for {persona.id} in {city}/{poi_type}")
    rest = [c for c in order if not any(_same(c, x) for x in chosen)]
    return chosen, rest, current


class _Leg:
    """One planned leg: type, anchor, constraints, picks, pools and its turns."""

    def __init__(self, poi_type: str, anchor: Anchor | None) -> None:
        self.poi_type, self.anchor = poi_type, anchor
        self.constraints: list[Constraint] = []
        self.final: list[Constraint] = []
        self.picks: list[str] = []
        self.rejected: str | None = None
        self.refinement: Constraint | None = None
        self.replaced: list[Constraint] = []
        self.candidates: list[str] = []
        self.open_pool: list[str] = []


def _plan_leg(
    ctx: PlanContext,
    rng: random.Random,
    persona: Persona,
    city: str,
    leg: _Leg,
    *,
    n_picks: int,
    rejection: bool,
) -> None:
    """Choose the leg's constraints and picks (``n_picks`` distinct POIs; with ``rejection`` the first
    violates a refinement and the second satisfies it) and build its pools."""
    poi_type = leg.poi_type
    good = ctx.quality.good(city, poi_type)
    anchor = leg.anchor or ctx.pick_anchor(rng, city, poi_type)
    first = None
    if leg.anchor is not None:
        usable = ctx.quotable(ctx.ids(city, poi_type)) & good
        first = _distance(ctx, rng, city, poi_type, leg.anchor, usable)
    c0, rest, s0 = _leg_constraints(ctx, rng, persona, city, poi_type, anchor, first)
    leg.constraints = leg.final = c0
    s0 = ctx.quotable(s0) & good
    if rejection:
        refinement, replaced, final = _find_refinement(ctx, "early", c0, rest, s0, city, poi_type, anchor)
        if refinement is None:
            raise PlanningError(f"no feasible refinement for {persona.id} in {city}/{poi_type}")
        violators = s0 - ctx.sat(city, poi_type, refinement, anchor)
        s_final = ctx.quotable(ctx.sat_all_backed(city, poi_type, final, anchor)) & good
        r1 = _pick(rng, ctx.quality.preferred(violators, c0))
        r2 = _pick(rng, ctx.quality.preferred(s_final - {r1}, final))
        leg.picks, leg.rejected = [r1, r2], r1
        leg.refinement, leg.replaced, leg.final = refinement, replaced, final
    else:
        picks: list[str] = []
        for _ in range(n_picks):
            picks.append(_pick(rng, ctx.quality.preferred(s0 - set(picks), c0)))
        leg.picks = picks
    all_ids = ctx.ids(city, poi_type)
    s_final_all = ctx.sat_all(city, poi_type, leg.final, leg.anchor)
    if len(all_ids - s_final_all) < ctx.config.min_distractors:
        raise PlanningError(f"only {len(all_ids - s_final_all)} distractors in {city}/{poi_type}")
    near = near_misses(all_ids - s_final_all, [ctx.sat(city, poi_type, c, leg.anchor) for c in leg.final])
    cfg = ctx.config
    leg.candidates = build_closed_pool(
        ctx.kb,
        sorted(all_ids),
        leg.picks,
        s_final_all,
        rng,
        size=cfg.pool_size,
        max_extra_satisfying=cfg.max_extra_satisfying,
        strata_of=ctx.strata_of,
        near_misses=near,
    )
    leg.open_pool = build_open_pool(
        sorted(all_ids),
        leg.candidates,
        rng,
        min_size=cfg.open_min,
        max_size=cfg.open_max,
        widen=ctx.widening(city, poi_type),
    )


def _as_anchor(ctx: PlanContext, poi_id: str) -> Anchor:
    poi = ctx.kb.poi(poi_id)
    return Anchor(name=poi.name, lat=poi.lat, lon=poi.lon)


def plan_itinerary(
    ctx: PlanContext, dialogue_id: str, rng: random.Random, *, with_rejection: bool, seed: int | None = None
) -> DialoguePlan:
    """Draw one feasible itinerary plan (module docstring) or raise :class:`PlanningError`."""
    cities = itinerary_cities(ctx)
    if not cities:
        raise PlanningError(f"KB {ctx.kb.name!r} has no city with full pools of two POI types")
    city = rng.choice(cities)
    types = _leg_types(ctx, city, rng)
    persona = _persona(ctx, rng, types)
    legs: list[_Leg] = []
    for i, poi_type in enumerate(types):
        anchor = _as_anchor(ctx, legs[-1].picks[-1]) if legs else None
        leg = _Leg(poi_type, anchor)
        _plan_leg(
            ctx, rng, persona, city, leg, n_picks=2 if i == 0 else 1, rejection=with_rejection and i == 1
        )
        legs.append(leg)
    own = {(c.kind, str(c.value)) for t in types for c in persona.constraints_for(t)}
    used = [c for leg in legs for c in (*leg.constraints, *([leg.refinement] if leg.refinement else []))]
    if not any((c.kind, str(c.value)) in own for c in used):
        raise PlanningError(f"no typical constraint of {persona.id} is usable here")
    refs, tag_of = number_reviews(ctx.evidence, [p for leg in legs for p in leg.candidates])
    maker = TurnMaker(ctx, rng, tag_of, city=city, poi_type=types[0], anchor=None)
    turns, leg_records = _turns(maker, legs)
    first = legs[0]
    return DialoguePlan(
        kb=ctx.kb,
        dialogue_id=dialogue_id,
        city=city,
        poi_type=first.poi_type,
        persona=persona,
        anchor=None,
        candidates=list(first.candidates),
        review_refs=refs,
        open_pool=list(first.open_pool),
        turns=turns,
        has_rejection=with_rejection,
        middle="itinerary",
        final_constraints=list(legs[-1].final),
        seed=seed,
        legs=leg_records,
    )


def _turns(maker: TurnMaker, legs: list[_Leg]) -> tuple[list[TurnPlan], list[Leg]]:
    """The turns of every leg (module docstring) and the :class:`Leg` records."""
    turns: list[TurnPlan] = []
    records: list[Leg] = []
    picks: list[str] = []
    for i, leg in enumerate(legs):
        maker.poi_type, maker.anchor = leg.poi_type, leg.anchor
        maker.set_pools(leg.candidates, leg.open_pool)
        records.append(
            Leg(
                poi_type=leg.poi_type,
                first_turn=len(turns),
                candidates=list(leg.candidates),
                anchor=leg.anchor,
            )
        )  # type: ignore[arg-type]
        turns.append(
            TurnPlan(
                "user",
                "request",
                constraints_added=list(leg.constraints),
                poi_type=leg.poi_type,
                after=list(picks),
            )
        )
        first = leg.picks[0]
        turns.append(maker.recommend(first, leg.constraints, list(leg.constraints)))
        if i == 0:
            second = leg.picks[1]
            turns.append(TurnPlan("user", "ask_comparison", about=[first], poi_type=leg.poi_type))
            turns.append(maker.compare(second, first, leg.constraints))
        elif leg.rejected is not None:
            assert leg.refinement is not None
            turns.append(
                TurnPlan(
                    "user",
                    "reject_and_refine",
                    constraints_added=[leg.refinement],
                    replaced=list(leg.replaced),
                    rejected=[leg.rejected],
                    about=[leg.rejected],
                    poi_type=leg.poi_type,
                )
            )
            turns.append(maker.recommend(leg.picks[-1], leg.final, [leg.refinement]))
        picks.append(leg.picks[-1])
    last = picks[-1]
    turns.append(TurnPlan("user", "accept", about=[last], after=picks[:-1], poi_type=legs[-1].poi_type))
    turns.append(TurnPlan("system", "close", about=[last], poi_type=legs[-1].poi_type))
    return turns, records
