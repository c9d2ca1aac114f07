"""Hand-checked scoring pieces of the offline toolkit: Bayesian prior, RRF, haversine filter, greedy NN."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.crs.systems.toolkit.scoring import (
    bayesian_rating,
    greedy_route,
    popularity_score,
    rank_by,
    rrf,
    within_radius,
)


def test_bayesian_rating_by_hand() -> None:
    # (10·3.5 + 40·4.5) / 50 = (35 + 180) / 50 = 4.3
    assert bayesian_rating(4.5, 40, 3.5, 10) == pytest.approx(4.3)
    # no reviews: the prior mean; no prior weight: the plain mean
    assert bayesian_rating(5.0, 0, 3.5, 10) == 3.5
    assert bayesian_rating(5.0, 3, 3.5, 0) == 5.0
    with pytest.raises(ValueError):
        bayesian_rating(4.0, 0, 3.5, 0)


def test_popularity_prefers_many_good_reviews_over_few_perfect_ones() -> None:
    assert popularity_score(4.5, 400, 3.5, 10) > popularity_score(5.0, 2, 3.5, 10)
    assert popularity_score(4.0, 100, 3.5, 10) == pytest.approx((10 * 3.5 + 100 * 4.0) / 110 * math.log(101))


def test_rrf_by_hand() -> None:
    fused = rrf([["a", "b", "c"], ["b", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)  # absent from the second ranking: nothing from it
    assert rank_by(rrf([["x", "y"], ["y", "x"], ["y", "x"]]), ["x", "y"]) == ["y", "x"]


@given(st.lists(st.permutations(["a", "b", "c", "d"]), min_size=1, max_size=5))
def test_rrf_of_identical_rankings_keeps_the_order(rankings) -> None:
    same = [rankings[0]] * len(rankings)
    assert rank_by(rrf(same), ["d", "c", "b", "a"]) == list(rankings[0])


def test_rank_by_keeps_pool_order_on_ties_and_puts_unscored_last() -> None:
    assert rank_by({"b": 1.0, "a": 1.0, "c": 2.0}, ["a", "b", "c", "z"]) == ["c", "a", "b", "z"]


def test_haversine_filter_by_hand() -> None:
    # one degree of latitude is 2π·6371.0088/360 = 111.195 km; 0.01° ≈ 1.112 km
    points = {"near": (0.01, 0.0), "far": (0.03, 0.0), "mid": (0.0, 0.015), "here": (0.0, 0.0)}
    assert within_radius(points, 0.0, 0.0, 2.0) == ["here", "near", "mid"]  # mid ≈ 1.668 km
    assert within_radius(points, 0.0, 0.0, 1.0) == ["here"]
    assert within_radius(points, 0.0, 0.0, 1.115) == ["here", "near"]  # near = 1.11195 km
    assert within_radius(points, 0.0, 0.0, 1.110) == ["here"]


def test_greedy_nearest_neighbour_route_by_hand() -> None:
    # on a line: start at 0, points at 3, 1, 2, 10 (degrees of longitude on the equator)
    points = {"p3": (0.0, 3.0), "p1": (0.0, 1.0), "p2": (0.0, 2.0), "p10": (0.0, 10.0)}
    assert greedy_route(points, (0.0, 0.0)) == ["p1", "p2", "p3", "p10"]
    # from 2.4: p2 (0.4 away); then p3 and p1 are both 1 away: the tie goes to input order (p3)
    assert greedy_route(points, (0.0, 2.4)) == ["p2", "p3", "p1", "p10"]
    assert greedy_route({}, (0.0, 0.0)) == []
