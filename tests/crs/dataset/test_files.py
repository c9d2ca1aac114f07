"""Dataset IO: forgiving/strict reading with file:line errors, canonical writing, folders, JSON Schema."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from groundtrace.crs.dataset.files import (
    SCHEMA_ID,
    DatasetFormatError,
    LineError,
    dialogue_json_schema,
    read_dataset,
    read_dialogues,
    write_dialogues,
    write_json_schema,
)
from groundtrace.crs.schema import SCHEMA_VERSION
from tests.conftest import FIXTURES

DATA = FIXTURES / "crs_io" / "dataset"
INVALID = FIXTURES / "crs_io" / "invalid.jsonl"


def test_read_collects_errors_and_keeps_the_rest() -> None:
    reader = read_dialogues(INVALID)
    dialogues = list(reader)
    # line 3 is schema-valid (its problems are semantic); lines 1 and 2 are not dialogues
    assert [d.dialogue_id for d in dialogues] == ["d-bad"]
    assert [(e.line, e.message.split(":")[0]) for e in reader.errors] == [
        (1, "invalid JSON"),
        (2, "not a valid Dialogue"),
    ]
    assert "candidates" in reader.errors[1].message and "turns.0.role" in reader.errors[1].message
    assert str(reader.errors[0]).startswith(f"{INVALID}:1: invalid JSON")


def test_strict_raises_on_the_first_bad_line() -> None:
    with pytest.raises(DatasetFormatError) as info:
        list(read_dialogues(INVALID, strict=True))
    assert info.value.error == LineError(file=str(INVALID), line=1, message=info.value.error.message)


def test_write_then_read_is_byte_identical(tmp_path: Path) -> None:
    dialogues = list(read_dialogues(DATA / "train.jsonl"))
    out = tmp_path / "copy.jsonl"
    assert write_dialogues(out, dialogues) == 2
    assert out.read_bytes() == (DATA / "train.jsonl").read_bytes()
    assert list(read_dialogues(out)) == dialogues


def test_read_dataset_folder_and_single_file() -> None:
    data = read_dataset(DATA)
    assert {k: [d.dialogue_id for d in v] for k, v in data.splits.items()} == {
        "train": ["d-train-1", "d-train-2"],
        "validation": ["d-val-1"],
    }
    assert data.manifest["splits"] == {"train": 2, "validation": 1}
    assert data.errors == []
    assert [d.dialogue_id for d in data.all_dialogues()] == ["d-train-1", "d-train-2", "d-val-1"]
    single = read_dataset(DATA / "validation.jsonl")
    # a single split file takes the manifest next to it
    assert list(single.splits) == ["validation"] and single.manifest == data.manifest


def test_read_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such"):
        read_dataset(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="train.jsonl"):
        read_dataset(tmp_path)


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path) -> None:
    lines = (DATA / "train.jsonl").read_bytes().split(b"\n")
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(b"\r\n".join(lines) + b"\r\n\r\n")
    reader = read_dialogues(path)
    assert len(list(reader)) == 2 and reader.errors == []


def test_json_schema_has_id_version_and_validates_the_fixture(tmp_path: Path) -> None:
    schema = dialogue_json_schema()
    assert schema["$id"] == SCHEMA_ID and schema["version"] == SCHEMA_VERSION
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    for line in (DATA / "train.jsonl").read_text(encoding="utf-8").splitlines():
        assert list(validator.iter_errors(json.loads(line))) == []
    broken = json.loads(INVALID.read_text(encoding="utf-8").splitlines()[1])
    messages = [e.message for e in validator.iter_errors(broken)]
    assert any("candidates" in m for m in messages) and any("'bot'" in m for m in messages)
    path = write_json_schema(tmp_path / "s" / "dialogue.schema.json")
    assert json.loads(path.read_text(encoding="utf-8")) == schema


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200))
def test_any_turn_text_round_trips(text: str) -> None:
    base = next(iter(read_dialogues(DATA / "validation.jsonl")))
    turns = [base.turns[0].model_copy(update={"text": text}), *base.turns[1:]]
    dialogue = base.model_copy(update={"turns": turns})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        write_dialogues(path, [dialogue])
        reader = read_dialogues(path)
        assert list(reader) == [dialogue] and reader.errors == []


def test_reader_is_a_lazy_single_pass_iterator() -> None:
    reader = read_dialogues(INVALID)
    assert reader.errors == []  # nothing read yet
    first = next(reader)
    assert first.dialogue_id == "d-bad" and len(reader.errors) == 2
    assert list(reader) == []  # exhausted
    assert [n for n, _ in reader.iter_numbered()] == [3]  # a fresh numbered pass
    assert len(reader.errors) == 2  # not doubled
