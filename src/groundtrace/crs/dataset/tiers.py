"""Stage 5 — difficulty tiers (Easy / Medium / Hard / Expert) from measurable dialogue features.

Features (stored in ``Dialogue.features``), all read from the final recommendation turn:

* ``n_constraints`` — constraints active at the final recommendation;
* ``has_rejection`` — 1.0 when a ``reject_and_refine`` turn is present;
* ``n_satisfying`` — closed candidates satisfying the final constraints (gold + multi-reference);
* ``n_open_satisfying`` — open-pool POIs satisfying them (informational, not scored);
* ``n_turns`` — number of turns.

An itinerary dialogue (``Dialogue.legs``) is measured on the final recommendation of its last leg (with
that leg's anchor); ``n_turns`` counts every leg, so a three-leg itinerary usually earns the long-dialogue
point.

Points (documented formula)::

    points = min(3, max(0, n_constraints - 1))          # 1 constraint → 0 ... 4+ → 3
           + 2 · has_rejection
           + (2 if n_satisfying == 1 else 1 if n_satisfying == 2 else 0)
           + (1 if n_turns >= 12 else 0)

Tier thresholds: ``Easy`` points <= 1, ``Medium`` 2–3, ``Hard`` 4–5, ``Expert`` >= 6 (max 8).
"""

from __future__ import annotations

from groundtrace.crs.kb.constraints import satisfies_all
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

TIERS: tuple[str, ...] = ("Easy", "Medium", "Hard", "Expert")
THRESHOLDS: tuple[tuple[int, str], ...] = ((6, "Expert"), (4, "Hard"), (2, "Medium"), (0, "Easy"))
LONG_DIALOGUE_TURNS = 12


def tier_points(features: dict[str, float]) -> int:
    """The points of the module formula for a feature dict."""
    n_c = int(features["n_constraints"])
    n_sat = int(features["n_satisfying"])
    points = min(3, max(0, n_c - 1))
    points += 2 if features["has_rejection"] >= 1 else 0
    points += 2 if n_sat == 1 else 1 if n_sat == 2 else 0
    points += 1 if features["n_turns"] >= LONG_DIALOGUE_TURNS else 0
    return points


def tier_for(points: int) -> str:
    """``Easy`` <= 1 < ``Medium`` <= 3 < ``Hard`` <= 5 < ``Expert``."""
    for low, name in THRESHOLDS:
        if points >= low:
            return name
    return "Easy"


def dialogue_features(
    d: Dialogue, kb: KnowledgeBase | None = None, *, n_open_satisfying: int | None = None
) -> dict[str, float]:
    """Measure the features of ``d``; ``n_open_satisfying`` is counted with ``kb`` unless given."""
    recs = d.recommendation_turns()
    if not recs or recs[-1].gold is None:
        raise ValueError(f"dialogue {d.dialogue_id} has no gold recommendation turn")
    gold = recs[-1].gold
    features = {
        "n_constraints": float(len(gold.active_constraints)),
        "has_rejection": 1.0
        if any(t.act == "reject_and_refine" for t in d.turns if t.role == "user")
        else 0.0,
        "n_satisfying": float(1 + len(gold.multi_ref)),
        "n_turns": float(len(d.turns)),
    }
    if n_open_satisfying is not None:
        features["n_open_satisfying"] = float(n_open_satisfying)
    elif kb is not None:
        features["n_open_satisfying"] = float(
            sum(
                1
                for pid in gold.open_pool
                if pid in kb.pois
                and satisfies_all(kb.poi(pid), gold.active_constraints, d.anchor_at(recs[-1].index))
            )
        )
    return features


def assign_tier(
    d: Dialogue, kb: KnowledgeBase | None = None, *, n_open_satisfying: int | None = None
) -> Dialogue:
    """Fill ``d.features`` (plus ``tier_points``) and ``d.difficulty`` in place; returns ``d``."""
    features = dialogue_features(d, kb, n_open_satisfying=n_open_satisfying)
    points = tier_points(features)
    features["tier_points"] = float(points)
    d.features = features
    d.difficulty = tier_for(points)  # type: ignore[assignment]
    return d
