"""Select the KB from Yelp: cities, POIs stratified by type × star band, a bounded review sample per POI.

Two passes, memory bounded by the *selection*, never by the review file:

1. **Businesses.** Stream the business file and keep the *eligible* POIs: a mapped type
   (:func:`groundtrace.crs.kb.yelp.classify`), a city, ``review_count >= min_reviews`` (Yelp's own count),
   optionally open. Cities are ``config.cities`` when given (matched case-insensitively), else the top
   ``n_cities`` by number of eligible POIs (ties by name) — this needs a counting read before the
   collecting read. For every (city, type, star band) stratum the POIs are ranked by the seeded key
   ``sha256(f"{seed}:{poi_id}")``; while streaming only the ``ceil(oversample × per_type) + 2`` smallest
   keys per stratum are held (plus a count), and after the pass the first ``ceil(oversample × quota) + 2``
   of each stratum become candidates. City names are compared case-insensitively; a city is named by its most
   frequent spelling.
2. **Reviews.** Stream the review file keeping, per candidate POI, the ``max_reviews_per_poi`` reviews
   with the smallest seeded key ``sha256(f"{seed}:{review_id}")`` (a bottom-k sample: uniform, seeded, and
   independent of file order), among reviews with ``min_review_chars <= len(text) <= max_review_chars``.

Final selection: a candidate is *usable* when it kept ``>= min_reviews`` reviews. Quotas come from
:func:`allocate`: a type's ``per_type`` target is split equally over the cities, each city's quota over
the star bands (``"equal"`` or ``"proportional"`` to the band sizes), with water-filling — a stratum that
has fewer usable POIs than its share gives the shortfall to the others. Within a stratum POIs are taken in
seeded-key order. Same inputs and seed → same KB.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from groundtrace.core.files.errors import LineError
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.mining import fill_from_reviews
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.kb.yelp import OnBytes, stream_businesses, stream_reviews
from groundtrace.crs.schema import POI, POI_TYPES, Review


class SelectionConfig(BaseModel):
    """How the KB is cut out of Yelp. Paper scale: 8 cities, 800 POIs per type, 34,208 reviews."""

    model_config = ConfigDict(extra="forbid")
    cities: list[str] | None = Field(
        default=None, description="Cities to use; None = top n_cities by eligible POIs."
    )
    n_cities: int = Field(default=8, ge=1)
    per_type: dict[str, int] = Field(
        default_factory=lambda: {t: 800 for t in POI_TYPES},
        description="Target POIs per type, over all cities.",
    )
    star_bands: list[float] = Field(
        default_factory=lambda: [2.5, 3.5, 4.5],
        description="Band edges: [2.5, 3.5, 4.5] → <2.5, 2.5–3.5, 3.5–4.5, ≥4.5 (lower edge inclusive).",
    )
    band_allocation: Literal["equal", "proportional"] = "proportional"
    min_reviews: int = Field(default=5, ge=0, description="Minimum reviews kept per selected POI.")
    max_reviews_per_poi: int = Field(default=15, ge=1, description="Cap on reviews kept per POI.")
    min_review_chars: int = Field(default=40, ge=0)
    max_review_chars: int = Field(default=5000, ge=1)
    require_open: bool = False
    mine_from_reviews: bool = Field(
        default=True,
        description="kb build: fill absent attributes and price levels from review sentences "
        "(groundtrace.crs.kb.mining), with their evidence.",
    )
    oversample: float = Field(
        default=1.5, ge=1.0, description="Candidates kept per stratum, as a multiple of its quota."
    )
    seed: int = 0

    @field_validator("per_type")
    @classmethod
    def _known_types(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = set(value) - set(POI_TYPES)
        if unknown:
            raise ValueError(f"unknown POI type(s) {sorted(unknown)}; expected {list(POI_TYPES)}")
        if any(n < 0 for n in value.values()):
            raise ValueError("per_type targets must be >= 0")
        return value

    @field_validator("star_bands")
    @classmethod
    def _sorted_bands(cls, value: list[float]) -> list[float]:
        if value != sorted(set(value)):
            raise ValueError("star_bands must be strictly increasing")
        return value

    @model_validator(mode="after")
    def _chars(self) -> SelectionConfig:
        if self.min_review_chars > self.max_review_chars:
            raise ValueError("min_review_chars must be <= max_review_chars")
        return self


def star_band(stars: float, edges: list[float]) -> int:
    """Index of the band of ``stars``: the number of edges ``<= stars`` (0 .. len(edges))."""
    return sum(1 for e in edges if stars >= e)


def seeded_key(seed: int, ident: str) -> bytes:
    """Order-independent seeded rank of an id: ``sha256(f"{seed}:{ident}")`` (smaller = earlier)."""
    return hashlib.sha256(f"{seed}:{ident}".encode()).digest()


def allocate(target: int, capacities: list[int], weights: list[float] | None = None) -> list[int]:
    """Split ``target`` over strata with ``capacities`` (water-filling, largest remainder, deterministic).

    Each round shares what is left over the strata not yet full in proportion to ``weights`` (equal when
    None), floors the shares, hands the remainder one by one to the largest fractional parts (ties: lower
    index), and caps at capacity; repeats until the target is met or every stratum is full. The result
    sums to ``min(target, sum(capacities))``.
    """
    n = len(capacities)
    weights = list(weights) if weights is not None else [1.0] * n
    counts = [0] * n
    left = min(target, sum(capacities))
    while left > 0:
        open_idx = [i for i in range(n) if counts[i] < capacities[i]]
        total_w = sum(weights[i] for i in open_idx)
        if total_w <= 0:
            weights = [1.0] * n
            total_w = float(len(open_idx))
        shares = {i: left * weights[i] / total_w for i in open_idx}
        give = {i: math.floor(shares[i]) for i in open_idx}
        rest = left - sum(give.values())
        for i in sorted(open_idx, key=lambda i: (-(shares[i] - give[i]), i))[:rest]:
            give[i] += 1
        moved = 0
        for i in open_idx:
            add = min(give[i], capacities[i] - counts[i])
            counts[i] += add
            moved += add
        left -= moved
        if moved == 0:  # cannot happen (some open stratum always receives >= 1), kept as a guard
            break
    return counts


T = TypeVar("T")


@dataclass
class _BottomK(Generic[T]):
    """The ``cap`` items of smallest key seen so far (a max-heap via inverted key bytes); counts all
    offers."""

    cap: int
    items: list[tuple[bytes, str, int, T]] = field(default_factory=list)
    offered: int = 0

    def offer(self, key: bytes, ident: str, item: T) -> None:
        self.offered += 1
        if self.cap <= 0:
            return
        inv = bytes(255 - b for b in key)  # larger inv = smaller key; heap root = largest key kept
        # the offer number breaks ties of (key, ident), so two records are never compared (the readers
        # drop repeated ids; this keeps the heap total even if one slips through)
        entry = (inv, ident, -self.offered, item)
        if len(self.items) < self.cap:
            heapq.heappush(self.items, entry)
        elif entry[:3] > self.items[0][:3]:
            heapq.heapreplace(self.items, entry)

    def ordered(self) -> list[T]:
        """Kept items, smallest key first (equal keys: first offered first)."""
        return [entry[3] for entry in sorted(self.items, key=lambda e: e[:3], reverse=True)]


class SelectionReport(BaseModel):
    """What happened during selection: counts and problems (file:line)."""

    cities: list[str]
    missing_cities: list[str] = Field(default_factory=list, description="Listed cities with no eligible POI.")
    eligible: dict[str, dict[str, int]] = Field(description="city -> type -> eligible POIs (pass 1).")
    candidates: int
    usable: int
    reviews_seen: int = Field(description="Reviews read for candidate POIs (before the cap).")
    selected_pois: dict[str, int]
    selected_reviews: int
    shortfall: dict[str, int] = Field(description="type -> target minus selected, when positive.")
    empty_cities: dict[str, str] = Field(
        default_factory=dict,
        description="Cities of `cities` that ended with 0 selected POIs -> why (they are "
        "absent from the KB).",
    )
    problems: list[LineError]


def select_kb(
    business_path: Path,
    review_path: Path,
    config: SelectionConfig | None = None,
    *,
    on_bytes: Callable[[str], OnBytes | None] | None = None,
    name: str = "yelp",
) -> tuple[KnowledgeBase, SelectionReport]:
    """Run both passes and return the KB plus a :class:`SelectionReport` (see module docstring).

    ``on_bytes(stage)`` may return a byte-progress callback for the stage ``"businesses"`` /
    ``"reviews"``; it is called once per file read.
    """
    cfg = config or SelectionConfig()
    problems: list[LineError] = []
    progress = on_bytes or (lambda stage: None)

    def eligible(poi: POI) -> bool:
        return bool(poi.city) and poi.review_count >= cfg.min_reviews

    # pass 1a: choose cities (a counting read, only when they are not given)
    if cfg.cities:
        chosen_lower = {c.strip().lower() for c in cfg.cities}
    else:
        chosen_lower = _most_frequent_cities(
            business_path, cfg, eligible, progress("businesses (count cities)")
        )
    # pass 1b: collect eligible POIs of the chosen cities, per stratum; a stratum never needs more than
    # ceil(oversample × per_type) + 2 candidates, so only that many (smallest keys) are held
    limit = {t: math.ceil(cfg.oversample * cfg.per_type.get(t, 0)) + 2 for t in POI_TYPES}
    strata: dict[tuple[str, str, int], _BottomK[POI]] = {}
    eligible_counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))  # by lower city
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for poi in stream_businesses(business_path, problems, progress("businesses"), cfg.require_open):
        low = poi.city.lower()
        if not eligible(poi) or low not in chosen_lower:
            continue
        spellings[low][poi.city] += 1
        eligible_counts[low][poi.poi_type] += 1
        key = (low, poi.poi_type, star_band(poi.stars, cfg.star_bands))
        if key not in strata:
            strata[key] = _BottomK(limit[poi.poi_type])
        strata[key].offer(seeded_key(cfg.seed, poi.poi_id), poi.poi_id, poi)
    # a city's name is its most frequent spelling (ties: the smallest string) — independent of file order
    canonical_city = {low: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for low, c in spellings.items()}
    cities = sorted(canonical_city, key=lambda low: canonical_city[low])  # lower-cased keys, by display name

    # per-stratum candidate limits from pass-1 sizes
    candidates, cand_order = _candidates(strata, cities, canonical_city, cfg)
    strata.clear()

    # pass 2: bounded review sample per candidate
    heaps: dict[str, _BottomK[Review]] = {pid: _BottomK(cfg.max_reviews_per_poi) for pid in candidates}
    seen = 0
    for review in stream_reviews(review_path, problems, progress("reviews"), business_ids=heaps):
        if not cfg.min_review_chars <= len(review.text) <= cfg.max_review_chars:
            continue
        seen += 1
        heaps[review.poi_id].offer(seeded_key(cfg.seed, review.review_id), review.review_id, review)
    kept_reviews = {pid: h.ordered() for pid, h in heaps.items()}

    # final stratified selection over usable candidates
    usable = {pid for pid, rs in kept_reviews.items() if len(rs) >= cfg.min_reviews}
    selected, selected_by_type, shortfall = _stratified_selection(cand_order, usable, cities, cfg)
    pois = [candidates[pid] for pid in selected]
    reviews = [r for pid in selected for r in sorted(kept_reviews[pid], key=lambda r: r.review_id)]
    empty = _empty_cities(
        [canonical_city[low] for low in cities],
        list(candidates.values()),
        usable,
        {p.city for p in pois},
        cfg,
    )
    kb = KnowledgeBase(pois, reviews, name=name)
    report = SelectionReport(
        cities=[canonical_city[low] for low in cities],
        missing_cities=sorted(c for c in (cfg.cities or []) if c.strip().lower() not in canonical_city),
        eligible={canonical_city[low]: dict(t) for low, t in sorted(eligible_counts.items())},
        candidates=len(candidates),
        usable=len(usable),
        reviews_seen=seen,
        selected_pois=selected_by_type,
        selected_reviews=len(reviews),
        shortfall=shortfall,
        empty_cities=empty,
        problems=problems,
    )
    return kb, report


def _most_frequent_cities(
    business_path: Path, cfg: SelectionConfig, eligible: Callable[[POI], bool], on_bytes: OnBytes | None
) -> set[str]:
    """The ``cfg.n_cities`` lower-cased city names with most eligible POIs (ties: alphabetical), by a
    counting read of the business file (its problems are reported by the collecting read, not here)."""
    counts: Counter[str] = Counter()  # by lower-cased city name
    count_problems: list[LineError] = []  # the collecting read reports the same lines again
    for poi in stream_businesses(business_path, count_problems, on_bytes, cfg.require_open):
        if eligible(poi):
            counts[poi.city.lower()] += 1
    return {c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: cfg.n_cities]}


def _candidates(
    strata: dict[tuple[str, str, int], _BottomK[POI]],
    cities: list[str],
    canonical_city: dict[str, str],
    cfg: SelectionConfig,
) -> tuple[dict[str, POI], dict[tuple[str, str, int], list[str]]]:
    """Candidates (city renamed to its canonical spelling) and their order per ``(city, type, band)``.

    Each type's target is allocated over cities by pass-1 sizes, then over star bands
    (:func:`_band_weights`); a stratum with quota ``q > 0`` keeps its ``min(size, ceil(oversample × q) + 2)``
    smallest-key POIs.
    """
    n_bands = len(cfg.star_bands) + 1
    candidates: dict[str, POI] = {}
    cand_order: dict[tuple[str, str, int], list[str]] = {}
    empty: _BottomK[POI] = _BottomK(0)
    for poi_type in POI_TYPES:
        target = cfg.per_type.get(poi_type, 0)
        city_caps = [sum(strata.get((c, poi_type, b), empty).offered for b in range(n_bands)) for c in cities]
        city_quota = allocate(target, city_caps)
        for city, quota in zip(cities, city_quota, strict=True):
            sizes = [strata.get((city, poi_type, b), empty).offered for b in range(n_bands)]
            band_quota = allocate(quota, sizes, _band_weights(sizes, cfg))
            for band, q in enumerate(band_quota):
                pool = strata.get((city, poi_type, band), empty).ordered()
                keep = min(len(pool), math.ceil(cfg.oversample * q) + 2) if q > 0 else 0
                cand_order[(city, poi_type, band)] = [p.poi_id for p in pool[:keep]]
                for poi in pool[:keep]:
                    if poi.city != canonical_city[city]:
                        poi = poi.model_copy(update={"city": canonical_city[city]})
                    candidates[poi.poi_id] = poi
    return candidates, cand_order


def _stratified_selection(
    cand_order: dict[tuple[str, str, int], list[str]],
    usable: set[str],
    cities: list[str],
    cfg: SelectionConfig,
) -> tuple[list[str], dict[str, int], dict[str, int]]:
    """``(selected POI ids, selected count per type, shortfall per type)``: each type's target allocated
    over cities, then star bands, by the number of usable candidates; a stratum gives its first ``q``."""
    n_bands = len(cfg.star_bands) + 1
    selected: list[str] = []
    shortfall: dict[str, int] = {}
    selected_by_type: dict[str, int] = {}
    for poi_type in POI_TYPES:
        target = cfg.per_type.get(poi_type, 0)
        usable_lists = {
            (c, b): [pid for pid in cand_order.get((c, poi_type, b), []) if pid in usable]
            for c in cities
            for b in range(n_bands)
        }
        city_caps = [sum(len(usable_lists[(c, b)]) for b in range(n_bands)) for c in cities]
        city_quota = allocate(target, city_caps)
        got = 0
        for city, quota in zip(cities, city_quota, strict=True):
            sizes = [len(usable_lists[(city, b)]) for b in range(n_bands)]
            for band, q in enumerate(allocate(quota, sizes, _band_weights(sizes, cfg))):
                selected.extend(usable_lists[(city, band)][:q])
                got += q
        selected_by_type[poi_type] = got
        if target > got:
            shortfall[poi_type] = target - got
    return selected, selected_by_type, shortfall


def _empty_cities(
    cities: list[str],
    candidates: list[POI],
    usable: set[str],
    selected_cities: set[str],
    cfg: SelectionConfig,
) -> dict[str, str]:
    """Each city of ``cities`` with no selected POI -> why: the per-type targets gave it no candidate,
    none of its candidates kept ``min_reviews`` reviews, or its usable POIs were not needed."""
    n_candidates: Counter[str] = Counter(p.city for p in candidates)
    n_usable: Counter[str] = Counter(p.city for p in candidates if p.poi_id in usable)
    out: dict[str, str] = {}
    for city in cities:
        if city in selected_cities:
            continue
        if n_candidates[city] == 0:
            out[city] = "no candidate: the per-type targets were split over the other cities"
        elif n_usable[city] == 0:
            out[city] = (
                f"none of its {n_candidates[city]} candidate POI(s) kept >= {cfg.min_reviews} review(s) "
                f"of {cfg.min_review_chars}-{cfg.max_review_chars} characters"
            )
        else:
            out[city] = (
                f"its {n_usable[city]} usable POI(s) were not needed: the per-type targets were met elsewhere"
            )
    return out


def summary_path(kb_path: Path) -> Path:
    """Where :func:`build_kb` writes the summary of the KB file ``kb_path``: ``<KB>.summary.json``."""
    return kb_path.with_name(kb_path.name + ".summary.json")


def build_kb(
    business_path: Path,
    review_path: Path,
    out: Path,
    config: SelectionConfig | None = None,
    *,
    on_bytes: Callable[[str], OnBytes | None] | None = None,
    source: str = "",
) -> tuple[KnowledgeBase, SelectionReport, dict[str, Any]]:
    """The whole ``groundtrace crs kb build``: :func:`select_kb`, the KB written to ``out`` (SQLite, with
    ``source`` and the config), and ``<out>.summary.json``; returns the KB, the report and that summary.

    The summary is :meth:`KnowledgeBase.summary` plus ``selection_report`` (the report without its
    problems, so with ``shortfall`` and ``empty_cities``), ``problems`` (every skipped line as
    ``file:line: message``) and ``mining`` (with ``mine_from_reviews``: attributes and price levels filled
    from reviews per key, and the agreement of mined values with Yelp's where Yelp has them). The sentence
    stance of every review is computed here, once, and stored with the KB.
    """
    cfg = config or SelectionConfig()
    kb, report = select_kb(business_path, review_path, cfg, on_bytes=on_bytes, name=out.stem)
    mining: dict[str, Any] | None = None
    if cfg.mine_from_reviews and len(kb):
        kb, mining = fill_from_reviews(kb)
    save_kb(kb, out, source=source, selection=cfg.model_dump(mode="json"))
    summary: dict[str, Any] = dict(kb.summary())
    if mining is not None:
        summary["mining"] = mining
    summary["selection_report"] = report.model_dump(mode="json", exclude={"problems"})
    summary["problems"] = [str(p) for p in report.problems]
    summary_path(out).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return kb, report, summary


def _band_weights(sizes: list[int], cfg: SelectionConfig) -> list[float] | None:
    return [float(s) for s in sizes] if cfg.band_allocation == "proportional" else None
