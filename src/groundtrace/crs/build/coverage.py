"""What a build covers, for ``build_report.json``: types and cities, persona-constraint use, near misses,
open-pool sizes (and why one falls short), and the stance of the quoted evidence.

* ``types`` — dialogues by POI type (an itinerary counts under its first leg's type);
  ``leg_types`` — legs by POI type (a single-type dialogue is one leg): the type mix of what is asked;
  ``itinerary`` — itinerary dialogues, their leg sequences and the cities that can host one;
* ``persona_constraint_share`` — share of dialogues in which the user states at least one of the typical
  constraints of their persona archetype for the POI type of the turn (same kind and value);
* ``near_miss_share`` — share of dialogues whose closed pool holds a POI violating exactly one of the
  final constraints (``groundtrace.crs.build.quality``);
* ``open_pools`` — over recommendation turns: smallest size, turns widened beyond the city × type (with
  POIs of other cities, or of other types) and turns below ``open_min`` with the reason (the whole KB
  is smaller);
* ``quotes`` — quoted sentences by role (``supporting`` / ``warning``, ``dataset.stance.is_warning``) and
  stored polarity (from the quote spans); ``supporting_negative`` must be 0.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from groundtrace.crs.build.personas import Persona
from groundtrace.crs.dataset.stance import is_warning
from groundtrace.crs.kb.constraints import satisfies
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

_POLARITY = {1: "positive", 0: "neutral", -1: "negative"}


def _uses_persona_constraint(d: Dialogue, personas: dict[str, Persona]) -> bool:
    persona = personas.get(d.persona_id)
    if persona is None:
        return False
    for t in d.turns:
        own = {(c.kind, str(c.value)) for c in persona.constraints_for(d.poi_type_at(t.index))}
        if any((c.kind, str(c.value)) in own for c in t.constraints_added):
            return True
    return False


def _has_near_miss(d: Dialogue, kb: KnowledgeBase) -> bool:
    last = d.recommendation_turns()[-1]
    final = last.gold
    if final is None or not final.active_constraints:
        return False
    anchor = d.anchor_at(last.index)
    for pid in d.candidates_at(last.index):
        poi = kb.pois.get(pid)
        if poi is not None:
            misses = sum(not satisfies(poi, c, anchor) for c in final.active_constraints)
            if misses == 1:
                return True
    return False


def _open_pools(dialogues: list[Dialogue], kb: KnowledgeBase, open_min: int) -> dict[str, Any]:
    sizes: list[int] = []
    other_city = other_type = below = 0
    for d in dialogues:
        for t in d.recommendation_turns():
            assert t.gold is not None
            pool = [kb.pois[p] for p in t.gold.open_pool if p in kb.pois]
            sizes.append(len(t.gold.open_pool))
            poi_type = d.poi_type_at(t.index)  # once per turn, not once per pooled POI
            other_city += any(p.city != d.city for p in pool)
            other_type += any(p.poi_type != poi_type for p in pool)
            below += len(t.gold.open_pool) < open_min
    out: dict[str, Any] = {
        "turns": len(sizes),
        "min_size": min(sizes, default=0),
        "widened_with_other_cities": other_city,
        "widened_with_other_types": other_type,
        "below_min": below,
    }
    if below:
        out["below_min_reason"] = f"the KB has only {len(kb.pois)} POIs (fewer than {open_min})"
    return out


def _quotes(dialogues: Iterable[Dialogue], kb: KnowledgeBase) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for d in dialogues:
        for t in d.turns:
            for span in t.quote_spans:
                stance = kb.sentence_stance(span.review_id, span.review_start)
                polarity = "unknown" if stance is None else _POLARITY[stance.polarity]
                role = "warning" if is_warning(t.text, span.start) else "supporting"
                counts[f"{role}_{polarity}"] += 1
    counts.setdefault("supporting_negative", 0)
    return dict(sorted(counts.items()))


def coverage_stats(
    dialogues: list[Dialogue],
    kb: KnowledgeBase,
    personas: Iterable[Persona],
    open_min: int,
    itinerary_reason: str = "",
) -> dict[str, Any]:
    """The coverage block of the build report (see the module docstring)."""
    if not dialogues:
        return {}
    by_id = {p.id: p for p in personas}
    city_types: dict[str, Counter[str]] = defaultdict(Counter)
    for d in dialogues:
        city_types[d.city][d.poi_type] += 1
    n = len(dialogues)
    legs = Counter(leg.poi_type for d in dialogues for leg in d.legs)
    legs.update(d.poi_type for d in dialogues if not d.legs)
    itineraries = [d for d in dialogues if d.legs]
    sequences = Counter(" > ".join(leg.poi_type for leg in d.legs) for d in itineraries)
    return {
        "types": dict(sorted(Counter(d.poi_type for d in dialogues).items())),
        "leg_types": dict(sorted(legs.items())),
        "itinerary": {
            "dialogues": len(itineraries),
            "share": round(len(itineraries) / n, 4),
            "sequences": dict(sorted(sequences.items())),
            "cities": sorted({d.city for d in itineraries}),
            **({"why_none": itinerary_reason} if not itineraries and itinerary_reason else {}),
        },
        "city_types": {c: dict(sorted(t.items())) for c, t in sorted(city_types.items())},
        "persona_constraint_share": round(sum(_uses_persona_constraint(d, by_id) for d in dialogues) / n, 4),
        "near_miss_share": round(sum(_has_near_miss(d, kb) for d in dialogues) / n, 4),
        "open_pools": _open_pools(dialogues, kb, open_min),
        "quotes": _quotes(dialogues, kb),
    }
