"""Lean dialogue records: what running and scoring read of a dialogue, in compact typed structs.

A :class:`~groundtrace.crs.schema.Dialogue` (pydantic) is the validated boundary type; once a line is
valid, evaluation needs only part of it and no validation machinery. :class:`LeanDialogue` and its parts
carry exactly the attributes the runner, the inputs and the metric kernels read, under the same names as
the schema models (duck typing: a kernel written against ``Dialogue`` reads a ``LeanDialogue`` alike):

* dialogue: ``dialogue_id``, ``split``, ``city``, ``poi_type``, ``difficulty``, ``has_rejection``,
  ``kb_hash``, ``anchor``, ``candidates``, ``review_refs`` (tag → :class:`LeanRef`), ``turns``, ``legs``
  and the per-turn lookups ``leg_at``, ``poi_type_at``, ``candidates_at``, ``anchor_at``,
  ``all_candidates``, ``recommendation_turns`` (the schema's rules);
* leg: ``poi_type``, ``first_turn``, ``candidates``, ``anchor``;
* turn: ``index``, ``role``, ``act``, ``text``, ``rejected``, ``gold``;
* gold: ``gold_poi``, ``multi_ref``, ``open_pool``, ``active_constraints``;
* constraint: ``kind``, ``value`` (typed), ``label``; anchor: ``name``, ``lat``, ``lon``.

Left out: persona, features, tier features, quote spans, cited tags, recommended ids, added constraints,
realiser and seed. Id sequences are tuples and every string is interned per load (a dataset names a few
hundred POIs and a few thousand reviews across millions of references; roles, acts, kinds, labels and
many template turn texts repeat), so a 10k-dialogue split takes about a hundred MB instead of more than a
GB of pydantic models. The structs are ``msgspec.Struct`` classes
(``__slots__``, not tracked by the garbage collector: they never form cycles).

:func:`lean_dialogue` converts a validated pydantic ``Dialogue``; the fast reader
(:mod:`.lean_reader`) builds them straight from dataset lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from groundtrace.crs.schema import Dialogue, Turn, TurnGold


class LeanRef(msgspec.Struct, frozen=True, gc=False):
    """What a ``[Rn]`` tag points to (``ReviewRef``)."""

    review_id: str
    poi_id: str


class LeanConstraint(msgspec.Struct, frozen=True, gc=False):
    """A user preference (``Constraint``): ``kind``, typed ``value``, ``label``."""

    kind: str
    value: str | int | float | bool
    label: str


class LeanAnchor(msgspec.Struct, frozen=True, gc=False):
    """Where distances are measured from (``Anchor``)."""

    name: str
    lat: float
    lon: float

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """``{"name", "lat", "lon"}``, as ``Anchor.model_dump`` gives it (what systems are shown)."""
        return {"name": self.name, "lat": self.lat, "lon": self.lon}


class LeanGold(msgspec.Struct, frozen=True, gc=False):
    """Gold labels of a recommendation turn (``TurnGold``)."""

    gold_poi: str
    multi_ref: tuple[str, ...]
    open_pool: tuple[str, ...]
    active_constraints: tuple[LeanConstraint, ...]

    def to_model(self) -> TurnGold:
        """The pydantic ``TurnGold`` (what a ``needs_gold`` system receives)."""
        return TurnGold(
            gold_poi=self.gold_poi,
            multi_ref=list(self.multi_ref),
            open_pool=list(self.open_pool),
            active_constraints=[
                {"kind": c.kind, "value": c.value, "label": c.label} for c in self.active_constraints
            ],
        )


class LeanTurn(msgspec.Struct, frozen=True, gc=False):
    """One turn (``Turn``): index, role, act, text, the ids the user rejects, gold labels."""

    index: int
    role: str
    act: str
    text: str
    rejected: tuple[str, ...]
    gold: LeanGold | None


class LeanLeg(msgspec.Struct, frozen=True, gc=False):
    """One leg of an itinerary dialogue (``Leg``)."""

    poi_type: str
    first_turn: int
    candidates: tuple[str, ...]
    anchor: LeanAnchor | None


class LeanDialogue(msgspec.Struct, frozen=True, gc=False):
    """One dialogue as evaluation reads it (module docstring)."""

    dialogue_id: str
    split: str
    city: str
    poi_type: str
    difficulty: str
    has_rejection: bool
    kb_hash: str
    anchor: LeanAnchor | None
    candidates: tuple[str, ...]
    review_refs: dict[str, LeanRef]
    turns: tuple[LeanTurn, ...]
    legs: tuple[LeanLeg, ...] = ()

    def recommendation_turns(self) -> list[LeanTurn]:
        """System turns that carry gold labels, in order (``Dialogue.recommendation_turns``)."""
        return [t for t in self.turns if t.role == "system" and t.gold is not None]

    def leg_at(self, turn_index: int) -> LeanLeg | None:
        """The leg turn ``turn_index`` belongs to (``Dialogue.leg_at``)."""
        leg = None
        for candidate in self.legs:
            if candidate.first_turn <= turn_index:
                leg = candidate
        return leg if leg is not None else (self.legs[0] if self.legs else None)

    def poi_type_at(self, turn_index: int) -> str:
        leg = self.leg_at(turn_index)
        return leg.poi_type if leg is not None else self.poi_type

    def candidates_at(self, turn_index: int) -> tuple[str, ...]:
        leg = self.leg_at(turn_index)
        return leg.candidates if leg is not None else self.candidates

    def anchor_at(self, turn_index: int) -> LeanAnchor | None:
        leg = self.leg_at(turn_index)
        return leg.anchor if leg is not None else self.anchor

    def all_candidates(self) -> list[str]:
        """Every closed candidate of the dialogue (all legs' pools, first seen first)."""
        pools = [leg.candidates for leg in self.legs] or [self.candidates]
        return list(dict.fromkeys(p for pool in pools for p in pool))


class Interner:
    """One shared object per distinct id string / id tuple / review ref of a load."""

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._tuples: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._refs: dict[str, LeanRef] = {}

    def string(self, value: str) -> str:
        return self._strings.setdefault(value, value)

    def ids(self, values: Sequence[str]) -> tuple[str, ...]:
        """``values`` as a tuple of interned strings; equal tuples are one object."""
        strings = self._strings
        interned = tuple([strings.setdefault(v, v) for v in values])  # the key holds interned strings only
        return self._tuples.setdefault(interned, interned)

    def ref_table(self, entries: Sequence[Any]) -> dict[str, LeanRef]:
        """``{tag: ref}`` of written ``review_refs`` entries (``tag``, ``review_id``, ``poi_id``), tags
        interned; the loop of :meth:`ref` and :meth:`string` inlined (about 90 entries per dialogue)."""
        setdefault, known = self._strings.setdefault, self._refs
        out: dict[str, LeanRef] = {}
        for entry in entries:
            review_id, poi_id, tag = entry.review_id, entry.poi_id, entry.tag
            found = known.get(review_id)
            if found is None or found.poi_id != poi_id:
                found = self.ref(review_id, poi_id)
            out[setdefault(tag, tag)] = found
        return out

    def ref(self, review_id: str, poi_id: str) -> LeanRef:
        """The shared :class:`LeanRef` of ``(review_id, poi_id)`` (one per review id; a review named with
        another POI gets its own)."""
        found = self._refs.get(review_id)
        if found is None or found.poi_id != poi_id:
            strings = self._strings
            found = LeanRef(strings.setdefault(review_id, review_id), strings.setdefault(poi_id, poi_id))
            self._refs.setdefault(review_id, found)
        return found


def lean_constraint(c: Any) -> LeanConstraint:
    """A :class:`LeanConstraint` from anything with ``kind``, ``value`` and ``label``."""
    return LeanConstraint(c.kind, c.value, c.label)


def lean_gold(gold: Any, interner: Interner) -> LeanGold:
    return LeanGold(
        interner.string(gold.gold_poi),
        interner.ids(gold.multi_ref),
        interner.ids(gold.open_pool),
        tuple([lean_constraint(c) for c in gold.active_constraints]),
    )


def lean_turn(turn: Any, interner: Interner) -> LeanTurn:
    return LeanTurn(
        turn.index,
        turn.role,
        turn.act,
        turn.text,
        interner.ids(turn.rejected),
        lean_gold(turn.gold, interner) if turn.gold is not None else None,
    )


def lean_anchor(anchor: Any) -> LeanAnchor | None:
    return LeanAnchor(anchor.name, anchor.lat, anchor.lon) if anchor is not None else None


def lean_leg(leg: Any, interner: Interner) -> LeanLeg:
    return LeanLeg(leg.poi_type, leg.first_turn, interner.ids(leg.candidates), lean_anchor(leg.anchor))


def lean_dialogue(d: Dialogue | Any, interner: Interner | None = None) -> LeanDialogue:
    """The :class:`LeanDialogue` of a validated dialogue (a pydantic ``Dialogue``, or any object with its
    attributes in the in-memory form: ``review_refs`` a tag → ref mapping, typed constraint values)."""
    if isinstance(d, LeanDialogue):
        return d
    interner = interner or Interner()
    return LeanDialogue(
        dialogue_id=d.dialogue_id,
        split=d.split,
        city=interner.string(d.city),
        poi_type=d.poi_type,
        difficulty=d.difficulty,
        has_rejection=d.has_rejection,
        kb_hash=interner.string(d.kb_hash),
        anchor=lean_anchor(d.anchor),
        candidates=interner.ids(d.candidates),
        review_refs={
            interner.string(tag): interner.ref(r.review_id, r.poi_id) for tag, r in d.review_refs.items()
        },
        turns=tuple([lean_turn(t, interner) for t in d.turns]),
        legs=tuple([lean_leg(leg, interner) for leg in d.legs]),
    )


def gold_model(gold: TurnGold | LeanGold) -> TurnGold:
    """``gold`` as the pydantic ``TurnGold`` that systems are promised."""
    return gold.to_model() if isinstance(gold, LeanGold) else gold


#: The pydantic model each lean struct stands for, and the model fields the lean struct leaves out (every
#: other field is carried under the same name with the same type). ``tests/crs/dataset/test_schema_sync.py``
#: checks both ways, field by field: a field added to a model and not carried must be listed here.
LEAN_OF: dict[str, tuple[type, frozenset[str]]] = {
    "Dialogue": (
        LeanDialogue,
        frozenset({"schema_version", "persona_id", "persona", "features", "realiser", "seed"}),
    ),
    "Turn": (LeanTurn, frozenset({"constraints_added", "recommended", "cited_tags", "quote_spans"})),
    "TurnGold": (LeanGold, frozenset()),
    "Constraint": (LeanConstraint, frozenset()),
    "Anchor": (LeanAnchor, frozenset()),
    "Leg": (LeanLeg, frozenset()),
    "ReviewRef": (LeanRef, frozenset()),
}

#: What the runner, the inputs and the scorer take: a pydantic ``Dialogue`` or its lean record.
AnyDialogue = Dialogue | LeanDialogue
AnyTurn = Turn | LeanTurn
