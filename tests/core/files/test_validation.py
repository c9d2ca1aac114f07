"""The shared pydantic error formatter: one line, field path, did-you-mean for unknown keys."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.core.files.validation import (
    format_validation_error,
    known_keys,
    validation_errors,
    validation_message,
)


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    colour: str
    size_mm: Annotated[int, Field(ge=0)] = 0


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    name: str = Field(alias="title")
    items: list[Inner] = []
    by_key: dict[str, Inner] = {}
    maybe: Inner | None = None


def _error(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        Outer.model_validate(data)
    return info.value


def test_known_keys_follow_lists_dicts_and_optionals() -> None:
    assert known_keys(Outer, ()) == ["title", "name", "items", "by_key", "maybe"]
    for loc in (("items", 3), ("by_key", "k"), ("maybe",), ("maybe", "Inner")):
        assert known_keys(Outer, loc) == ["colour", "size_mm"]
    assert known_keys(Outer, ("nope",)) == []


def test_one_line_with_file_line_and_count() -> None:
    exc = _error({"title": "t", "items": [{"color": "red"}, {"colour": "b", "size_mm": -1}]})
    line = format_validation_error(exc, file="f.yaml", line=7, model=Outer)
    assert line == "f.yaml:7: items.0.colour: Field required (+2 more)"
    assert "\n" not in line
    messages = validation_message(exc, model=Outer, limit=3).split("; ")
    assert messages[1] == "items.0.color: unknown key (did you mean 'colour'?)"
    assert format_validation_error(exc, file="f.yaml") == "f.yaml: items.0.colour: Field required (+2 more)"


def test_messages_and_per_error_lines() -> None:
    exc = _error({"by_key": {"k": {"colour": 1}}, "xyz": 0})
    assert validation_message(exc, model=Outer, limit=5) == (
        "title: Field required; by_key.k.colour: Input should be a valid string; "
        "xyz: unknown key; known keys: title, name, items, by_key, maybe"
    )
    errors = validation_errors(exc, file="f", line=lambda loc: len(loc), model=Outer, limit=2)
    assert [str(e) for e in errors] == [
        "f:1: title: Field required",
        "f:3: by_key.k.colour: Input should be a valid string (+1 more)",
    ]
