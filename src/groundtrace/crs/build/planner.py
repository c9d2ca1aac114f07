"""Stage 3a — dialogue plans: acts, constraints, recommended POIs, gold labels and chosen evidence.

A plan fixes *what* happens in a dialogue; a realiser (``groundtrace.crs.build.realise``) decides the words.

Shape (user and system strictly alternate, the user starts)::

    U request [C0 or its first constraint]   (S clarify → U provide_preference [rest of C0])
    S recommend R1                           gold R1, active C0
    then one of four middles:
      early rejection : U reject_and_refine R1 (+c) → S recommend R2 → U ask_comparison → S compare [R3, R2]
      late rejection  : U ask_comparison → S compare [R2, R1] → U reject_and_refine R2 (+c) → S recommend R3
      more            : U ask_comparison → S compare [R2, R1] → U asks for more → S recommend R3
      extra           : U ask_comparison → S compare [R2, R1] → U provide_preference (+c) → S recommend R3
    (U ask_detail → S explain)               optional, about the final POI
    U accept → S close

So every dialogue has three unique recommendations R1, R2, R3 and one comparison. A refinement ``c``
*replaces* an active constraint of the same single-valued kind (cuisine, category, price, noise,
stars, distance, alcohol: "a lot of sushi lately — Mediterranean instead?") and is *added* otherwise.
The rejected POI satisfies the constraints active before the rejection and violates ``c``; every
recommended POI satisfies the constraints active at its turn
(:func:`~groundtrace.crs.kb.constraints.satisfies_all`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from groundtrace.crs.build.evidence import SUPPORT_MIN_STARS, EvidenceIndex
from groundtrace.crs.build.personas import Persona, bundled_personas, constraint_order, sample_persona
from groundtrace.crs.build.plan import DialoguePlan, Quote, TurnPlan
from groundtrace.crs.build.pools import build_closed_pool, build_open_pool, number_reviews, stratum
from groundtrace.crs.build.quality import QualityIndex, near_misses
from groundtrace.crs.build.realise import aspect_word
from groundtrace.crs.kb.constraints import satisfies
from groundtrace.crs.kb.geo import haversine_km
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import (
    POI_TYPES,
    Anchor,
    Constraint,
    TurnGold,
)

#: Kinds where a refinement replaces the active constraint of the same kind instead of adding one.
SINGLE_VALUED = frozenset(
    {"cuisine", "category", "price_max", "price_min", "noise_max", "min_stars", "max_distance_km", "alcohol"}
)
MIDDLES_REJECTION = ("early", "late")
MIDDLES_PLAIN = ("more", "extra")


@dataclass
class PlanConfig:
    """Knobs of the planner (defaults reproduce the paper's shape)."""

    pool_size: int = 8
    open_min: int = 50
    open_max: int = 100
    initial_constraint_weights: tuple[float, float, float] = (0.25, 0.45, 0.30)  # P(|C0| = 1, 2, 3)
    min_distractors: int = 4
    max_extra_satisfying: int = 2
    clarify_share: float = 0.5
    detail_share: float = 0.85
    quotes_per_recommendation: int = 2
    warning_share: float = (
        0.5  # P(a compare turn quotes a negative sentence about the older POI as a warning)
    )
    max_reviews_per_poi: int | None = 10
    #: P(a dialogue is a multi-type itinerary) when the KB has a city with full pools of 2+ types
    #: (groundtrace.crs.build.itinerary); drawn per dialogue from its own seeded stream
    itinerary_share: float = 0.2


class PlanningError(RuntimeError):
    """No feasible plan for this draw (caller retries with another seed)."""


class PlanContext:
    """Per-KB caches shared by every plan: POIs per city × type, satisfaction sets, evidence."""

    def __init__(
        self,
        kb: KnowledgeBase,
        config: PlanConfig | None = None,
        personas: tuple[Persona, ...] | list[Persona] | None = None,
    ) -> None:
        self.kb = kb
        self.config = config or PlanConfig()
        self.personas = tuple(personas or bundled_personas())
        self.evidence = EvidenceIndex(kb, max_reviews_per_poi=self.config.max_reviews_per_poi)
        self.quality = QualityIndex(kb, self.evidence)
        self._widen: dict[tuple[str, str], list[str]] = {}
        self._ids: dict[tuple[str, str], frozenset[str]] = {}
        self._sat: dict[tuple, frozenset[str]] = {}
        self.strata_of = {pid: stratum(poi) for pid, poi in kb.pois.items()}
        self.cities_for: dict[str, list[str]] = {}
        for poi_type in POI_TYPES:
            cities = [c for c in kb.cities() if len(kb.pois_in(c, poi_type)) >= self.config.pool_size]
            if cities and any(poi_type in p.poi_types for p in self.personas):
                self.cities_for[poi_type] = cities
        if not self.cities_for:
            raise PlanningError(f"KB {kb.name!r} has no city with {self.config.pool_size}+ POIs of one type")
        self.types = sorted(self.cities_for)

    def ids(self, city: str, poi_type: str) -> frozenset[str]:
        key = (city, poi_type)
        if key not in self._ids:
            self._ids[key] = frozenset(p.poi_id for p in self.kb.pois_in(city, poi_type))
        return self._ids[key]

    def sat(self, city: str, poi_type: str, c: Constraint, anchor: Anchor | None) -> frozenset[str]:
        """Ids of the city × type POIs satisfying ``c`` (cached; distance keyed by anchor)."""
        where = (anchor.lat, anchor.lon) if (c.kind == "max_distance_km" and anchor) else None
        key = (city, poi_type, c.kind, str(c.value), where)
        hit = self._sat.get(key)
        if hit is None:
            hit = frozenset(
                pid for pid in sorted(self.ids(city, poi_type)) if satisfies(self.kb.poi(pid), c, anchor)
            )
            self._sat[key] = hit
        return hit

    def quotable(self, ids: frozenset[str]) -> frozenset[str]:
        """The POIs of ``ids`` with at least one quotable review sentence (only they can be recommended)."""
        return frozenset(pid for pid in ids if self.evidence.sentences(pid))

    def sat_backed(self, city: str, poi_type: str, c: Constraint, anchor: Anchor | None) -> frozenset[str]:
        """:meth:`sat` restricted to POIs whose reviews back ``c`` with a non-negative sentence
        (``QualityIndex.backed``; constraints shown on the POI card need no backing). Cached."""
        where = (anchor.lat, anchor.lon) if (c.kind == "max_distance_km" and anchor) else None
        key = ("backed", city, poi_type, c.kind, str(c.value), where)
        hit = self._sat.get(key)
        if hit is None:
            hit = frozenset(p for p in self.sat(city, poi_type, c, anchor) if self.quality.backed(p, [c]))
            self._sat[key] = hit
        return hit

    def sat_all_backed(
        self, city: str, poi_type: str, cs: list[Constraint], anchor: Anchor | None
    ) -> frozenset[str]:
        out = self.ids(city, poi_type)
        for c in cs:
            out = out & self.sat_backed(city, poi_type, c, anchor)
        return out

    def sat_all(
        self, city: str, poi_type: str, cs: list[Constraint], anchor: Anchor | None
    ) -> frozenset[str]:
        out = self.ids(city, poi_type)
        for c in cs:
            out = out & self.sat(city, poi_type, c, anchor)
        return out

    def widening(self, city: str, poi_type: str) -> list[str]:
        """POIs an open pool may add when its city has fewer than ``open_min`` of the type: the same type
        in the other cities, nearest city centroid first (ties by name), then the other types of the same
        city (by type, then id). Cached."""
        key = (city, poi_type)
        if key not in self._widen:
            out: list[str] = []
            if len(self.ids(city, poi_type)) < self.config.open_min:
                here = _centroid(self.kb.pois_in(city, poi_type))
                others = [c for c in self.kb.cities() if c != city and self.kb.pois_in(c, poi_type)]
                others.sort(key=lambda c: (haversine_km(*here, *_centroid(self.kb.pois_in(c, poi_type))), c))
                for other in others:
                    out.extend(p.poi_id for p in self.kb.pois_in(other, poi_type))
                for other_type in POI_TYPES:
                    if other_type != poi_type:
                        out.extend(p.poi_id for p in self.kb.pois_in(city, other_type))
            self._widen[key] = out
        return self._widen[key]

    def pick_anchor(self, rng: random.Random, city: str, poi_type: str) -> Anchor:
        """A hotel (for restaurants/attractions) or an attraction (for hotels) of the city, else its
        centroid."""
        other = "attraction" if poi_type == "hotel" else "hotel"
        pois = self.kb.pois_in(city, other)
        if pois:
            p = rng.choice(pois)
            return Anchor(name=p.name, lat=p.lat, lon=p.lon)
        pois = self.kb.pois_in(city, poi_type)
        return Anchor(
            name=f"central {city}",
            lat=sum(p.lat for p in pois) / len(pois),
            lon=sum(p.lon for p in pois) / len(pois),
        )


def _centroid(pois: list) -> tuple[float, float]:
    return sum(p.lat for p in pois) / len(pois), sum(p.lon for p in pois) / len(pois)


def refine(active: list[Constraint], new: Constraint) -> tuple[list[Constraint], list[Constraint]]:
    """``(active after adding new, replaced)`` — same-kind single-valued constraints are replaced."""
    if new.kind in SINGLE_VALUED:
        replaced = [c for c in active if c.kind == new.kind]
        return [c for c in active if c.kind != new.kind] + [new], replaced
    return [*active, new], []


def _middle_turns(
    middle: str,
    recommended: tuple[str, str, str],
    c0: list[Constraint],
    final: list[Constraint],
    refinement: Constraint | None,
    replaced: list[Constraint],
    recommend: Callable[[str, list[Constraint], list[Constraint]], TurnPlan],
    compare: Callable[[str, str, list[Constraint]], TurnPlan],
) -> list[TurnPlan]:
    """The turns between the first recommendation and the closing: ``early`` rejects r1 at once (then r2,
    a comparison with r3); ``late`` compares r1/r2, then rejects r2 for r3; ``extra`` adds a preference
    before r3; plain asks for more. ``recommend``/``compare`` build the system turns (in this order, so the
    rng draws stay in the same sequence)."""
    r1, r2, r3 = recommended
    out: list[TurnPlan] = []
    if middle == "early":
        assert refinement is not None
        out.append(
            TurnPlan(
                "user",
                "reject_and_refine",
                constraints_added=[refinement],
                replaced=replaced,
                rejected=[r1],
                about=[r1],
            )
        )
        out.append(recommend(r2, final, [refinement]))
        out.append(TurnPlan("user", "ask_comparison", about=[r2]))
        out.append(compare(r3, r2, final))
    else:
        out.append(TurnPlan("user", "ask_comparison", about=[r1]))
        out.append(compare(r2, r1, c0))
        if middle == "late":
            assert refinement is not None
            out.append(
                TurnPlan(
                    "user",
                    "reject_and_refine",
                    constraints_added=[refinement],
                    replaced=replaced,
                    rejected=[r2],
                    about=[r2],
                )
            )
            out.append(recommend(r3, final, [refinement]))
        elif middle == "extra":
            assert refinement is not None
            out.append(TurnPlan("user", "provide_preference", constraints_added=[refinement], extra=True))
            out.append(recommend(r3, final, [refinement]))
        else:
            out.append(TurnPlan("user", "request", more=True))
            out.append(recommend(r3, final, []))
    return out


def _initial_constraints(
    ctx: PlanContext,
    order: list[Constraint],
    k: int,
    city: str,
    poi_type: str,
    anchor: Anchor,
) -> tuple[list[Constraint], frozenset[str]]:
    """The first (at most ``k``) constraints of ``order`` that each shrink the satisfying set while leaving
    >= 3 POIs (a single-valued kind at most once), and the set they leave. Satisfying sets are the
    evidence-backed ones (:meth:`PlanContext.sat_backed`)."""
    chosen: list[Constraint] = []
    current = ctx.ids(city, poi_type)
    for c in order:
        if len(chosen) == k:
            break
        if c.kind in SINGLE_VALUED and any(x.kind == c.kind for x in chosen):
            continue
        nxt = current & ctx.sat_backed(city, poi_type, c, anchor)
        if 3 <= len(nxt) < len(current):
            chosen.append(c)
            current = nxt
    return chosen, current


def _find_refinement(
    ctx: PlanContext,
    middle: str,
    c0: list[Constraint],
    rest: list[Constraint],
    s0: frozenset[str],
    city: str,
    poi_type: str,
    anchor: Anchor,
) -> tuple[Constraint | None, list[Constraint], list[Constraint]]:
    """``(refinement, replaced, final constraints)``: the first constraint of ``rest`` that suits ``middle``.

    ``early``/``late``: it must exclude some POI of ``s0`` and leave >= 2 (early) / >= 1 (late) satisfying
    POIs outside the excluded ones; ``extra``: an added (never replacing) constraint with >= 1 satisfying POI
    while ``s0`` has >= 3. Plain middles, or no suitable constraint: ``(None, [], c0)``.
    """
    if middle not in ("early", "late", "extra"):
        return None, [], list(c0)
    for c in rest:
        if middle == "extra" and (c.kind in SINGLE_VALUED and any(x.kind == c.kind for x in c0)):
            continue
        trial, rep = refine(c0, c) if middle != "extra" else ([*c0, c], [])
        s1 = ctx.sat_all_backed(city, poi_type, trial, anchor)
        violators = s0 - ctx.sat(city, poi_type, c, anchor)
        if middle == "extra":
            ok = len(s1) >= 1 and len(s0) >= 3
        else:
            ok = bool(violators) and len(s1 - violators) >= (2 if middle == "early" else 1)
        if ok:
            return c, rep, trial
    return None, [], list(c0)


def _pick_recommendations(
    ctx: PlanContext,
    rng: random.Random,
    middle: str,
    sets: tuple[frozenset[str], frozenset[str], frozenset[str] | None],
    active: tuple[list[Constraint], list[Constraint]],
) -> tuple[str, str, str]:
    """The three recommended POIs ``(r1, r2, r3)`` in the order the turns show them.

    ``sets`` = ``(s0, s_final, violators)``. ``early``: r1 violates the refinement (``violators`` = POIs
    of ``s0`` that do), r2 and r3 satisfy the final constraints; ``late``: r2 violates it, r1 from ``s0``,
    r3 final; ``extra``: r3 final, r1 and r2 from ``s0``; plain: all three from ``s0``. Each pick prefers
    POIs backed by evidence for the constraints active at its turn (``QualityIndex.preferred``;
    ``active`` = (C0, final)). The draw order is fixed (it decides the rng stream).
    """
    s0, s_final, violators = sets
    c0, final = active

    def pick(ids: Iterable[str], constraints: list[Constraint]) -> str:
        return _pick(rng, ctx.quality.preferred(ids, constraints))

    if middle == "early":
        assert violators is not None
        r1 = pick(violators, c0)
        r2 = pick(s_final - {r1}, final)
        r3 = pick(s_final - {r1, r2}, final)
    elif middle == "late":
        assert violators is not None
        r2 = pick(violators, c0)
        r1 = pick(s0 - {r2}, c0)
        r3 = pick(s_final - {r1, r2}, final)
    elif middle == "extra":
        r3 = pick(s_final, final)
        r1 = pick(s0 - {r3}, c0)
        r2 = pick(s0 - {r1, r3}, c0)
    else:
        r1 = pick(s0, c0)
        r2 = pick(s0 - {r1}, c0)
        r3 = pick(s0 - {r1, r2}, c0)
    return r1, r2, r3


def _same(a: Constraint, b: Constraint) -> bool:
    return a.kind == b.kind and str(a.value) == str(b.value)


def _pick(rng: random.Random, ids: Iterable[str]) -> str:
    ids = sorted(ids)
    if not ids:
        raise PlanningError("empty choice")
    return rng.choice(ids)


def _require_persona_constraint(persona: Persona, poi_type: str, used: list[Constraint]) -> None:
    """Raise :class:`PlanningError` unless one of ``used`` is a typical constraint of ``persona``."""
    own = {(c.kind, str(c.value)) for c in persona.constraints_for(poi_type)}
    if not any((c.kind, str(c.value)) in own for c in used):
        raise PlanningError(f"no typical constraint of {persona.id} is usable here")


class TurnMaker:
    """Builds the system turns of one dialogue (or of one itinerary leg): gold labels, quotes, warnings.

    ``quoted`` remembers every sentence quoted in the dialogue (fresh sentences are preferred); the rng
    draws happen in call order, so a plan is deterministic for its rng. :meth:`set_pools` switches to the
    closed and open pools of the next leg (``poi_type``/``anchor`` likewise, as attributes).
    """

    def __init__(
        self,
        ctx: PlanContext,
        rng: random.Random,
        tag_of: dict[str, str],
        *,
        city: str,
        poi_type: str,
        anchor: Anchor | None,
    ) -> None:
        self.ctx, self.rng, self.tag_of = ctx, rng, tag_of
        self.city, self.poi_type, self.anchor = city, poi_type, anchor
        self.quoted: set[tuple[str, int]] = set()
        self.candidates: list[str] = []
        self.open_pool: list[str] = []

    def set_pools(self, candidates: list[str], open_pool: list[str]) -> None:
        self.candidates, self.open_pool = candidates, open_pool

    def quotes(self, poi_id: str, focus: list[Constraint], n: int) -> list[Quote]:
        return choose_quotes(self.ctx.evidence, self.tag_of, poi_id, focus, n, self.quoted, self.rng)

    def warning(self, poi_id: str, focus: list[Constraint]) -> list[Quote]:
        """A negative sentence about ``poi_id`` quoted as a warning (with probability ``warning_share``)."""
        if self.rng.random() >= self.ctx.config.warning_share:
            return []
        pool = [s for s in self.ctx.evidence.warnings(poi_id, focus) if s.review_id in self.tag_of]
        if not pool:
            return []
        s = self.rng.choice(pool)
        self.quoted.add((s.review_id, s.start))
        return [Quote(self.tag_of[s.review_id], s, warning=True)]

    def gold(self, main: str, active: list[Constraint]) -> TurnGold:
        ok = self.ctx.sat_all(self.city, self.poi_type, active, self.anchor)
        return TurnGold(
            gold_poi=main,
            multi_ref=sorted(p for p in self.candidates if p in ok and p != main),
            open_pool=list(self.open_pool),
            active_constraints=list(active),
        )

    def recommend(self, main: str, active: list[Constraint], focus: list[Constraint]) -> TurnPlan:
        order_ = focus + [c for c in active if not any(_same(c, f) for f in focus)]
        return TurnPlan(
            "system",
            "recommend",
            recommended=[main],
            gold=self.gold(main, active),
            active=list(active),
            quotes={main: self.quotes(main, order_, self.ctx.config.quotes_per_recommendation)},
            poi_type=self.poi_type,
            anchor=self.anchor,
        )

    def compare(self, new: str, old: str, active: list[Constraint]) -> TurnPlan:
        n = self.ctx.config.quotes_per_recommendation
        return TurnPlan(
            "system",
            "compare",
            recommended=[new, old],
            gold=self.gold(new, active),
            active=list(active),
            quotes={
                new: self.quotes(new, list(active), n),
                old: self.warning(old, list(reversed(active))) or self.quotes(old, list(reversed(active)), 1),
            },
            poi_type=self.poi_type,
            anchor=self.anchor,
        )

    def detail(self, poi_id: str, final: list[Constraint]) -> list[TurnPlan]:
        """``U ask_detail`` about ``poi_id`` and the ``S explain`` answering it: one sentence on a backed
        final constraint (drawn), one more on another constraint when there is one."""
        backed = [c for c in final if self.ctx.evidence.support(poi_id, c)]
        focus = self.rng.choice(backed) if backed else None
        explain_quotes = self.quotes(poi_id, [focus] if focus else [], 1)
        others = [c for c in final if focus is None or not _same(c, focus)]
        explain_quotes += choose_quotes(
            self.ctx.evidence, self.tag_of, poi_id, others, 1, self.quoted, self.rng, fallback=False
        )
        aspect = aspect_word(focus) if focus else ""
        return [
            TurnPlan("user", "ask_detail", about=[poi_id], aspect=aspect, poi_type=self.poi_type),
            TurnPlan(
                "system",
                "explain",
                recommended=[poi_id],
                quotes={poi_id: explain_quotes},
                aspect=aspect,
                poi_type=self.poi_type,
            ),
        ]


def plan_dialogue(
    ctx: PlanContext, dialogue_id: str, rng: random.Random, *, with_rejection: bool, seed: int | None = None
) -> DialoguePlan:
    """Draw one feasible plan or raise :class:`PlanningError` (the caller retries with a new ``rng``)."""
    cfg = ctx.config
    poi_type = rng.choice(ctx.types)
    city = rng.choice(ctx.cities_for[poi_type])
    persona = sample_persona(rng, poi_type, ctx.personas)
    anchor = ctx.pick_anchor(rng, city, poi_type)
    order = [pc.to_constraint(anchor.name) for pc in constraint_order(persona, poi_type, rng)]
    all_ids = ctx.ids(city, poi_type)

    # -- initial constraints: informative (shrink the set) and leave room for 3 recommendations ----------
    k0 = rng.choices((1, 2, 3), weights=cfg.initial_constraint_weights)[0]
    c0, s0 = _initial_constraints(ctx, order, k0, city, poi_type, anchor)
    if not c0:
        raise PlanningError(f"no informative constraint for {persona.id} in {city}/{poi_type}")
    rest = [c for c in order if not any(_same(c, x) for x in c0)]

    # -- the middle: choose the refinement and the three recommended POIs --------------------------------
    middle = rng.choice(MIDDLES_REJECTION if with_rejection else MIDDLES_PLAIN)
    refinement, replaced, final = _find_refinement(ctx, middle, c0, rest, s0, city, poi_type, anchor)
    if middle in ("early", "late", "extra") and refinement is None:
        raise PlanningError(f"no feasible refinement for {persona.id} in {city}/{poi_type}")
    _require_persona_constraint(persona, poi_type, [*c0, *([refinement] if refinement else [])])
    s_final_all = ctx.sat_all(city, poi_type, final, anchor)
    distractor_count = len(all_ids - s_final_all)
    # recommendations must be citable and good answers (groundtrace.crs.build.quality)
    good = ctx.quality.good(city, poi_type)
    s_final = ctx.quotable(ctx.sat_all_backed(city, poi_type, final, anchor)) & good
    s0 = ctx.quotable(s0) & good
    violators = None  # POIs the refinement rules out: the rejected recommendation comes from them
    if middle in ("early", "late"):
        assert refinement is not None
        violators = s0 - ctx.sat(city, poi_type, refinement, anchor)
    r1, r2, r3 = _pick_recommendations(ctx, rng, middle, (s0, s_final, violators), (c0, final))
    near = near_misses(all_ids - s_final_all, [ctx.sat(city, poi_type, c, anchor) for c in final])
    if distractor_count < cfg.min_distractors:
        raise PlanningError(f"only {distractor_count} distractors in {city}/{poi_type}")

    # -- pools ---------------------------------------------------------------------------------------------
    candidates = build_closed_pool(
        ctx.kb,
        sorted(all_ids),
        [r1, r2, r3],
        s_final_all,
        rng,
        size=cfg.pool_size,
        max_extra_satisfying=cfg.max_extra_satisfying,
        strata_of=ctx.strata_of,
        near_misses=near,
    )
    open_pool = build_open_pool(
        sorted(all_ids),
        candidates,
        rng,
        min_size=cfg.open_min,
        max_size=cfg.open_max,
        widen=ctx.widening(city, poi_type),
    )
    refs, tag_of = number_reviews(ctx.evidence, candidates)
    uses_distance = any(c.kind == "max_distance_km" for c in (*c0, *([refinement] if refinement else [])))

    # -- turns ---------------------------------------------------------------------------------------------
    maker = TurnMaker(ctx, rng, tag_of, city=city, poi_type=poi_type, anchor=anchor)
    maker.set_pools(candidates, open_pool)
    recommend, compare = maker.recommend, maker.compare

    turns: list[TurnPlan] = []
    if len(c0) >= 2 and rng.random() < cfg.clarify_share:
        turns.append(TurnPlan("user", "request", constraints_added=c0[:1]))
        turns.append(TurnPlan("system", "clarify", ask_kinds=sorted({aspect_word(c) for c in c0[1:]})))
        turns.append(TurnPlan("user", "provide_preference", constraints_added=c0[1:]))
    else:
        turns.append(TurnPlan("user", "request", constraints_added=list(c0)))
    turns.append(recommend(r1, c0, list(c0)))
    turns += _middle_turns(middle, (r1, r2, r3), c0, final, refinement, replaced, recommend, compare)
    if rng.random() < cfg.detail_share:
        turns += maker.detail(r3, final)
    turns.append(TurnPlan("user", "accept", about=[r3]))
    turns.append(TurnPlan("system", "close", about=[r3]))

    return DialoguePlan(
        kb=ctx.kb,
        dialogue_id=dialogue_id,
        city=city,
        poi_type=poi_type,
        persona=persona,
        anchor=anchor if uses_distance else None,
        candidates=candidates,
        review_refs=refs,
        open_pool=open_pool,
        turns=turns,
        has_rejection=with_rejection,
        middle=middle,
        final_constraints=final,
        seed=seed,
    )


def choose_quotes(
    evidence: EvidenceIndex,
    tag_of: dict[str, str],
    poi_id: str,
    focus: list[Constraint],
    n: int,
    used: set[tuple[str, int]],
    rng: random.Random,
    *,
    fallback: bool = True,
) -> list[Quote]:
    """Up to ``n`` quotes of ``poi_id``: one supporting sentence per focus constraint, in order.

    Sentences not yet quoted in the dialogue are preferred. Supporting sentences are never negative
    (``EvidenceIndex.support``). With ``fallback``, when no focus constraint has support, one sentence is
    still quoted so a recommendation is never uncited: a praise sentence, else a positive sentence, else a
    neutral sentence of a review rated 4+ stars, else a neutral sentence of a review rated 3+ — never a
    negative one, never one of a 1-2-star review.
    """
    out: list[Quote] = []
    seen_here: set[tuple[str, int]] = set()
    for c in focus:
        if len(out) >= n:
            break
        support = [
            s
            for s in evidence.support(poi_id, c)
            if s.review_id in tag_of and (s.review_id, s.start) not in seen_here
        ]
        if not support:
            continue
        fresh = [s for s in support if (s.review_id, s.start) not in used] or support
        s = rng.choice(fresh)
        out.append(Quote(tag_of[s.review_id], s))
        seen_here.add((s.review_id, s.start))
        used.add((s.review_id, s.start))
    if not out and fallback:
        pool = (
            [s for s in evidence.praise(poi_id) if s.review_id in tag_of]
            or [s for s in evidence.positive(poi_id) if s.review_id in tag_of]
            or [
                s
                for s in evidence.sentences(poi_id)
                if s.review_id in tag_of and s.polarity == 0 and s.stars >= 4
            ]
            or [
                s
                for s in evidence.sentences(poi_id)
                if s.review_id in tag_of and s.polarity == 0 and s.stars >= SUPPORT_MIN_STARS
            ]
        )
        if pool:
            s = rng.choice(pool)
            out.append(Quote(tag_of[s.review_id], s))
            used.add((s.review_id, s.start))
    return out
