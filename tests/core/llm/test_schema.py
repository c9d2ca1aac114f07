"""Output schemas: strict rewriting, pydantic and raw JSON Schema validation, wire names."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from groundtrace.core.llm.engine import build_payload
from groundtrace.core.llm.schema import (
    PydanticSchema,
    RawJsonSchema,
    SchemaValidationFailure,
    as_output_schema,
    schema_instruction,
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


def test_a_model_class_maps_to_one_schema_whose_forms_are_computed_once() -> None:
    schema = as_output_schema(Outer)
    assert schema is as_output_schema(Outer)  # one PydanticSchema per class: its forms are shared
    assert isinstance(schema, PydanticSchema)
    assert schema.wire_schema == strict_json_schema(Outer.model_json_schema())
    assert schema.wire_schema is schema.wire_schema  # computed once, not per request
    assert schema.shared_schema == Outer.model_json_schema()
    fresh = schema.json_schema()
    fresh["title"] = "changed"  # json_schema() is a copy: changing it leaves the shared forms alone
    assert schema.shared_schema["title"] == "Outer"
    assert schema.canonical == json.dumps(Outer.model_json_schema(), sort_keys=True, separators=(",", ":"))
    assert schema.instruction == schema_instruction(schema)


def test_build_payload_sends_the_shared_strict_schema_and_instruction() -> None:
    schema = as_output_schema(Outer)
    assert schema is not None
    messages = [{"role": "user", "content": "hi"}]
    body = build_payload(messages, schema, {"temperature": 0.0, "max_tokens": None}, "json_schema")
    assert body["response_format"]["json_schema"]["schema"] == strict_json_schema(Outer.model_json_schema())
    assert "max_tokens" not in body
    prompt = build_payload(messages, schema, {}, "json_object")
    assert prompt["messages"][0] == {"role": "system", "content": schema_instruction(schema)}
    assert prompt["response_format"] == {"type": "json_object"}
