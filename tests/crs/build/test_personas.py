"""The 47 persona archetypes: validation, error reporting and seeded, prior-weighted sampling."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from groundtrace.crs.build.personas import (
    GENERIC_CONSTRAINTS,
    Persona,
    PersonaFileError,
    bundled_personas,
    constraint_order,
    load_personas,
    sample_persona,
)
from groundtrace.crs.schema import POI_TYPES, Constraint


def test_exactly_47_unique_archetypes_with_the_papers_examples() -> None:
    personas = bundled_personas()
    assert len(personas) == 47
    ids = [p.id for p in personas]
    assert len(set(ids)) == 47
    for wanted in (
        "accessibility_needs",
        "wine_lover",
        "family_with_kids",
        "red_eye_layover",
        "budget_backpacker",
        "business_traveller",
        "food_blogger",
    ):
        assert wanted in ids


def test_every_type_has_personas_and_every_constraint_is_a_valid_constraint() -> None:
    for poi_type in POI_TYPES:
        assert sum(poi_type in p.poi_types for p in bundled_personas()) >= 15
    for p in bundled_personas():
        for pc in p.constraints:
            c = pc.to_constraint("Harbor Hotel")
            assert isinstance(c, Constraint)
            assert "{anchor}" not in c.label


def test_anchor_placeholder_is_filled() -> None:
    red_eye = next(p for p in bundled_personas() if p.id == "red_eye_layover")
    distance = next(pc for pc in red_eye.constraints if pc.kind == "max_distance_km")
    assert distance.to_constraint("Kestrel Inn").label == "close to Kestrel Inn"


def test_bad_file_reports_file_and_line_and_keeps_checking(tmp_path) -> None:
    good = (
        "- id: ok_one\n  description: A perfectly fine persona.\n  poi_types: [hotel]\n  constraints:\n"
        + "".join(f"    - {{kind: amenity, value: parking, label: p{i}}}\n" for i in range(3))
    )
    bad_kind = good.replace("ok_one", "bad_kind").replace("kind: amenity", "kind: teleport", 1)
    dup = good
    path = tmp_path / "p.yaml"
    path.write_text(good + bad_kind + dup, encoding="utf-8")
    with pytest.raises(PersonaFileError) as err:
        load_personas(path, expected=None)
    message = str(err.value)
    assert f"{path}:12: persona #2: constraints.0.kind: Input should be" in message  # its first constraint
    assert f"{path}:15: duplicate persona id 'ok_one'" in message
    path.write_text(good, encoding="utf-8")
    assert [p.id for p in load_personas(path, expected=None)] == ["ok_one"]
    with pytest.raises(PersonaFileError, match="expected 47 personas, found 1"):
        load_personas(path)


def test_constraint_types_must_be_within_poi_types() -> None:
    with pytest.raises(ValueError, match="outside poi_types"):
        Persona.model_validate(
            {
                "id": "x",
                "description": "a traveller here",
                "poi_types": ["hotel"],
                "constraints": [{"kind": "meal", "value": "dinner", "label": "d", "types": ["restaurant"]}]
                * 3,
            }
        )


def test_sample_persona_only_returns_matching_types_and_is_seeded() -> None:
    a = [sample_persona(random.Random(s), "attraction").id for s in range(30)]
    b = [sample_persona(random.Random(s), "attraction").id for s in range(30)]
    assert a == b
    assert all("attraction" in next(p for p in bundled_personas() if p.id == i).poi_types for i in a)


def test_constraint_order_required_first_then_generic_tail() -> None:
    fam = next(p for p in bundled_personas() if p.id == "family_with_kids")
    order = constraint_order(fam, "restaurant", random.Random(3))
    assert order[0].value == "good_for_kids" and order[0].required
    own = fam.constraints_for("restaurant")
    assert {(c.kind, str(c.value)) for c in order[: len(own)]} == {(c.kind, str(c.value)) for c in own}
    tail = order[len(own) :]
    generic = {(c.kind, str(c.value)) for c in GENERIC_CONSTRAINTS["restaurant"]}
    assert tail and all((c.kind, str(c.value)) in generic for c in tail)
    assert not any(c.kind == "category" for c in order)  # hotel/attraction-only entries are filtered out


def test_prior_weights_drive_the_first_optional_pick() -> None:
    # Two optional constraints: amenity (prior 3, weight 1) and price_max (prior 1, weight 2).
    # P(amenity first) = 3·1 / (3·1 + 1·2) = 0.6.
    p = Persona.model_validate(
        {
            "id": "t",
            "description": "a test traveller",
            "poi_types": ["hotel"],
            "priors": {"amenity": 3},
            "constraints": [
                {"kind": "amenity", "value": "parking", "label": "parking"},
                {"kind": "price_max", "value": 2, "label": "cheap", "weight": 2},
                {"kind": "amenity", "value": "wifi", "label": "wifi", "required": True},
            ],
        }
    )
    rng = random.Random(99)
    firsts = Counter(constraint_order(p, "hotel", rng)[1].kind for _ in range(4000))
    assert abs(firsts["amenity"] / 4000 - 0.6) < 0.03
