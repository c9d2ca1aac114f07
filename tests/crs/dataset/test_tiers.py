"""Stage 5: the documented points formula and thresholds, on hand-made features."""

from __future__ import annotations

import pytest

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.dataset.tiers import TIERS, dialogue_features, tier_for, tier_points
from groundtrace.crs.kb.demo import generate_demo_kb


def f(n_constraints, has_rejection, n_satisfying, n_turns):
    return {
        "n_constraints": n_constraints,
        "has_rejection": has_rejection,
        "n_satisfying": n_satisfying,
        "n_turns": n_turns,
    }


@pytest.mark.parametrize(
    ("features", "points", "tier"),
    [
        (f(1, 0, 4, 8), 0, "Easy"),  # 0 + 0 + 0 + 0
        (f(2, 0, 3, 10), 1, "Easy"),  # 1 + 0 + 0 + 0
        (f(2, 0, 2, 10), 2, "Medium"),  # 1 + 0 + 1 + 0
        (f(1, 1, 3, 10), 2, "Medium"),  # 0 + 2 + 0 + 0
        (f(3, 0, 2, 12), 4, "Hard"),  # 2 + 0 + 1 + 1
        (f(2, 1, 1, 10), 5, "Hard"),  # 1 + 2 + 2 + 0
        (f(3, 1, 1, 12), 7, "Expert"),  # 2 + 2 + 2 + 1
        (f(6, 1, 1, 14), 8, "Expert"),  # min(3, 5)=3 + 2 + 2 + 1
        (f(0, 0, 5, 4), 0, "Easy"),  # max(0, -1) = 0
    ],
)
def test_points_and_tiers(features, points, tier) -> None:
    assert tier_points(features) == points
    assert tier_for(points) == tier


def test_thresholds_are_monotone() -> None:
    tiers = [tier_for(p) for p in range(9)]
    assert tiers == ["Easy", "Easy", "Medium", "Medium", "Hard", "Hard", "Expert", "Expert", "Expert"]


def test_built_dialogues_carry_consistent_features() -> None:
    kb = generate_demo_kb(1, n_per_type=25, reviews_per_poi=4)
    dialogues, _ = build_dialogues(kb, 40, seed=2)
    for d in dialogues:
        final = d.recommendation_turns()[-1].gold
        assert d.features["n_constraints"] == len(final.active_constraints)
        assert d.features["n_satisfying"] == 1 + len(final.multi_ref)
        assert d.features["n_turns"] == len(d.turns)
        assert d.features["has_rejection"] == float(d.has_rejection)
        assert 1 <= d.features["n_open_satisfying"] <= 50  # 25 per type: open pools widened to 50
        assert d.difficulty == tier_for(int(d.features["tier_points"]))
        assert dialogue_features(d)["n_constraints"] == d.features["n_constraints"]
    assert {d.difficulty for d in dialogues} <= set(TIERS)
    assert len({d.difficulty for d in dialogues}) >= 3
