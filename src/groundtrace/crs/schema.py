"""TRACE-CRS records: POIs, reviews, constraints, turns and dialogues (dataset format v2).

These models are the contract between the knowledge base, the dataset builder, the runner and the
metrics. Files are JSONL, one :class:`Dialogue` per line; ``groundtrace crs validate`` checks them against
the JSON Schema generated from these models plus the KB.

Format v2: one JSON type per field
----------------------------------
Every field of a dataset line has one JSON type across records, so column-typed readers (Hugging Face
``datasets``, pyarrow, pandas) infer one type per column. In memory the models stay convenient; the
conversion happens at the model boundary (validators and serializers):

* ``Constraint.value`` is ``str | int | float | bool`` in memory and written as a string plus
  ``value_type`` (``"str"``, ``"int"``, ``"float"``, ``"bool"``): ``{"kind": "price_max", "value": "2",
  "value_type": "int", "label": "..."}`` (:func:`encode_value` / :func:`decode_value`).
* ``Dialogue.review_refs`` is a ``dict`` tag → :class:`ReviewRef` in memory and written as a list of
  ``{"tag", "review_id", "poi_id"}`` records in tag order; ``Dialogue.features`` is a ``dict`` name → float
  in memory and written as a list of ``{"name", "value"}`` records.

Reading: JSON input (``model_validate_json``) must be in the v2 form; Python input (``model_validate`` of a
``dict``, keyword construction) also takes the in-memory forms, which are the v1 forms — so a v1 line
(``schema_version`` ``"1.0"``) loads through ``model_validate`` and is *migrated on read*: its
``schema_version`` becomes :data:`SCHEMA_VERSION` and it is written back in the v2 form. A major version
above 2 is refused with a clear message.

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

import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

SCHEMA_VERSION = "2.0"
#: The dataset format versions this code reads (1.0 is migrated on read).
READABLE_VERSIONS: tuple[str, ...] = ("1.0", "2.0")

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


ConstraintValue = str | int | float | bool
ValueType = Literal["str", "int", "float", "bool"]
VALUE_TYPES: tuple[str, ...] = ("str", "int", "float", "bool")
#: What a written ``value`` looks like for each ``value_type`` (``str``: any string).
VALUE_PATTERNS: dict[str, str] = {
    "int": r"^-?[0-9]+$",
    "float": r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$",
    "bool": r"^(true|false)$",
}
_VALUE_RES = {t: re.compile(p) for t, p in VALUE_PATTERNS.items()}


def encode_value(value: ConstraintValue) -> tuple[str, str]:
    """``(text, value_type)`` of a constraint value: ints in decimal, floats by ``repr`` (shortest
    round-trip form, e.g. ``"4.0"``), booleans as ``"true"``/``"false"``."""
    if isinstance(value, bool):
        return ("true" if value else "false"), "bool"
    if isinstance(value, int):
        return str(value), "int"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"constraint value {value!r} is not finite")
        return repr(value), "float"
    if isinstance(value, str):
        return value, "str"
    raise TypeError(f"constraint value must be str, int, float or bool, got {type(value).__name__}")


def decode_value(text: object, value_type: object) -> ConstraintValue:
    """Inverse of :func:`encode_value`; ``ValueError`` when ``text`` is not of ``value_type``."""
    if not isinstance(text, str):  # ValueError, not TypeError: pydantic reports only ValueErrors
        raise ValueError(f"a written constraint value is a string, got {type(text).__name__}")  # noqa: TRY004
    if value_type == "str":
        return text
    if not isinstance(value_type, str) or value_type not in _VALUE_RES:
        raise ValueError(f"value_type must be one of {', '.join(VALUE_TYPES)}, got {value_type!r}")
    if not _VALUE_RES[value_type].match(text):
        raise ValueError(f"{text!r} is not a {value_type} value")
    if value_type == "bool":
        return text == "true"
    return int(text) if value_type == "int" else float(text)


def _constraint_wire_schema(schema: dict[str, Any]) -> None:
    """The JSON Schema of a written constraint: ``value`` a string, ``value_type`` naming its type."""
    props = schema["properties"]
    props["value"] = {
        "type": "string",
        "title": "Value",
        "description": "The value as text; its type is value_type.",
    }
    props["value_type"] = {"enum": list(VALUE_TYPES), "type": "string", "title": "Value Type"}
    schema["properties"] = {k: props[k] for k in ("kind", "value", "value_type", "label")}
    schema["required"] = ["kind", "value", "value_type", "label"]
    schema["allOf"] = [
        {
            "if": {"properties": {"value_type": {"const": t}}},
            "then": {"properties": {"value": {"pattern": p}}},
        }
        for t, p in VALUE_PATTERNS.items()
    ]


class Constraint(_Record):
    """One user preference a POI can satisfy or violate (see :data:`ConstraintKind`).

    ``value`` is typed in memory; a file stores it as a string plus ``value_type`` (module docstring).
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra=_constraint_wire_schema)

    kind: ConstraintKind
    value: str | int | float | bool
    label: str = Field(description="How the user phrased it, e.g. 'somewhere quiet'.")

    @model_validator(mode="before")
    @classmethod
    def _read_value(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and "value_type" in data:
            data = dict(data)
            data["value"] = decode_value(data.get("value"), data.pop("value_type"))
        elif isinstance(data, dict) and info.mode == "json":
            raise ValueError(
                "value_type is missing (format v2 writes a constraint value as text + value_type)"
            )
        return data

    @model_serializer(mode="wrap")
    def _write_value(self, handler: Any) -> dict[str, Any]:
        out = handler(self)
        text, value_type = encode_value(self.value)
        return {"kind": out["kind"], "value": text, "value_type": value_type, "label": out["label"]}


class Anchor(_Record):
    """The place distances are measured from (hotel, conference venue, station...)."""

    name: str
    lat: float = Field(ge=-90, le=90, allow_inf_nan=False)
    lon: float = Field(ge=-180, le=180, allow_inf_nan=False)


class ReviewRef(_Record):
    """What a dialogue's ``[Rn]`` tag points to."""

    review_id: str
    poi_id: str


class TaggedReviewRef(_Record):
    """A ``review_refs`` entry as written: the tag and what it points to."""

    tag: str
    review_id: str
    poi_id: str


class Feature(_Record):
    """A ``features`` entry as written: a measured feature's name and value."""

    name: str
    value: float = Field(allow_inf_nan=False)


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


def _record_list_schema(model: type[BaseModel], description: str) -> WithJsonSchema:
    """The JSON Schema of a mapping written as a list of ``model`` records."""
    item = model.model_json_schema()
    item.pop("title", None)
    return WithJsonSchema({"type": "array", "items": item, "description": description})


ReviewRefs = Annotated[
    dict[str, ReviewRef],
    _record_list_schema(TaggedReviewRef, "Tag 'Rn' -> review, in tag order; tags are distinct."),
]
Features = Annotated[
    dict[str, float],
    _record_list_schema(Feature, "Measured features behind the tier; names are distinct."),
]


def _records_to_dict(
    value: Any, info: ValidationInfo, key: str, field: str, unwrap: str | None = None
) -> Any:
    """A written list of records → ``{record[key]: rest of the record}`` (``rest[unwrap]`` when given).

    The in-memory ``dict`` form is taken from Python input only: JSON input must be in the v2 form.
    """
    if isinstance(value, list):
        out: dict[str, Any] = {}
        for item in value:
            if not isinstance(item, dict) or not isinstance(item.get(key), str):
                raise ValueError(f"each {field} entry is an object with a string {key!r}")  # noqa: TRY004
            rest = {k: v for k, v in item.items() if k != key}
            if unwrap is not None:
                if set(rest) != {unwrap}:
                    raise ValueError(f"a {field} entry has exactly the keys {key!r} and {unwrap!r}")
                rest = rest[unwrap]
            if item[key] in out:
                raise ValueError(f"{field}: {key} {item[key]!r} appears twice")
            out[item[key]] = rest
        return out
    if isinstance(value, dict) and info.mode == "json":
        raise ValueError(f"{field} is written as a list of records in format v2, not an object")
    return value


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
    features: Features = Field(default_factory=dict)
    has_rejection: bool = False
    candidates: list[str] = Field(description="The closed candidate pool (8 POI ids).")
    review_refs: ReviewRefs = Field(default_factory=dict)
    turns: list[Turn]
    kb_hash: str = ""
    realiser: str = "template"
    seed: int | None = None
    legs: list[Leg] = Field(
        default_factory=list,
        description="Itinerary dialogues only: one leg per POI type asked for, in turn order (the first "
        "starts at turn 0); empty for a single-type dialogue.",
    )

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Refuse a format this code cannot read; a v1 line is read as the current version."""
        if isinstance(data, dict) and "schema_version" in data:
            version = data["schema_version"]
            if isinstance(version, str) and version != SCHEMA_VERSION:
                major = version.partition(".")[0]
                if version not in READABLE_VERSIONS and major != SCHEMA_VERSION.partition(".")[0]:
                    raise ValueError(
                        f"dataset format {version} is not supported (this groundtrace reads "
                        f"{', '.join(READABLE_VERSIONS)}): upgrade groundtrace"
                    )
                if major == "1":
                    data = {**data, "schema_version": SCHEMA_VERSION}
        return data

    @field_validator("review_refs", mode="before")
    @classmethod
    def _read_refs(cls, value: Any, info: ValidationInfo) -> Any:
        return _records_to_dict(value, info, "tag", "review_refs")

    @field_validator("features", mode="before")
    @classmethod
    def _read_features(cls, value: Any, info: ValidationInfo) -> Any:
        return _records_to_dict(value, info, "name", "features", unwrap="value")

    @field_serializer("review_refs")
    def _write_refs(self, refs: dict[str, ReviewRef]) -> list[dict[str, str]]:
        return [{"tag": tag, "review_id": ref.review_id, "poi_id": ref.poi_id} for tag, ref in refs.items()]

    @field_serializer("features")
    def _write_features(self, features: dict[str, float]) -> list[dict[str, Any]]:
        return [{"name": name, "value": value} for name, value in features.items()]

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
