"""Structured matching of candidate cards against parsed constraints (KB attributes, price, distance)."""

from __future__ import annotations

from typing import Any

from groundtrace.crs.kb.constraints import satisfies
from groundtrace.crs.schema import Anchor, Constraint
from groundtrace.crs.systems.predictions import CandidateCard


def anchor_of(raw: dict[str, Any] | None) -> Anchor | None:
    """The dialogue's anchor as an :class:`Anchor` (None when absent or malformed)."""
    if not raw:
        return None
    try:
        return Anchor.model_validate(raw)
    except ValueError:
        return None


def card_satisfies(card: CandidateCard, constraint: Constraint, anchor: Anchor | None) -> bool:
    """``crs.kb.constraints.satisfies`` on a card (it has every field the test reads)."""
    return satisfies(card, constraint, anchor)  # type: ignore[arg-type]  # duck-typed POI


def constraint_match(card: CandidateCard, constraints: list[Constraint], anchor: Anchor | None) -> float:
    """Share of ``constraints`` the card meets (1.0 for none)."""
    if not constraints:
        return 1.0
    return sum(card_satisfies(card, c, anchor) for c in constraints) / len(constraints)
