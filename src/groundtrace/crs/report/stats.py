"""Bootstrap confidence intervals and paired significance tests over run records.

* **Units.** A turn metric's run value is Σ values / n over scored turns (turn-mean), so resampling
  *dialogues* keeps per-dialogue sums ``s_d`` and counts ``c_d``: a resample ``I`` (D dialogues drawn
  with replacement) has value ``Σ_{d∈I} s_d / Σ_{d∈I} c_d``. A dialogue metric has ``c_d ∈ {0, 1}``.
  Pooled metrics (the NLI rate) are resampled as the mean of their per-turn ratios (an approximation:
  the per-turn numerators are not stored).
* **CI** — percentile bootstrap: the 2.5th and 97.5th percentiles (``numpy.percentile``, linear) of the
  resample values (:func:`bootstrap_ci`), resamples whose count is 0 left out. The resampling is
  ``scipy.stats.bootstrap`` (paired, vectorised, batches of :data:`CHUNK`): it draws the same indices
  from the caller's Generator as the hand-written loop it replaced, so reports keep their numbers; the
  percentiles are taken here because scipy's own interval would be NaN when a resample has count 0.
* **Paired tests** between two runs on the same units (turns for turn metrics, dialogues for dialogue
  metrics, both values present): differences ``δ_i = a_i − b_i``, summed per dialogue,
  ``Δ_d = Σ_{i∈d} δ_i`` — the dialogue is the exchangeable unit (turns of one dialogue are not
  independent), so signs are flipped per dialogue. Sign-flip permutation test of ``|Σ_d Δ_d|``:
  p = #{|Σ ε_d Δ_d| ≥ |Σ Δ_d|} / 2^n over every sign vector ``ε`` when the number n of non-zero
  ``Δ_d`` is ≤ :data:`EXACT_MAX_N` (zeros never change the sum); else
  p = min((1 + #hits) / (1 + B), 2·exp(−(ΣΔ)² / (2·ΣΔ²))) over B random sign vectors — the second
  term is Hoeffding's bound on the exact p (a Rademacher sum), which resolves p-values below the
  Monte Carlo floor 1/(1+B) so that they survive the Holm adjustment. The exact case is
  ``scipy.stats.permutation_test`` (one sample, ``permutation_type="samples"`` = sign flips; its
  two-sided p, 2·min(P(T ≤ t), P(T ≥ t)), equals P(|T| ≥ |t|) because the sign-flip null is
  symmetric); the Monte Carlo case stays hand-written for the Hoeffding cap and the seeded stream.
  Wilcoxon signed-rank test (``scipy.stats.wilcoxon``) on the same per-dialogue ``Δ_d`` (zeros
  dropped; p = 1 when all are 0).
* **Multiple comparisons** — Holm–Bonferroni over all the tests of a report (:func:`holm`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

EXACT_MAX_N = 12
CHUNK = 100


def per_dialogue(values: dict[str, list[float]], order: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, counts)`` per dialogue of ``order`` from ``{dialogue_id: [values present]}``."""
    sums = np.array([float(sum(values.get(d, []))) for d in order])
    counts = np.array([float(len(values.get(d, []))) for d in order])
    return sums, counts


def bootstrap_ci(
    sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, resamples: int = 1000, alpha: float = 0.05
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of Σs/Σc resampling dialogues (module docstring); ``(None, None)`` if empty."""
    n = len(sums)
    if n == 0 or counts.sum() == 0:
        return None, None
    if n == 1:  # scipy needs two observations; every resample is the one dialogue (same draws consumed)
        for start in range(0, resamples, CHUNK):
            rng.integers(0, n, size=(min(CHUNK, resamples - start), n))
        value = float(sums[0] / counts[0])
        return value, value

    def ratio(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return sums[idx].sum(axis=axis) / counts[idx].sum(axis=axis)  # 0/0 = NaN: left out below

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns about the NaN resamples we drop ourselves
        result = stats.bootstrap(
            (np.arange(n),),
            ratio,
            n_resamples=resamples,
            batch=CHUNK,
            vectorized=True,
            paired=True,
            method="percentile",
            confidence_level=1 - alpha,
            rng=rng,
        )
    values = result.bootstrap_distribution
    values = values[~np.isnan(values)]
    if not len(values):
        return None, None
    lo, hi = np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def cluster_sums(diffs: np.ndarray, groups: list[str] | None) -> np.ndarray:
    """Per-group sums of ``diffs`` (groups in first-seen order); ``diffs`` itself when ``groups`` is None."""
    if groups is None:
        return diffs
    if len(groups) != len(diffs):
        raise ValueError(f"{len(groups)} group labels for {len(diffs)} differences")
    index: dict[str, int] = {}
    codes = np.array([index.setdefault(g, len(index)) for g in groups], dtype=np.int64)
    return np.bincount(codes, weights=diffs, minlength=len(index)) if len(diffs) else diffs


def hoeffding_bound(diffs: np.ndarray) -> float:
    """Two-sided Hoeffding bound on the exact sign-flip p: ``min(1, 2·exp(−(Σδ)² / (2·Σδ²)))``."""
    sq = float(np.sum(diffs * diffs))
    if sq == 0:
        return 1.0
    return min(1.0, 2.0 * float(np.exp(-(float(diffs.sum()) ** 2) / (2.0 * sq))))


def sign_flip_pvalue(diffs: np.ndarray, rng: np.random.Generator, resamples: int = 1000) -> float:
    """Two-sided paired permutation p-value of ``Σ δ`` over independent units ``δ`` (module docstring:
    exact for n ≤ EXACT_MAX_N, else Monte Carlo capped by Hoeffding's bound)."""
    diffs = diffs[diffs != 0]  # a zero difference adds 0 whatever its sign
    n = len(diffs)
    if n == 0:
        return 1.0
    observed = abs(float(diffs.sum()))
    tol = 1e-12 * max(1.0, observed)
    if n == 1:  # both signs give |δ|: p = 1 (scipy needs two observations)
        return 1.0
    if n <= EXACT_MAX_N:
        exact = stats.permutation_test(
            (diffs,),
            lambda x, axis=-1: np.sum(x, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=2**n,  # every sign vector: the exact test
            alternative="two-sided",
        )
        return float(exact.pvalue)
    hits = 0
    for start in range(0, resamples, CHUNK):
        signs = rng.choice(np.array([1.0, -1.0]), size=(min(CHUNK, resamples - start), n))
        hits += int(np.sum(np.abs(signs @ diffs) >= observed - tol))
    return min((1 + hits) / (1 + resamples), hoeffding_bound(diffs))


def wilcoxon_pvalue(diffs: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value (``scipy.stats.wilcoxon``); 1.0 when every δ is 0."""
    from scipy.stats import wilcoxon  # deferred: scipy.stats costs ~1-2 s to import

    nonzero = diffs[diffs != 0]
    if len(nonzero) == 0:
        return 1.0
    return float(wilcoxon(nonzero).pvalue)


def holm(pvalues: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values: sorted ascending, p'_(i) = max_{j≤i} min(1, (m − j + 1) p_(j))."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass
class PairedTest:
    """One paired comparison of runs ``a`` and ``b`` on ``metric``."""

    setting: str
    metric: str
    a: str
    b: str
    n: int
    n_dialogues: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    p_permutation: float
    p_wilcoxon: float
    p_holm: float = 1.0


def paired_test(
    setting: str,
    metric: str,
    a: str,
    b: str,
    xs: np.ndarray,
    ys: np.ndarray,
    rng: np.random.Generator,
    resamples: int,
    groups: list[str] | None = None,
) -> PairedTest:
    """Paired test of aligned unit values ``xs`` (run a) and ``ys`` (run b); ``groups[i]`` is the dialogue
    of unit ``i`` (None: every unit is its own dialogue). Signs are flipped per dialogue."""
    diffs = xs - ys
    n = len(diffs)
    clustered = cluster_sums(diffs, groups)
    return PairedTest(
        setting=setting,
        metric=metric,
        a=a,
        b=b,
        n=n,
        n_dialogues=len(clustered),
        mean_a=float(xs.mean()) if n else None,
        mean_b=float(ys.mean()) if n else None,
        mean_diff=float(diffs.mean()) if n else None,
        p_permutation=sign_flip_pvalue(clustered, rng, resamples),
        p_wilcoxon=wilcoxon_pvalue(clustered),
    )
