"""The shared JSONL reader: per-line errors (JSON, UTF-8, too long, too deep), limits, models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from groundtrace.core.files.jsonl import MAX_JSON_DEPTH, iter_jsonl, json_depth, read_jsonl_models


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_bytes(data)
    return path


def test_good_and_bad_lines_each_reported_at_their_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        b'\xef\xbb\xbf{"a": 1}\n'  # BOM dropped
        b"\n"  # blank: skipped
        b"{not json}\n"
        b'{"b": "\xff"}\n'  # not UTF-8
        b"[1, 2]\r\n"
        b'{"c": 3}',  # no final newline
    )
    rows = list(iter_jsonl(path))
    assert [(n, v) for n, v, e in rows if e is None] == [(1, {"a": 1}), (5, [1, 2]), (6, {"c": 3})]
    errors = [e for _n, _v, e in rows if e is not None]
    assert [e.line for e in errors] == [3, 4]
    assert str(errors[0]).startswith(f"{path}:3: invalid JSON: ")
    assert "not valid UTF-8" in errors[1].message and "0xff" in errors[1].message


def test_objects_only_refuses_other_values(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"a": 1}\n[1]\n"s"\n3\nnull\n')
    rows = list(iter_jsonl(path, objects_only=True))
    assert [v for _n, v, e in rows if e is None] == [{"a": 1}]
    assert [e.message for _n, _v, e in rows if e is not None] == [
        "expected a JSON object, got an array",
        "expected a JSON object, got a string",
        "expected a JSON object, got an integer",
        "expected a JSON object, got null",
    ]


def test_too_long_line_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    long_value = "x" * 5000
    path = _write(tmp_path, b'{"a": 1}\n' + json.dumps({"b": long_value}).encode() + b'\n{"c": 2}\n')
    rows = list(iter_jsonl(path, max_line_bytes=1000))
    assert [(n, v) for n, v, e in rows if e is None] == [(1, {"a": 1}), (3, {"c": 2})]
    (error,) = [e for _n, _v, e in rows if e is not None]
    assert error.line == 2 and "over the 1000-byte limit" in error.message


def test_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    line = json.dumps({"k": "v" * 20}).encode()
    path = _write(tmp_path, line + b"\r\n" + line + b"x\n")
    rows = list(iter_jsonl(path, max_line_bytes=len(line)))
    assert rows[0][2] is None and rows[0][1] == {"k": "v" * 20}
    assert rows[1][2] is not None and "limit" in rows[1][2].message


def test_deep_nesting_is_a_line_error_not_recursion_error(tmp_path: Path) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    ok = b"[" * 10 + b"]" * 10
    in_string = json.dumps({"s": "[" * 500}).encode()
    path = _write(tmp_path, deep + b"\n" + ok + b"\n" + in_string + b"\n")
    rows = list(iter_jsonl(path))
    assert rows[0][2] is not None and rows[0][2].message == f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    assert rows[1][2] is None and rows[2][2] is None and rows[2][1] == {"s": "[" * 500}


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab'),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=20,
    )
)
def test_json_depth_matches_the_value(value: object) -> None:
    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    assert json_depth(json.dumps(value).encode()) == depth(value)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8))
def test_any_bytes_yield_one_result_per_nonblank_line_and_never_raise(lines: list[bytes]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.jsonl"
        path.write_bytes(b"\n".join(lines))
        rows = list(iter_jsonl(path, max_line_bytes=30))
    numbers = [n for n, _v, _e in rows]
    assert numbers == sorted(set(numbers))
    assert all(e is None or (v is None and e.line == n) for n, v, e in rows)
    lines = [lines[0].removeprefix(b"\xef\xbb\xbf"), *lines[1:]] if lines else []  # a BOM opening the file
    nonblank = [i + 1 for i, line in enumerate(lines) if line.strip()]
    assert set(numbers) <= set(nonblank)


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sku: str
    count: int = 0


def test_read_jsonl_models_reports_invalid_records_with_did_you_mean(tmp_path: Path) -> None:
    path = _write(tmp_path, b'{"sku": "a"}\n{"sku": "b", "cuont": 2}\n{"count": "x"}\n{\n')
    items, problems = read_jsonl_models(path, Item)
    assert items == [Item(sku="a")]
    assert [str(p) for p in problems] == [
        f"{path}:2: invalid Item: cuont: unknown key (did you mean 'count'?)",
        f"{path}:3: invalid Item: sku: Field required (+1 more)",
        f"{path}:4: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
    ]


def _scan_depth(raw: bytes) -> int:
    """The obvious reference: one character at a time, strings skipped (the first release's json_depth)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return deepest


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=60) | st.text(alphabet='[]{}"\\a, :', max_size=60).map(str.encode))
def test_json_depth_equals_a_character_scan_on_any_bytes(raw: bytes) -> None:
    assert json_depth(raw) == _scan_depth(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"[[1]]", 2),
        (b'["[[[", {"a": "}"}]', 2),  # brackets in strings do not count
        (b'["a\\"[[", [1]]', 2),  # an escaped quote does not end the string
        (b'["abc\\', 1),  # unterminated string with a trailing backslash
        (b"]]][[", 0),  # closers first: never below the start
        (b'"\\"\\"\\"[[[', 0),  # one unterminated string to the end
    ],
)
def test_json_depth_hand_cases(raw: bytes, expected: int) -> None:
    assert json_depth(raw) == expected == _scan_depth(raw)
