"""Dataset format v2: one JSON type per field, typed constraint values, v1 files migrated on read."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from groundtrace.crs.dataset.files import (
    dialogue_json_schema,
    migrate_dataset,
    read_dataset,
    read_dialogues,
)
from groundtrace.crs.dataset.validate import validate_path
from groundtrace.crs.schema import (
    SCHEMA_VERSION,
    VALUE_PATTERNS,
    Constraint,
    ConstraintValue,
    Dialogue,
    decode_value,
    encode_value,
)
from tests.conftest import FIXTURES

V1 = FIXTURES / "crs_io" / "v1"
V2 = FIXTURES / "crs_io" / "dataset"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


def column_types(values: list[Any]) -> dict[str, set[str]]:
    """JSON types seen at each path (``a.b[].c``) over ``values``; what a column-typed reader infers from."""
    types: dict[str, set[str]] = defaultdict(set)

    def walk(value: Any, path: str) -> None:
        types[path].add(json_type(value))
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for item in value:
                walk(item, f"{path}[]")

    for value in values:
        walk(value, "")
    return types


def unstable(types: dict[str, set[str]]) -> dict[str, set[str]]:
    """Paths with more than one non-null JSON type."""
    return {path: t for path, t in types.items() if len(t - {"null"}) > 1}


@pytest.fixture(scope="module")
def built_lines(demo_release: tuple[Path, Path, Path]) -> list[Any]:
    """Every line of the shared 40-dialogue demo build (tests/crs/dataset/conftest.py), parsed."""
    out = demo_release[0]
    return [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]


@pytest.mark.slow
def test_every_field_of_a_built_dataset_has_one_json_type(built_lines: list[Any]) -> None:
    types = column_types(built_lines)
    assert unstable(types) == {}
    # the fields that had several types (or data-dependent keys) in format v1
    assert types[".turns[].constraints_added[].value"] == {"string"}
    assert types[".turns[].gold.active_constraints[].value_type"] == {"string"}
    assert types[".review_refs"] == {"array"} and types[".review_refs[].tag"] == {"string"}
    assert types[".features"] == {"array"} and types[".features[].value"] == {"number"}
    assert not [p for p in types if p.startswith(".review_refs.R")]  # no column per tag
    assert types[".legs"] == {"array"}  # written even when empty: every record has every field
    kinds = {c["value_type"] for line in built_lines for t in line["turns"] for c in t["constraints_added"]}
    assert {"str", "int", "float"} <= kinds  # the demo asks for cuisines, price levels and stars


def test_v1_lines_had_unstable_types_and_a_key_per_tag() -> None:
    """What the format change fixes, shown on the v1 fixture (the same dialogues as the v2 fixture)."""
    lines = [json.loads(x) for f in sorted(V1.glob("*.jsonl")) for x in f.read_text().splitlines()]
    types = column_types(lines)
    assert types[".turns[].constraints_added[].value"] == {"string", "integer"}
    assert ".review_refs.R1.review_id" in types


@pytest.mark.slow
def test_the_json_schema_describes_the_written_lines(built_lines: list[Any]) -> None:
    validator = Draft202012Validator(dialogue_json_schema())
    assert [list(validator.iter_errors(line)) for line in built_lines[:5]] == [[]] * 5
    v1 = json.loads((V1 / "train.jsonl").read_text().splitlines()[0])
    messages = {e.json_path for e in validator.iter_errors(v1)}
    assert "$.review_refs" in messages and "$.features" in messages
    schema = dialogue_json_schema()
    constraint = schema["$defs"]["Constraint"]
    assert constraint["properties"]["value"]["type"] == "string"
    assert constraint["required"] == ["kind", "value", "value_type", "label"]
    assert schema["properties"]["review_refs"]["type"] == "array"


def test_a_v1_dataset_is_migrated_on_read_and_by_crs_migrate(tmp_path: Path) -> None:
    old, new = read_dataset(V1), read_dataset(V2)
    assert old.errors == [] and old.all_dialogues() == new.all_dialogues()
    assert {d.schema_version for d in old.all_dialogues()} == {SCHEMA_VERSION}
    report = migrate_dataset(V1, tmp_path / "m")
    assert report.files == {"train.jsonl": 2, "validation.jsonl": 1} and report.old_versions == {"1.0": 3}
    for name in ("train.jsonl", "validation.jsonl"):
        assert (tmp_path / "m" / name).read_bytes() == (V2 / name).read_bytes()
    assert json.loads((tmp_path / "m" / "manifest.json").read_text())["schema_version"] == SCHEMA_VERSION


def test_validate_checks_a_v1_file_as_migrated_with_one_notice_per_file() -> None:
    old = validate_path(V1)
    notices = [p for p in old if p.code == "GT-F006"]
    assert [(Path(p.file).name, p.severity) for p in notices] == [
        ("train.jsonl", "warning"),
        ("validation.jsonl", "warning"),
    ]
    assert "2 line(s) in dataset format 1.0" in notices[0].message
    assert "crs migrate" in notices[0].message
    # apart from the notices, a v1 file gets exactly the findings of its migrated v2 twin
    same = [(Path(p.file).name, p.line, p.code) for p in old if p.code != "GT-F006"]
    assert same == [(Path(p.file).name, p.line, p.code) for p in validate_path(V2)]


def test_json_input_must_be_in_the_v2_form() -> None:
    line = (V2 / "train.jsonl").read_text().splitlines()[0]
    assert Dialogue.model_validate_json(line, strict=True).review_refs["R1"].review_id == "rv11"
    v1_line = (V1 / "train.jsonl").read_text().splitlines()[0]
    with pytest.raises(ValidationError, match="list of records"):
        Dialogue.model_validate_json(v1_line)
    # Python input also takes the in-memory forms (how the builder constructs dialogues)
    assert Dialogue.model_validate(json.loads(v1_line)) == Dialogue.model_validate_json(line)


def test_a_newer_major_version_is_refused_clearly(tmp_path: Path) -> None:
    obj = json.loads((V2 / "train.jsonl").read_text().splitlines()[0])
    obj["schema_version"] = "3.0"
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(obj) + "\n")
    reader = read_dialogues(path)
    assert list(reader) == []
    assert "dataset format 3.0 is not supported" in reader.errors[0].message
    assert "upgrade groundtrace" in reader.errors[0].message


def test_records_with_repeated_keys_are_refused() -> None:
    obj = json.loads((V2 / "train.jsonl").read_text().splitlines()[0])
    obj["review_refs"].append(dict(obj["review_refs"][0]))
    with pytest.raises(ValidationError, match="tag 'R1' appears twice"):
        Dialogue.model_validate(obj)
    obj = json.loads((V2 / "train.jsonl").read_text().splitlines()[0])
    obj["features"][0]["extra"] = 1
    with pytest.raises(ValidationError, match="exactly the keys 'name' and 'value'"):
        Dialogue.model_validate(obj)


@pytest.mark.parametrize(
    ("value", "text", "value_type"),
    [
        (2, "2", "int"),
        (4.0, "4.0", "float"),
        (0.5, "0.5", "float"),
        (True, "true", "bool"),
        ("2", "2", "str"),
    ],
)
def test_constraint_values_are_written_as_text_and_type(value: Any, text: str, value_type: str) -> None:
    c = Constraint(kind="price_max", value=value, label="x")
    assert json.loads(c.model_dump_json()) == {
        "kind": "price_max",
        "value": text,
        "value_type": value_type,
        "label": "x",
    }
    back = Constraint.model_validate_json(c.model_dump_json(), strict=True)
    assert back.value == value and type(back.value) is type(value)


@pytest.mark.parametrize(
    ("text", "value_type"), [("2.5", "int"), ("yes", "bool"), ("nan", "float"), ("1", "list"), (2, "int")]
)
def test_a_value_that_is_not_of_its_type_is_refused(text: Any, value_type: str) -> None:
    with pytest.raises(ValueError):
        decode_value(text, value_type)
    raw = json.dumps({"kind": "price_max", "value": text, "value_type": value_type, "label": "x"})
    with pytest.raises(ValidationError):
        Constraint.model_validate_json(raw)
    # the JSON Schema refuses the same record (strict reading and the schema agree)
    schema = dialogue_json_schema()
    validator = Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/Constraint"})
    assert list(validator.iter_errors(json.loads(raw)))


@given(
    st.one_of(
        st.text(),
        st.integers(),
        st.booleans(),
        st.floats(allow_nan=False, allow_infinity=False),
    )
)
def test_encode_decode_round_trips(value: ConstraintValue) -> None:
    text, value_type = encode_value(value)
    back = decode_value(text, value_type)
    assert back == value and type(back) is type(value)
    pattern = VALUE_PATTERNS.get(value_type)
    assert pattern is None or Draft202012Validator({"type": "string", "pattern": pattern}).is_valid(text)
