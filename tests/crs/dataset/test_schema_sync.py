"""One source of truth for the dialogue schema (``crs/schema.py``).

* the fast reader's wire structs are generated from the pydantic models: a field added to a model is in
  them with no other edit, and a JSON Schema keyword the generator does not translate is refused;
* the lean records (``crs/dataset/lean.py``) are checked against the models field by field — every lean
  field is a model field of the same type, every model field is carried or listed in ``LEAN_OF`` — so a
  field added to one side only fails here.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
import pytest
from pydantic import BaseModel, Field

from groundtrace.crs import schema
from groundtrace.crs.dataset.lean import LEAN_OF
from groundtrace.crs.dataset.lean_reader import WireDialogue, wire_structs

_MODEL_OF_LEAN = {lean.__name__: name for name, (lean, _) in LEAN_OF.items()}


def _kind(tp: Any) -> object:
    """A comparable form of a field type: scalars by name (a ``Literal`` of strings is ``str``),
    sequences (``list``/``tuple[...]``) as ``("seq", item)``, mappings as ``("map", key, value)``,
    unions as a sorted tuple, models and lean structs by the model name."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        return _kind(get_args(tp)[0])
    if origin is Literal:
        return "str" if all(isinstance(a, str) for a in get_args(tp)) else ("literal", get_args(tp))
    if origin in (Union, types.UnionType):
        return ("union", tuple(sorted(repr(_kind(a)) for a in get_args(tp))))
    if origin in (list, tuple):
        items = [a for a in get_args(tp) if a is not Ellipsis]
        return ("seq", _kind(items[0]))
    if origin is dict:
        key, value = get_args(tp)
        return ("map", _kind(key), _kind(value))
    if tp is type(None):
        return "None"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return ("model", tp.__name__)
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return ("model", _MODEL_OF_LEAN.get(tp.__name__, tp.__name__))
    if tp in (str, int, float, bool):
        return tp.__name__
    raise AssertionError(f"unexpected field type {tp!r}")


def _sync_problems(models: dict[str, type[BaseModel]], lean_of: dict[str, tuple[type, frozenset[str]]]):
    """Every difference between the models and the lean structs (empty: in sync)."""
    problems = []
    for name, (lean, left_out) in lean_of.items():
        fields = {k: f.annotation for k, f in models[name].model_fields.items()}
        lean_fields = {f.name: f.type for f in msgspec.structs.fields(lean)}
        for key in sorted(set(lean_fields) - set(fields)):
            problems.append(f"{lean.__name__}.{key} is not a field of {name}")
        for key in sorted(set(fields) - set(lean_fields) - left_out):
            problems.append(f"{name}.{key} is neither in {lean.__name__} nor listed as left out (LEAN_OF)")
        for key in sorted(left_out & set(lean_fields)):
            problems.append(f"{name}.{key} is in {lean.__name__} and listed as left out")
        for key in sorted(left_out - set(fields)):
            problems.append(f"LEAN_OF lists {name}.{key}, which is not a field")
        for key in sorted(set(fields) & set(lean_fields)):
            model_kind, lean_kind = _kind(fields[key]), _kind(lean_fields[key])
            if model_kind != lean_kind:
                problems.append(f"{name}.{key}: {model_kind} in the model, {lean_kind} in {lean.__name__}")
    return problems


MODELS = {name: getattr(schema, name) for name in LEAN_OF}


def test_lean_records_match_the_models_field_by_field() -> None:
    assert _sync_problems(MODELS, LEAN_OF) == []


def test_a_field_added_to_one_side_only_is_found() -> None:
    class Turn(schema.Turn):
        mood: str = ""

    added = _sync_problems({**MODELS, "Turn": Turn}, LEAN_OF)
    assert added == ["Turn.mood is neither in LeanTurn nor listed as left out (LEAN_OF)"]

    lean_turn, left_out = LEAN_OF["Turn"]

    class LeanTurn(lean_turn, frozen=True, gc=False):  # type: ignore[misc,valid-type]
        mood: str = ""

    assert _sync_problems(MODELS, {**LEAN_OF, "Turn": (LeanTurn, left_out)}) == [
        "LeanTurn.mood is not a field of Turn"
    ]

    class Anchor(schema.Anchor):
        lat: int = Field(ge=-90, le=90)  # type: ignore[assignment]

    changed = _sync_problems({**MODELS, "Anchor": Anchor}, LEAN_OF)
    assert changed == ["Anchor.lat: int in the model, float in LeanAnchor"]


def test_wire_structs_follow_a_field_added_to_the_models() -> None:
    class Turn(schema.Turn):
        mood: Literal["calm", "hurried"] = "calm"
        pauses: list[int] = Field(default_factory=list)

    class Dialogue(schema.Dialogue):
        turns: list[Turn]  # type: ignore[assignment]
        channel: str = "chat"

    structs = wire_structs(Dialogue)
    turn = {f.name: f for f in msgspec.structs.fields(structs["Turn"])}
    assert list(turn)[-2:] == ["mood", "pauses"] and turn["mood"].default == "calm"
    dialogue = [f.name for f in msgspec.structs.fields(structs["Dialogue"])]
    assert dialogue[-1] == "channel"
    line = Dialogue.model_validate(_a_dialogue()).model_dump_json().encode()
    wire = msgspec.json.Decoder(structs["Dialogue"]).decode(line)
    assert msgspec.json.encode(wire) == line and wire.channel == "chat" and wire.turns[0].mood == "calm"
    # the structs in use are the ones generated from the current schema
    assert [f.name for f in msgspec.structs.fields(WireDialogue)] == list(schema.Dialogue.model_fields)


def test_the_generator_refuses_what_it_does_not_translate() -> None:
    class Turn(schema.Turn):
        mood: str = Field(default="calm", pattern="^[a-z]+$")

    class Dialogue(schema.Dialogue):
        turns: list[Turn]  # type: ignore[assignment]

    with pytest.raises(TypeError, match="pattern"):
        wire_structs(Dialogue)


def _a_dialogue() -> dict[str, Any]:
    return {
        "dialogue_id": "d-1",
        "city": "Testville",
        "poi_type": "restaurant",
        "persona_id": "p",
        "persona": "someone",
        "candidates": ["a", "b"],
        "turns": [{"index": 0, "role": "user", "act": "request", "text": "somewhere quiet"}],
    }
