"""Stage 2 — candidate pools: the closed pool of 8, the open-set pool of 50–100, and ``[Rn]`` numbering.

Closed pool (``build_closed_pool``): the required POIs (the dialogue's recommendations, the final gold
among them), then up to ``max_extra_satisfying`` other POIs that satisfy the final constraints (they
become multi-reference answers), then up to 2 *near misses* (POIs violating exactly one final constraint,
``groundtrace.crs.build.quality.near_misses``; seeded draw), then distractors that violate at least one
final constraint, drawn *stratified*: violators are grouped by (star bin, main category) with star bins
``<3``, ``3–3.5``, ``4–4.5``, ``5``; strata are visited round-robin in a seeded order, one POI per visit, so
the pool spreads over ratings and categories instead of clustering. The pool is shuffled so position
carries no signal. Deterministic for a given ``rng`` state.

Open pool (``build_open_pool``): all closed candidates plus a seeded sample of other same-city
same-type POIs, ``size ~ U{min_size..max_size}`` capped by what the city has, shuffled. When the city has
fewer than ``min_size`` POIs of the type, the pool is *widened* up to ``min_size`` with the ``widen`` ids
in their order (the planner passes the same type in the nearest other cities, then other types of the
city); it falls short of ``min_size`` only when the whole KB is smaller (the build report counts it).

Review numbering (``number_reviews``): the closed pool's reviews are tagged ``R1..Rn`` in pool order,
each POI's reviews sorted by id (at most the evidence index's per-POI cap).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import POI, ReviewRef

if TYPE_CHECKING:
    from groundtrace.crs.build.evidence import EvidenceIndex

_GENERIC = {"Restaurants", "Hotels & Travel", "Arts & Entertainment", "Active Life", "Food", "Nightlife"}


def star_bin(stars: float) -> int:
    """0: < 3, 1: 3–3.5, 2: 4–4.5, 3: 5."""
    if stars < 3:
        return 0
    if stars < 4:
        return 1
    if stars < 5:
        return 2
    return 3


def main_category(poi: POI) -> str:
    """The first non-generic category label (``""`` when none)."""
    return next((c for c in poi.categories if c not in _GENERIC), "")


def stratum(poi: POI) -> tuple[int, str]:
    """The (star bin, main category) stratum of a POI."""
    return star_bin(poi.stars), main_category(poi)


def stratified_sample(
    kb: KnowledgeBase,
    ids: Iterable[str],
    k: int,
    rng: random.Random,
    strata_of: dict[str, tuple[int, str]] | None = None,
) -> list[str]:
    """``k`` ids drawn round-robin over (star bin, main category) strata in a seeded order.

    ``strata_of`` may hold precomputed :func:`stratum` values by id (a speed-up; same result).
    """
    strata: dict[tuple[int, str], list[str]] = defaultdict(list)
    for pid in sorted(ids):
        key = strata_of[pid] if strata_of is not None and pid in strata_of else stratum(kb.poi(pid))
        strata[key].append(pid)
    keys = sorted(strata)
    rng.shuffle(keys)
    for key in keys:
        rng.shuffle(strata[key])
    out: list[str] = []
    while len(out) < k and keys:
        for key in list(keys):
            if len(out) >= k:
                break
            bucket = strata[key]
            out.append(bucket.pop())
            if not bucket:
                keys.remove(key)
    return out


def build_closed_pool(
    kb: KnowledgeBase,
    all_ids: Sequence[str],
    required: Sequence[str],
    satisfying: Iterable[str],
    rng: random.Random,
    *,
    size: int = 8,
    max_extra_satisfying: int = 2,
    strata_of: dict[str, tuple[int, str]] | None = None,
    near_misses: Sequence[str] = (),
    n_near_misses: int = 2,
) -> list[str]:
    """The shuffled closed pool: ``required`` + a few extra satisfiers + near misses + stratified
    violators."""
    pool = list(dict.fromkeys(required))
    if len(pool) > size:
        raise ValueError(f"{len(pool)} required POIs exceed pool size {size}")
    sat = set(satisfying)
    extra_sat = sorted(sat - set(pool))
    n_extra = min(len(extra_sat), rng.randint(0, max_extra_satisfying), size - len(pool))
    pool.extend(rng.sample(extra_sat, n_extra))
    near = [pid for pid in near_misses if pid not in sat and pid not in pool]
    if near:
        pool.extend(rng.sample(near, min(len(near), n_near_misses, size - len(pool))))
    violators = [pid for pid in all_ids if pid not in sat and pid not in pool]
    pool.extend(stratified_sample(kb, violators, size - len(pool), rng, strata_of))
    if len(pool) < size:  # the city lacks violators: fill with remaining satisfiers
        rest = [pid for pid in extra_sat if pid not in pool]
        pool.extend(rng.sample(rest, min(len(rest), size - len(pool))))
    rng.shuffle(pool)
    return pool


def build_open_pool(
    all_ids: Sequence[str],
    candidates: Sequence[str],
    rng: random.Random,
    *,
    min_size: int = 50,
    max_size: int = 100,
    widen: Sequence[str] = (),
) -> list[str]:
    """Closed candidates + sampled same-city same-type POIs, ``U{min..max}`` in size (capped), shuffled;
    widened with ``widen`` (in order) up to ``min_size`` when the city is too small (module docstring)."""
    target = min(len(all_ids), rng.randint(min_size, max_size))
    chosen = list(dict.fromkeys(candidates))
    taken = set(chosen)
    others = [pid for pid in all_ids if pid not in taken]
    chosen.extend(rng.sample(others, max(0, min(len(others), target - len(chosen)))))
    if len(chosen) < min_size:
        taken = set(chosen)
        chosen.extend([pid for pid in widen if pid not in taken][: min_size - len(chosen)])
    rng.shuffle(chosen)
    return chosen


def number_reviews(
    evidence: EvidenceIndex, candidates: Sequence[str]
) -> tuple[dict[str, ReviewRef], dict[str, str]]:
    """``({"R1": ReviewRef, ...}, {review_id: "R1", ...})`` over the pool's reviews, in pool order."""
    refs: dict[str, ReviewRef] = {}
    tag_of: dict[str, str] = {}
    for pid in candidates:
        for ref in evidence.review_refs(pid):
            tag = f"R{len(refs) + 1}"
            refs[tag] = ref
            tag_of[ref.review_id] = tag
    return refs, tag_of
