"""TRACE-CRS records: POIs, reviews, constraints, turns and dialogues (dataset format v1).

These models are the contract between the knowledge base, the dataset builder, the runner and the
metrics. Files are JSONL, one :class:`Dialogue` per line; ``groundtrace crs validate`` checks them against
the JSON Schema generated from these models plus the KB.

Conventions
-----------
* A POI's ``attributes`` use the canonical keys of :data:`ATTRIBUTE_KEYS` (parsed from Yelp's raw
  attribute strings, or generated for the demo city). Unknown values are simply absent.
* Review tags: each dialogue numbers the reviews of its closed candidate pool ``R1, R2, ...`` in
  ``Dialogue.review_refs``; system turns cite them as ``[Rn]``. For the open setting the runner extends
  the numbering deterministically (see ``groundtrace.crs.kb.knowledge_base.open_review_refs``).
* Recommendation turns (system turns whose act is ``recommend`` or ``compare``) carry their gold labels
  in ``Turn.gold``: the gold POI, the multi-reference pool and the open-set pool.
* Itinerary dialogues span several POI types (a hotel, then dinner near it, then a sight): their
  ``Dialogue.legs`` say, per leg, from which turn on it applies, its POI type, its own closed pool of
  candidates and the anchor its distance constraints use (the previous leg's pick). Read the values of a
  turn with :meth:`Dialogue.poi_type_at`, :meth:`Dialogue.candidates_at` and :meth:`Dialogue.anchor_at`;
  for a dialogue without legs they are ``poi_type``, ``candidates`` and ``anchor``. An itinerary's
  dialogue-level ``poi_type``/``candidates``/``anchor`` are those of its first leg, and its
  ``review_refs`` number the reviews of every leg's pool (leg by leg).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1.0"

PoiType = Literal["restaurant", "hotel", "attraction"]
POI_TYPES: tuple[str, ...] = ("restaurant", "hotel", "attraction")

NOISE_LEVELS: tuple[str, ...] = ("quiet", "average", "loud", "very_loud")

#: Canonical POI attribute keys and their value types.
ATTRIBUTE_KEYS: dict[str, str] = {
    "noise": "one of NOISE_LEVELS",
    "wifi": "'free' | 'paid' | 'no'",
    "alcohol": "'full_bar' | 'beer_and_wine' | 'none'",
    "attire": "'casual' | 'dressy' | 'formal'",
    "ambience": "list of str: romantic, intimate, classy, hipster, divey, touristy, trendy, upscale, casual",
    "good_for_meal": "list of str: breakfast, brunch, lunch, dinner, latenight, dessert",
    "wheelchair_accessible": "bool",
    "good_for_kids": "bool",
    "good_for_groups": "bool",
    "outdoor_seating": "bool",
    "takes_reservations": "bool",
    "dogs_allowed": "bool",
    "parking": "bool (any parking: garage, street, lot, valet, validated)",
    "bike_parking": "bool",
    "has_tv": "bool",
    "happy_hour": "bool",
    "delivery": "bool",
    "takeout": "bool",
    "accepts_credit_cards": "bool",
    "by_appointment_only": "bool",
}

ConstraintKind = Literal[
    "cuisine",  # value: category label that must appear in POI.categories (case-insensitive)
    "category",  # same test as cuisine, for hotels/attractions (e.g. "Museums")
    "price_max",  # value: int 1-4; POI.price_level <= value
    "price_min",  # value: int 1-4; POI.price_level >= value
    "noise_max",  # value: a NOISE_LEVELS entry; POI noise at most this loud
    "ambience",  # value: an ambience label that must be in attributes["ambience"]
    "amenity",  # value: a boolean attribute key that must be True (wifi: value "wifi" means wifi == "free")
    "meal",  # value: a good_for_meal label
    "alcohol",  # value: "any" (full_bar or beer_and_wine) or "full_bar"
    "min_stars",  # value: float; POI.stars >= value
    "max_distance_km",  # value: float; haversine(anchor, POI) <= value
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class POI(_Record):
    """A point of interest (restaurant, hotel or attraction)."""

    poi_id: str
    name: str
    city: str
    state: str = ""
    poi_type: PoiType
    lat: float = Field(ge=-90, le=90, allow_inf_nan=False, description="Latitude in degrees, [-90, 90].")
    lon: float = Field(ge=-180, le=180, allow_inf_nan=False, description="Longitude in degrees.")
    stars: float = Field(ge=0, le=5)
    review_count: int = Field(ge=0)
    price_level: int | None = Field(default=None, ge=1, le=4)
    categories: list[str] = Field(default_factory=list)
    attributes: dict[str, Any] = Field(default_factory=dict)
    address: str = ""


class Review(_Record):
    """A review of a POI; ``text`` is the verbatim review body (may be a placeholder in a redacted
    release)."""

    review_id: str
    poi_id: str
    stars: float = Field(ge=0, le=5)
    text: str
    date: str | None = None


class Constraint(_Record):
    """One user preference a POI can satisfy or violate (see :data:`ConstraintKind`)."""

    kind: ConstraintKind
    value: str | int | float | bool
    label: str = Field(description="How the user phrased it, e.g. 'somewhere quiet'.")


class Anchor(_Record):
    """The place distances are measured from (hotel, conference venue, station...)."""

    name: str
    lat: float = Field(ge=-90, le=90, allow_inf_nan=False)
    lon: float = Field(ge=-180, le=180, allow_inf_nan=False)


class ReviewRef(_Record):
    """What a dialogue's ``[Rn]`` tag points to."""

    review_id: str
    poi_id: str


class QuoteSpan(_Record):
    """Where a quoted snippet of a turn sits in its review: used to redact and hydrate releases.

    ``start``/``end`` index the turn text; ``review_start``/``review_end`` index the review text.
    """

    tag: str
    review_id: str
    start: int
    end: int
    review_start: int
    review_end: int


class TurnGold(_Record):
    """Gold labels of a recommendation turn."""

    gold_poi: str
    multi_ref: list[str] = Field(
        default_factory=list, description="Closed-pool POIs that also satisfy the turn."
    )
    open_pool: list[str] = Field(
        default_factory=list, description="50-100 same-city same-type POI ids (gold included)."
    )
    active_constraints: list[Constraint] = Field(default_factory=list)


UserAct = Literal[
    "request", "provide_preference", "reject_and_refine", "ask_comparison", "ask_detail", "accept"
]
SystemAct = Literal["clarify", "recommend", "compare", "explain", "close"]


class Turn(_Record):
    """One dialogue turn. Users and systems strictly alternate, starting with the user."""

    index: int = Field(ge=0)
    role: Literal["user", "system"]
    act: str = Field(description="A UserAct for user turns, a SystemAct for system turns.")
    text: str
    # user turns
    constraints_added: list[Constraint] = Field(default_factory=list)
    rejected: list[str] = Field(default_factory=list, description="POI ids the user rejects in this turn.")
    # system turns
    recommended: list[str] = Field(default_factory=list, description="POI ids recommended, main one first.")
    cited_tags: list[str] = Field(
        default_factory=list, description="Distinct [Rn] tags used in text, in order."
    )
    quote_spans: list[QuoteSpan] = Field(default_factory=list)
    gold: TurnGold | None = None


class Leg(_Record):
    """One leg of an itinerary dialogue: from turn ``first_turn`` on (until the next leg's first turn)
    the user looks for a ``poi_type`` POI among ``candidates``; distances are measured from ``anchor``."""

    poi_type: PoiType
    first_turn: int = Field(ge=0, description="Index of the leg's first turn (a user request).")
    candidates: list[str] = Field(description="The leg's closed candidate pool (8 POI ids).")
    anchor: Anchor | None = Field(
        default=None, description="Where the leg's distances are measured from (the previous leg's pick)."
    )


class Dialogue(_Record):
    """One TRACE-CRS dialogue."""

    schema_version: str = SCHEMA_VERSION
    dialogue_id: str
    split: Literal["train", "validation", "test"] = "train"
    city: str
    poi_type: PoiType
    persona_id: str
    persona: str = Field(description="One-line persona description.")
    anchor: Anchor | None = None
    difficulty: Literal["Easy", "Medium", "Hard", "Expert"] = "Easy"
    features: dict[str, float] = Field(default_factory=dict, description="Measured features behind the tier.")
    has_rejection: bool = False
    candidates: list[str] = Field(description="The closed candidate pool (8 POI ids).")
    review_refs: dict[str, ReviewRef] = Field(default_factory=dict, description="Tag 'Rn' -> review.")
    turns: list[Turn]
    kb_hash: str = ""
    realiser: str = "template"
    seed: int | None = None
    legs: list[Leg] = Field(
        default_factory=list,
        description="Itinerary dialogues only: one leg per POI type asked for, in turn order (the first "
        "starts at turn 0); empty for a single-type dialogue.",
    )

    def recommendation_turns(self) -> list[Turn]:
        """System turns that carry gold labels, in order."""
        return [t for t in self.turns if t.role == "system" and t.gold is not None]

    def leg_at(self, turn_index: int) -> Leg | None:
        """The leg turn ``turn_index`` belongs to (the last leg starting at or before it); None without
        legs."""
        leg = None
        for candidate in self.legs:
            if candidate.first_turn <= turn_index:
                leg = candidate
        return leg if leg is not None else (self.legs[0] if self.legs else None)

    def poi_type_at(self, turn_index: int) -> str:
        """The POI type asked for at turn ``turn_index``."""
        leg = self.leg_at(turn_index)
        return leg.poi_type if leg is not None else self.poi_type

    def candidates_at(self, turn_index: int) -> list[str]:
        """The closed candidate pool of turn ``turn_index``."""
        leg = self.leg_at(turn_index)
        return leg.candidates if leg is not None else self.candidates

    def anchor_at(self, turn_index: int) -> Anchor | None:
        """The anchor distances are measured from at turn ``turn_index``."""
        leg = self.leg_at(turn_index)
        return leg.anchor if leg is not None else self.anchor

    def all_candidates(self) -> list[str]:
        """Every closed candidate of the dialogue (all legs' pools, first seen first)."""
        pools = [leg.candidates for leg in self.legs] or [self.candidates]
        return list(dict.fromkeys(p for pool in pools for p in pool))
