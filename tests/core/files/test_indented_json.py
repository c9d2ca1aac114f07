"""``write_indented_json`` writes exactly what ``json.dumps(indent=2, ensure_ascii=False, default=str,
allow_nan=False)`` writes, in pieces, and fails where it fails."""

from __future__ import annotations

import json
import math
from enum import IntEnum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.files.indented_json import indented_json, write_indented_json


def _dumps(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str, allow_nan=False)


scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
keys = (
    st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False, allow_infinity=False)
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=6) | st.tuples(inner, inner) | st.dictionaries(keys, inner, max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_same_text_as_json_dumps(data: object) -> None:
    assert indented_json(data) == _dumps(data)


@settings(max_examples=50, deadline=None)
@given(documents, st.integers(min_value=1, max_value=64))
def test_pieces_join_to_the_text(data: object, piece_chars: int) -> None:
    pieces: list[str] = []
    write_indented_json({"a": [data] * 300, "b": data}, pieces.append, piece_chars)
    assert "".join(pieces) == _dumps({"a": [data] * 300, "b": data})


class Level(IntEnum):
    HIGH = 3


class Named:
    def __str__(self) -> str:
        return 'named "thing"'


def test_subclasses_other_objects_and_a_score_table_shape() -> None:
    data = {
        "setting": "closed",
        "level": Level.HIGH,
        "obj": Named(),
        "path": Path("a/b"),
        "nested": {"": [], "x": {}, "y": [[], {}, ()]},
        "turns": [
            {"dialogue_id": "d\u00e9j\u00e0 \"x\"\n", "turn_index": i, "scorable": i % 2 == 0, "error": None,
             "values": {"recall@1": 1.0 / (i + 1), "t2r": i, "har": None, "tiny": 1e-300 * i}}
            for i in range(5000)
        ],
    }  # fmt: skip
    assert indented_json(data) == _dumps(data)
    assert indented_json([]) == "[]" and indented_json({}) == "{}" and indented_json("x") == '"x"'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_refused_like_json(bad: float) -> None:
    for data in ({"a": [1.0, bad]}, {"a": bad}, [bad], bad, {bad: 1}):
        with pytest.raises(ValueError) as ours:
            indented_json(data)
        with pytest.raises(ValueError) as theirs:
            _dumps(data)
        assert str(ours.value) == str(theirs.value)


def test_bad_keys_and_circular_containers_are_refused_like_json() -> None:
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        indented_json({(1, 2): 3})
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        indented_json({"a": loop})
    shared = [1, 2]
    assert indented_json({"a": shared, "b": shared}) == _dumps({"a": shared, "b": shared})
