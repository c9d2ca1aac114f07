"""Stage 2: closed pools (gold + satisfiers + stratified violators), open pools and [Rn] numbering."""

from __future__ import annotations

import random

import pytest

from groundtrace.crs.build.evidence import EvidenceIndex
from groundtrace.crs.build.pools import (
    build_closed_pool,
    build_open_pool,
    main_category,
    number_reviews,
    star_bin,
    stratified_sample,
)
from groundtrace.crs.kb.constraints import satisfies_all
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.schema import Constraint


@pytest.fixture(scope="module")
def kb():
    return generate_demo_kb(2, n_per_type=60, reviews_per_poi=4)


def test_star_bins() -> None:
    assert [star_bin(s) for s in (1.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)] == [0, 0, 1, 1, 2, 2, 3]


def test_stratified_sample_visits_distinct_strata_first(kb) -> None:
    ids = [p.poi_id for p in kb.pois_in("Lumen Bay", "restaurant")]
    strata = {(star_bin(kb.poi(i).stars), main_category(kb.poi(i))) for i in ids}
    k = min(10, len(strata))
    picked = stratified_sample(kb, ids, k, random.Random(1))
    assert len(set(picked)) == k
    assert len({(star_bin(kb.poi(i).stars), main_category(kb.poi(i))) for i in picked}) == k
    assert picked == stratified_sample(kb, ids, k, random.Random(1))
    assert sorted(stratified_sample(kb, ids, 500, random.Random(2))) == sorted(ids)  # k > n: everything once


def test_closed_pool_contains_required_satisfiers_and_violators(kb) -> None:
    pois = kb.pois_in("Lumen Bay", "restaurant")
    ids = [p.poi_id for p in pois]
    final = [Constraint(kind="price_max", value=2, label="cheap")]
    sat = {p.poi_id for p in pois if satisfies_all(p, final)}
    required = sorted(sat)[:3]
    for seed in range(20):
        pool = build_closed_pool(kb, ids, required, sat, random.Random(seed), size=8, max_extra_satisfying=2)
        assert len(pool) == 8 and len(set(pool)) == 8
        assert set(required) <= set(pool)
        extra = [p for p in pool if p in sat and p not in required]
        assert len(extra) <= 2
        violators = [p for p in pool if p not in sat]
        assert len(violators) == 8 - 3 - len(extra)
        assert all(not satisfies_all(kb.poi(p), final) for p in violators)
    assert build_closed_pool(kb, ids, required, sat, random.Random(5)) == build_closed_pool(
        kb, ids, required, sat, random.Random(5)
    )


def test_closed_pool_rejects_too_many_required(kb) -> None:
    ids = [p.poi_id for p in kb.pois_in("Lumen Bay", "hotel")]
    with pytest.raises(ValueError, match="exceed pool size"):
        build_closed_pool(kb, ids, ids[:9], set(ids), random.Random(0))


def test_open_pool_size_and_membership(kb) -> None:
    ids = [p.poi_id for p in kb.pois_in("Lumen Bay", "attraction")]
    cands = ids[10:18]
    for seed in range(20):
        pool = build_open_pool(ids, cands, random.Random(seed), min_size=50, max_size=100)
        assert 50 <= len(pool) <= 60 and len(set(pool)) == len(pool)
        assert set(cands) <= set(pool) <= set(ids)
    small = build_open_pool(ids[:20], ids[:8], random.Random(0))
    assert sorted(small) == sorted(ids[:20])  # the city lacks POIs: everything it has


def test_number_reviews_in_pool_order(kb) -> None:
    index = EvidenceIndex(kb, max_reviews_per_poi=3)
    cands = [p.poi_id for p in kb.pois_in("Lumen Bay", "hotel")][:4]
    refs, tag_of = number_reviews(index, cands)
    assert list(refs) == [f"R{i}" for i in range(1, 13)]
    assert [refs[f"R{i}"].poi_id for i in (1, 3, 4, 12)] == [cands[0], cands[0], cands[1], cands[3]]
    assert all(tag_of[ref.review_id] == tag for tag, ref in refs.items())
    assert refs["R1"].review_id == kb.reviews_of(cands[0])[0].review_id
