"""Reading a dataset once: every split from one pass (``read_lean_splits``), the split a predictions file
answers chosen from that pass (``load_predicted_split``), and whole dialogues parsed on demand for a report
(``DialogueLines``) — each the same as the readers it stands in for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groundtrace.crs.dataset.lean_reader import DialogueLines, read_lean, read_lean_splits
from groundtrace.crs.evaluation.loading import load_dataset, load_predicted_split, load_records
from tests.crs.report.demo_data import make_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("once"), n_dialogues=20)


def test_one_pass_gives_every_split_as_read_alone(demo) -> None:
    splits = read_lean_splits(demo.dataset)
    for name in ("train", "validation", "test", "all"):
        alone, chosen = read_lean(demo.dataset, name), splits.select(name)
        assert chosen.dialogues == alone.dialogues and chosen.dialogues
        assert chosen.dataset_hash == alone.dataset_hash
        assert chosen.errors == alone.errors and chosen.manifest == alone.manifest
    with pytest.raises(ValueError, match="no split 'dev'"):
        splits.select("dev")


def _predictions(path: Path, ids: list[str]) -> Path:
    path.write_text(
        "".join(json.dumps({"dialogue_id": i, "turn_index": 1}) + "\n" for i in ids) + "not json\n"
    )
    return path


def test_the_predicted_split_is_chosen_from_the_same_read(demo, tmp_path: Path) -> None:
    test = [d.dialogue_id for d in load_records(demo.dataset, "test")]
    train = [d.dialogue_id for d in load_records(demo.dataset, "train")]
    split, data = load_predicted_split(demo.dataset, _predictions(tmp_path / "t.jsonl", test[:2] + ["x"]))
    assert split == "test" and data.dataset_hash == load_records(demo.dataset, "test").dataset_hash
    assert [d.dialogue_id for d in data] == test
    split, data = load_predicted_split(demo.dataset, _predictions(tmp_path / "m.jsonl", test[:1] + train[:1]))
    assert split == "all" and len(data) == len(load_records(demo.dataset, "all"))
    assert load_predicted_split(demo.dataset, _predictions(tmp_path / "n.jsonl", ["nobody"]))[0] == "all"


def test_dialogue_lines_are_the_validated_dialogues(demo, tmp_path: Path) -> None:
    folder = tmp_path / "ds"
    shutil.copytree(demo.dataset, folder)
    test = folder / "test.jsonl"
    lines = test.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    broken = json.loads(lines[1])
    broken["turns"] = "not a list"
    test.write_bytes(b"\xef\xbb\xbf" + lines[0] + json.dumps(broken).encode() + b"\n" + b"".join(lines[2:]))
    models = {d.dialogue_id: d for d in load_dataset(folder, "all")}
    ids = [*models, broken["dialogue_id"], "absent"]
    found = DialogueLines(folder, ids)
    assert len(found) == len(ids) and list(found) == ids and "absent" in found
    assert found[first["dialogue_id"]] == models[first["dialogue_id"]]  # the line after the BOM
    assert all(found[i] == m for i, m in models.items())
    assert found.get(broken["dialogue_id"]) is None and found.get("absent") is None
    with pytest.raises(KeyError):
        found["not a key"]


def test_deeply_nested_lines_are_refused_cheaply_on_every_read(demo, tmp_path: Path) -> None:
    """The hostile-input limits hold on the fast paths: a line nested 200,000 deep is a line error (the
    pydantic path's depth check), and the id scans (``DialogueLines``, the predicted split) skip it."""
    folder = tmp_path / "ds"
    shutil.copytree(demo.dataset, folder)
    deep = b'{"dialogue_id": "deep", "turns": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    with (folder / "test.jsonl").open("ab") as handle:
        handle.write(deep)
    lean = read_lean(folder, "test")
    assert lean.errors[-1].endswith("JSON nested deeper than 100 levels") and lean.errors == (
        load_dataset(folder, "test").errors
    )
    found = DialogueLines(folder, ["deep", lean.dialogues[0].dialogue_id])
    assert found.get("deep") is None and found[lean.dialogues[0].dialogue_id].dialogue_id
    predictions = tmp_path / "p.jsonl"
    predictions.write_bytes(
        deep + json.dumps({"dialogue_id": lean.dialogues[0].dialogue_id}).encode() + b"\n"
    )
    assert load_predicted_split(folder, predictions)[0] == "test"
