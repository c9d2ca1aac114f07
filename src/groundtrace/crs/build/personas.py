"""Stage 1 — persona archetypes: loading, validation and seeded sampling.

The 47 archetypes live in ``crs/data/personas.yaml`` (see its header for the fields). Sampling:

* ``sample_persona(rng, poi_type)`` draws uniformly among archetypes that ask about ``poi_type``.
* ``constraint_order(persona, poi_type, rng)`` returns the persona's typical constraints for that type in
  the order the planner should try them: required ones first, then the optional ones by a weighted
  draw without replacement, P(next = c) ∝ priors[c.kind] × c.weight (priors default 1.0). Then
  :data:`GENERIC_CONSTRAINTS` of that type (shuffled) as a fallback tail, so the planner always has
  material for refinements.
"""

from __future__ import annotations

import random
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from groundtrace.core.files.validation import validation_message
from groundtrace.core.files.yaml_loader import YamlError, parse_yaml, read_yaml
from groundtrace.crs.schema import Constraint, ConstraintKind, PoiType

N_ARCHETYPES = 47


class PersonaConstraint(BaseModel):
    """A typical constraint of an archetype."""

    model_config = ConfigDict(extra="forbid")

    kind: ConstraintKind
    value: str | int | float | bool
    label: str
    weight: float = Field(default=1.0, gt=0)
    required: bool = False
    types: list[PoiType] | None = None

    def to_constraint(self, anchor_name: str | None = None) -> Constraint:
        label = self.label.replace("{anchor}", anchor_name or "the centre")
        return Constraint(kind=self.kind, value=self.value, label=label)


class Persona(BaseModel):
    """One traveller archetype."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=10)
    poi_types: list[PoiType] = Field(min_length=1)
    priors: dict[ConstraintKind, float] = Field(default_factory=dict)
    constraints: list[PersonaConstraint] = Field(min_length=3)

    @field_validator("priors")
    @classmethod
    def _positive(cls, priors: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in priors.items() if v <= 0}
        if bad:
            raise ValueError(f"prior weights must be > 0: {bad}")
        return priors

    @model_validator(mode="after")
    def _types_subset(self) -> Persona:
        for c in self.constraints:
            if c.types and not set(c.types) <= set(self.poi_types):
                raise ValueError(
                    f"constraint {c.label!r} applies to {c.types}, outside poi_types {self.poi_types}"
                )
        return self

    def constraints_for(self, poi_type: str) -> list[PersonaConstraint]:
        """Typical constraints that apply to ``poi_type``."""
        return [c for c in self.constraints if c.types is None or poi_type in c.types]


class PersonaFileError(ValueError):
    """The personas file is malformed; the message names file:line of each bad entry."""


def load_personas(path: str | Path | None = None, *, expected: int | None = N_ARCHETYPES) -> list[Persona]:
    """Load and validate archetypes (the bundled file by default).

    Every entry is validated; all errors are collected and raised together as :class:`PersonaFileError`
    naming ``file:line`` per bad entry. Duplicate ids are errors; so is a count differing from
    ``expected`` (pass ``None`` to accept any count, e.g. for a user's own file).
    """
    try:
        if path is None:
            source = resources.files("groundtrace.crs.data").joinpath("personas.yaml")
            doc = parse_yaml(source.read_text(encoding="utf-8"), "groundtrace/crs/data/personas.yaml")
        else:
            doc = read_yaml(path)
    except YamlError as exc:
        raise PersonaFileError(str(exc)) from None
    raw, name = doc.data, doc.name
    if not isinstance(raw, list):
        raise PersonaFileError(f"{name}:1: expected a list of personas, got {type(raw).__name__}")
    personas: list[Persona] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        try:
            persona = Persona.model_validate(entry)
        except ValidationError as exc:
            line = doc.line_of((i, *exc.errors()[0]["loc"]))
            errors.append(f"{name}:{line}: persona #{i + 1}: {validation_message(exc, model=Persona)}")
            continue
        if persona.id in seen:
            errors.append(f"{name}:{doc.line_of((i, 'id'))}: duplicate persona id {persona.id!r}")
            continue
        seen.add(persona.id)
        personas.append(persona)
    if expected is not None and len(raw) != expected:
        errors.append(f"{name}:1: expected {expected} personas, found {len(raw)}")
    if errors:
        raise PersonaFileError("\n".join(errors))
    return personas


@lru_cache(maxsize=1)
def bundled_personas() -> tuple[Persona, ...]:
    """The 47 bundled archetypes (cached)."""
    return tuple(load_personas())


def sample_persona(
    rng: random.Random, poi_type: str, personas: tuple[Persona, ...] | list[Persona] | None = None
) -> Persona:
    """Uniform draw among archetypes whose ``poi_types`` include ``poi_type``."""
    pool = [p for p in (personas or bundled_personas()) if poi_type in p.poi_types]
    if not pool:
        raise ValueError(f"no persona asks about {poi_type!r}")
    return rng.choice(pool)


#: Fallback constraints per POI type (used after the persona's own, e.g. for refinements).
GENERIC_CONSTRAINTS: dict[str, tuple[PersonaConstraint, ...]] = {
    "restaurant": (
        PersonaConstraint(kind="noise_max", value="quiet", label="somewhere quieter"),
        PersonaConstraint(kind="amenity", value="outdoor_seating", label="with outdoor seating"),
        PersonaConstraint(kind="price_max", value=2, label="something cheaper ($$ at most)"),
        PersonaConstraint(kind="amenity", value="takes_reservations", label="where we can book a table"),
        PersonaConstraint(kind="alcohol", value="any", label="that serves wine or beer"),
        PersonaConstraint(kind="amenity", value="good_for_kids", label="that is fine with kids"),
        PersonaConstraint(
            kind="amenity", value="wheelchair_accessible", label="that is wheelchair accessible"
        ),
        PersonaConstraint(kind="min_stars", value=4.0, label="with better reviews"),
        PersonaConstraint(kind="amenity", value="parking", label="with parking"),
        PersonaConstraint(kind="cuisine", value="Italian", label="Italian food"),
        PersonaConstraint(kind="cuisine", value="Mexican", label="Mexican food"),
        PersonaConstraint(kind="cuisine", value="Thai", label="Thai food"),
        PersonaConstraint(kind="cuisine", value="Mediterranean", label="Mediterranean food"),
        PersonaConstraint(kind="cuisine", value="Japanese", label="Japanese food"),
        PersonaConstraint(kind="cuisine", value="Seafood", label="seafood"),
    ),
    "hotel": (
        PersonaConstraint(kind="noise_max", value="quiet", label="somewhere quieter"),
        PersonaConstraint(kind="amenity", value="wifi", label="with free wifi"),
        PersonaConstraint(kind="price_max", value=2, label="something cheaper ($$ at most)"),
        PersonaConstraint(kind="amenity", value="parking", label="with parking"),
        PersonaConstraint(kind="amenity", value="dogs_allowed", label="that takes dogs"),
        PersonaConstraint(
            kind="amenity", value="wheelchair_accessible", label="that is wheelchair accessible"
        ),
        PersonaConstraint(kind="min_stars", value=4.0, label="with better reviews"),
    ),
    "attraction": (
        PersonaConstraint(kind="amenity", value="good_for_kids", label="that the kids will enjoy"),
        PersonaConstraint(
            kind="amenity", value="wheelchair_accessible", label="that is wheelchair accessible"
        ),
        PersonaConstraint(kind="amenity", value="parking", label="with parking"),
        PersonaConstraint(kind="price_max", value=1, label="something cheap or free ($)"),
        PersonaConstraint(kind="noise_max", value="quiet", label="somewhere less crowded and quieter"),
        PersonaConstraint(kind="amenity", value="dogs_allowed", label="where dogs are allowed"),
        PersonaConstraint(kind="min_stars", value=4.0, label="with better reviews"),
    ),
}


def constraint_order(persona: Persona, poi_type: str, rng: random.Random) -> list[PersonaConstraint]:
    """Required constraints, then a prior-weighted draw of the optional ones, then shuffled generics."""
    own = persona.constraints_for(poi_type)
    required = [c for c in own if c.required]
    optional = [c for c in own if not c.required]
    ordered = list(required)
    while optional:
        weights = [persona.priors.get(c.kind, 1.0) * c.weight for c in optional]
        pick = rng.choices(range(len(optional)), weights=weights)[0]
        ordered.append(optional.pop(pick))
    generic = list(GENERIC_CONSTRAINTS.get(poi_type, ()))
    rng.shuffle(generic)
    own_keys = {(c.kind, c.value) for c in ordered}
    ordered.extend(c for c in generic if (c.kind, c.value) not in own_keys)
    return ordered
