"""Output schemas: strict rewriting, pydantic and raw JSON Schema validation, wire names."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from groundtrace.core.llm.schema import (
    PydanticSchema,
    RawJsonSchema,
    SchemaValidationFailure,
    as_output_schema,
    strict_json_schema,
)


class Inner(BaseModel):
    unit: str = "g"


class Outer(BaseModel):
    value: float
    default: int = 3  # a property literally named "default" must survive the rewrite
    inner: Inner | None = None
    tags: list[str] = Field(default_factory=list)


def test_strict_rewrite_closes_every_object_and_requires_all_properties() -> None:
    strict = strict_json_schema(Outer.model_json_schema())
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["value", "default", "inner", "tags"]
    assert "default" in strict["properties"]  # the field, not the keyword
    assert all("default" not in sub for sub in strict["properties"].values())
    inner = strict["$defs"]["Inner"]
    assert inner["additionalProperties"] is False and inner["required"] == ["unit"]
    assert "default" not in inner["properties"]["unit"]


def test_strict_rewrite_keeps_data_keywords_and_does_not_mutate_input() -> None:
    schema = {
        "type": "object",
        "properties": {"kind": {"enum": [{"default": 1}], "default": {"default": 1}}},
    }
    before = repr(schema)
    strict = strict_json_schema(schema)
    assert strict["properties"]["kind"] == {"enum": [{"default": 1}]}
    assert repr(schema) == before


def test_pydantic_schema_validates_and_reports() -> None:
    schema = PydanticSchema(Outer)
    assert schema.name == "Outer"
    assert schema.validate({"value": 2.5}).value == 2.5
    with pytest.raises(SchemaValidationFailure, match="value"):
        schema.validate({"default": 1})


def test_raw_json_schema_validates_and_lists_paths() -> None:
    schema = RawJsonSchema(
        {
            "title": "Colour pick!",
            "type": "object",
            "properties": {"colour": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["colour"],
        }
    )
    assert schema.name == "Colour_pick"
    assert schema.validate({"colour": "red"}) == {"colour": "red"}
    with pytest.raises(SchemaValidationFailure) as info:
        schema.validate({"n": -1})
    message = str(info.value)
    assert "2 validation error(s)" in message and "(root): 'colour' is a required property" in message
    assert "n: -1 is less than the minimum of 0" in message


def test_bad_raw_schema_is_rejected() -> None:
    import jsonschema

    with pytest.raises(jsonschema.SchemaError):
        RawJsonSchema({"type": "not-a-type"})


def test_as_output_schema_dispatch() -> None:
    assert as_output_schema(None) is None
    assert isinstance(as_output_schema(Outer), PydanticSchema)
    assert isinstance(as_output_schema({"type": "object"}), RawJsonSchema)
    with pytest.raises(TypeError):
        as_output_schema(42)  # type: ignore[arg-type]
