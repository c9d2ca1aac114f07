"""Bootstrap CIs, permutation and Wilcoxon p-values and the Holm adjustment, on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.report.stats import (
    bootstrap_ci,
    cluster_sums,
    hoeffding_bound,
    holm,
    paired_test,
    per_dialogue,
    sign_flip_pvalue,
    wilcoxon_pvalue,
)


def test_holm_hand_computed() -> None:
    # sorted p: 0.01 (×3 = 0.03), 0.02 (×2 = 0.04), 0.04 (×1 = 0.04, running max 0.04)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    # capped at 1 and monotone: 0.5×2 = 1.0 → 1, then max(1, 0.6) = 1
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([]) == []


def test_exact_sign_flip_hand_computed() -> None:
    rng = np.random.default_rng(0)
    # δ = (1, 2, 3): 8 sign vectors; |Σ| ≥ 6 only for (+,+,+) and (−,−,−) → p = 2/8
    assert sign_flip_pvalue(np.array([1.0, 2.0, 3.0]), rng) == 0.25
    # δ = (1, −1): sums 0, 2, −2, 0; observed |0| = 0 → all 4 reach it → p = 1
    assert sign_flip_pvalue(np.array([1.0, -1.0]), rng) == 1.0
    assert sign_flip_pvalue(np.array([]), rng) == 1.0
    # zeros change no sum: 30 zeros plus (1, 2, 3) is still the exact 2/8 case, not a Monte Carlo one
    assert sign_flip_pvalue(np.array([0.0] * 30 + [1.0, 2.0, 3.0]), rng) == 0.25


def test_monte_carlo_sign_flip_is_seeded_and_bounded() -> None:
    diffs = np.ones(40)  # exact p = 2 / 2^40 ≈ 1.8e-12; Monte Carlo alone stops at its floor 1 / (1 + B)
    a = sign_flip_pvalue(diffs, np.random.default_rng(1), resamples=500)
    # Hoeffding: 2·exp(−(Σδ)² / (2·Σδ²)) = 2·exp(−40² / (2·40)) = 2·e^−20 ≈ 4.1e-9 < 1/501
    assert a == pytest.approx(2 * math.exp(-20)) and 2 / 2**40 <= a < 1 / 501
    noise = np.random.default_rng(2).normal(size=40)
    p1 = sign_flip_pvalue(noise, np.random.default_rng(3), 400)
    p2 = sign_flip_pvalue(noise, np.random.default_rng(3), 400)
    assert p1 == p2 and 0 < p1 <= 1


def test_wilcoxon_hand_computed() -> None:
    # five positive differences: exact null P(W+ = 15) = 1/32, two-sided p = 2/32
    assert wilcoxon_pvalue(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == pytest.approx(0.0625)
    assert wilcoxon_pvalue(np.zeros(7)) == 1.0


def test_bootstrap_ci_hand_cases() -> None:
    rng = np.random.default_rng(0)
    sums, counts = per_dialogue({"a": [1.0, 1.0], "b": [1.0]}, ["a", "b", "c"])
    assert list(sums) == [2.0, 1.0, 0.0] and list(counts) == [2.0, 1.0, 0.0]
    # every dialogue's turns are all 1 → every resample is 1
    assert bootstrap_ci(sums, counts, rng) == (1.0, 1.0)
    assert bootstrap_ci(np.array([]), np.array([]), rng) == (None, None)
    # two dialogues with one turn each, values 0 and 1: resample values ∈ {0, .5, 1} with P(0)=P(1)=1/4
    lo, hi = bootstrap_ci(np.array([0.0, 1.0]), np.array([1.0, 1.0]), np.random.default_rng(5), 2000)
    assert (lo, hi) == (0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.floats(0, 1), min_size=0, max_size=4), min_size=1, max_size=12),
    st.integers(0, 2**16),
)
def test_bootstrap_ci_lies_within_the_unit_values(per: list[list[float]], seed: int) -> None:
    values = {str(i): v for i, v in enumerate(per)}
    sums, counts = per_dialogue(values, list(values))
    lo, hi = bootstrap_ci(sums, counts, np.random.default_rng(seed), 200)
    flat = [x for v in per for x in v]
    if not flat:
        assert (lo, hi) == (None, None)
        return
    assert min(flat) - 1e-12 <= lo <= hi <= max(flat) + 1e-12


def test_hoeffding_bound_hand_computed() -> None:
    # δ = (1, 1, −1, 2): Σ = 3, Σδ² = 7 → 2·exp(−9/14) = 1.0516 → capped at 1
    assert hoeffding_bound(np.array([1.0, 1.0, -1.0, 2.0])) == 1.0
    # δ = 20 × 0.5: Σ = 10, Σδ² = 5 → 2·exp(−100/10) = 2·e^−10
    assert hoeffding_bound(np.full(20, 0.5)) == pytest.approx(2 * math.exp(-10))
    assert hoeffding_bound(np.zeros(3)) == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0]), min_size=1, max_size=10))
def test_hoeffding_bounds_the_exact_p(diffs: list[float]) -> None:
    d = np.array(diffs)
    exact = sign_flip_pvalue(d, np.random.default_rng(0))  # n <= 12: exact enumeration
    assert exact <= hoeffding_bound(d[d != 0]) + 1e-12


def test_signs_are_flipped_per_dialogue() -> None:
    # four turns of ONE dialogue, each +1: per dialogue Δ = (4); signs of (4): |±4| ≥ 4 always → p = 1
    # (turn by turn it would be the exact 2/16 = 0.125 — treating correlated turns as independent)
    diffs = np.ones(4)
    assert list(cluster_sums(diffs, ["d1"] * 4)) == [4.0]
    rng = np.random.default_rng(0)
    t = paired_test("closed", "recall@1", "a", "b", np.ones(4), np.zeros(4), rng, 100, ["d1"] * 4)
    assert (t.n, t.n_dialogues, t.p_permutation) == (4, 1, 1.0)
    assert sign_flip_pvalue(diffs, rng) == 0.125
    # two dialogues: d1 turns (+1, +1), d2 turn (−1) → Δ = (2, −1); sums ±2 ± 1 ∈ {3, 1, −1, −3}; observed 1
    # → every sign vector reaches |·| ≥ 1 → p = 1
    t = paired_test("closed", "m", "a", "b", np.array([1.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), rng, 100,
                    ["d1", "d1", "d2"])  # fmt: skip
    assert (t.n_dialogues, t.p_permutation, t.mean_diff) == (2, 1.0, pytest.approx(1 / 3))
    with pytest.raises(ValueError, match="group labels"):
        cluster_sums(np.ones(3), ["d1"])


# -- the scipy-based code gives the numbers of the hand-written code it replaced -------------------------


def _previous_bootstrap_ci(sums, counts, rng, resamples=1000, alpha=0.05):
    """The hand-written percentile bootstrap that ``bootstrap_ci`` replaced (kept here as the reference)."""
    n = len(sums)
    if n == 0 or counts.sum() == 0:
        return None, None
    num_parts, den_parts = [], []
    for start in range(0, resamples, 100):
        idx = rng.integers(0, n, size=(min(100, resamples - start), n))
        num_parts.append(sums[idx].sum(axis=1))
        den_parts.append(counts[idx].sum(axis=1))
    num, den = np.concatenate(num_parts), np.concatenate(den_parts)
    ok = den > 0
    if not ok.any():
        return None, None
    values = num[ok] / den[ok]
    lo, hi = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def _previous_exact_sign_flip(diffs):
    """The hand-written exact sign-flip p (every sign vector enumerated) that scipy's test replaced."""
    import itertools

    diffs = diffs[diffs != 0]
    if len(diffs) == 0:
        return 1.0
    observed = abs(float(diffs.sum()))
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(diffs))))
    return float(np.mean(np.abs(signs @ diffs) >= observed - 1e-12 * max(1.0, observed)))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.floats(0, 1, allow_nan=False)), min_size=1, max_size=30),
    st.integers(0, 2**32 - 1),
    st.sampled_from([10, 150, 1000]),
)
def test_bootstrap_ci_same_numbers_as_before(cells, seed: int, resamples: int) -> None:
    """Same CI to the last bit, and the Generator left in the same state (later cells unchanged)."""
    counts = np.array([float(c) for c, _ in cells])
    sums = np.array([c * v for c, v in cells])
    rng_new, rng_old = np.random.default_rng(seed), np.random.default_rng(seed)
    assert bootstrap_ci(sums, counts, rng_new, resamples) == _previous_bootstrap_ci(
        sums, counts, rng_old, resamples
    )
    assert rng_new.integers(0, 2**62) == rng_old.integers(0, 2**62)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(-4, 4).map(float), min_size=0, max_size=12))
def test_exact_sign_flip_same_numbers_as_before(values) -> None:
    diffs = np.array(values)
    assert sign_flip_pvalue(diffs, np.random.default_rng(0)) == pytest.approx(
        _previous_exact_sign_flip(diffs), rel=1e-12, abs=0
    )
