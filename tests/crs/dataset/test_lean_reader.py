"""The lean reader (``crs.dataset.lean_reader``) against the pydantic reader it stands in for.

* the same dialogues (as lean records), errors, manifest and dataset hash, on a demo build and on a build
  over the real Yelp folder ../shared/data/yelp_dense;
* the same scores, to the last digit, closed and open (the lean path vs the current pydantic path);
* the same outcome, line by line, on mutated lines (wrong types, unknown keys, bounds, key order,
  spacing, floats, encodings, duplicates ...), and on random byte edits of real lines (hypothesis);
* its wire structs describe the same written form as the schema (``dataset_json_schema``), so a schema
  change that the reader does not mirror fails here.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundtrace.crs.build.builder import build_dialogues
from groundtrace.crs.dataset.files import dialogue_json_schema, write_dialogues
from groundtrace.crs.dataset.lean import lean_dialogue
from groundtrace.crs.dataset.lean_reader import WireDialogue, read_lean
from groundtrace.crs.evaluation.loading import load_dataset, load_records
from groundtrace.crs.evaluation.run_files import dataset_hash
from groundtrace.crs.evaluation.score import score_predictions
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.systems.predictions import Prediction


def _write_dataset(folder: Path, dialogues: list, kb: KnowledgeBase) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "validation", "test"):
        write_dialogues(folder / f"{split}.jsonl", [d for d in dialogues if d.split == split])
    (folder / "manifest.json").write_text(json.dumps({"kb_hash": kb.content_hash, "kb_name": kb.name}))
    return folder


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, KnowledgeBase]:
    kb = generate_demo_kb(2, n_per_type=30, reviews_per_poi=6)
    dialogues, _ = build_dialogues(kb, 40, seed=3)
    return _write_dataset(tmp_path_factory.mktemp("lean") / "ds", dialogues, kb), kb


@pytest.fixture(scope="module")
def yelp(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, KnowledgeBase]:
    """20 dialogues built on a KB of the real Yelp folder yelp_dense: its businesses, and up to 5 reviews
    of 40+ characters per business (in file order; fewer reviews keep the build short)."""
    from groundtrace.crs.kb.yelp import business_to_poi, review_from_obj
    from tests.conftest import shared_path

    folder = shared_path("yelp_dense")
    pois = []
    for line in (folder / "yelp_academic_dataset_business.json").read_text(encoding="utf-8").splitlines():
        try:
            poi = business_to_poi(json.loads(line))
        except ValueError:
            continue
        if poi is not None:
            pois.append(poi)
    per_poi: Counter[str] = Counter({p.poi_id: 0 for p in pois})
    reviews = []
    with (folder / "yelp_academic_dataset_review.json").open(encoding="utf-8") as handle:
        for line in handle:
            review = review_from_obj(json.loads(line))
            if review.poi_id in per_poi and len(review.text) >= 40 and per_poi[review.poi_id] < 5:
                per_poi[review.poi_id] += 1
                reviews.append(review)
    kb = KnowledgeBase(pois, reviews, name="yelp-dense")
    dialogues, report = build_dialogues(kb, 20, seed=5)
    assert report.built >= 10
    return _write_dataset(tmp_path_factory.mktemp("lean_yelp") / "ds", dialogues, kb), kb


def _predictions(dialogues: list, setting: str, seed: int) -> list[Prediction]:
    """A run with missing, errored, out-of-KB and quoting answers (the dataset's own system turns)."""
    rng = random.Random(f"{setting}:{seed}")
    out = []
    for d in dialogues:
        for turn in d.recommendation_turns():
            u = rng.random()
            if u < 0.05:
                continue
            where = {"dialogue_id": d.dialogue_id, "turn_index": turn.index, "setting": setting}
            if u < 0.1:
                out.append(Prediction(**where, error="timeout"))
                continue
            pool = list(d.candidates) if setting == "closed" else list(turn.gold.open_pool)
            rng.shuffle(pool)
            text = turn.text if rng.random() < 0.8 else turn.text.replace("[", "(") + ' "made up" [R99]'
            out.append(Prediction(**where, ranking=[*pool[:6], "not-a-poi"], response=text))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("source", ["demo", "yelp"])
def test_lean_path_reads_and_scores_like_the_pydantic_path(
    source: str, request: pytest.FixtureRequest
) -> None:
    folder, kb = request.getfixturevalue(source)
    for split in ("all", "test", "train"):
        lean, models = load_records(folder, split), load_dataset(folder, split)
        assert list(lean) == [lean_dialogue(d) for d in models]
        assert lean.errors == models.errors and lean.manifest == models.manifest
        assert dataset_hash(lean) == dataset_hash(models)
    read = read_lean(folder, "all")
    assert read.reference_lines == 0 and read.fast_lines == len(read.dialogues)  # all canonical: fast path
    lean, models = load_records(folder, "all"), load_dataset(folder, "all")
    assert source == "yelp" or any(d.legs for d in lean)  # itineraries (legs) are read too
    for setting in ("closed", "open"):
        preds = _predictions(list(models), setting, 0)
        new = score_predictions(lean, preds, kb, setting=setting).to_dict()
        old = score_predictions(models, preds, kb, setting=setting).to_dict()
        assert json.dumps(new) == json.dumps(old)  # every value, to the last digit
        assert new["predictions"]["used"] > 0


# -- line by line -------------------------------------------------------------------------------------


def _outcome(folder: Path) -> tuple[list, list[str], str]:
    lean = read_lean(folder, "all")
    models = load_dataset(folder, "all")
    assert lean.errors == models.errors, (lean.errors, models.errors)
    assert lean.dialogues == [lean_dialogue(d) for d in models]
    assert lean.dataset_hash == dataset_hash(models)
    return lean.dialogues, lean.errors, lean.dataset_hash


def _edit(obj: dict, path: tuple, value: object) -> dict:
    obj = json.loads(json.dumps(obj))
    node = obj
    for key in path[:-1]:
        node = node[key]
    if value is _DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return obj


_DROP = object()
_ACTIVE = ("turns", 1, "gold", "active_constraints")


def _written(value: str, value_type: str, kind: str = "price_max") -> list[dict[str, str]]:
    """``active_constraints`` of one written (format 2.0) constraint."""
    return [{"kind": kind, "value": value, "value_type": value_type, "label": "-"}]


MUTATIONS = {
    "unknown key": (("extra",), 1),
    "missing required": (("city",), _DROP),
    "missing default": (("realiser",), _DROP),
    "wrong type": (("has_rejection",), "yes"),
    "int for bool": (("has_rejection",), 0),
    "bad literal": (("poi_type",), "museum"),
    "lat out of range": (("anchor",), {"name": "x", "lat": 91.0, "lon": 0.0}),
    "int lat": (("anchor",), {"name": "x", "lat": 40, "lon": 0.0}),
    "negative index": (("turns", 0, "index"), -1),
    "float index": (("turns", 0, "index"), 0.0),
    "string index": (("turns", 0, "index"), "0"),
    "constraint value float": (_ACTIVE, [{"kind": "min_stars", "value": 4.0, "label": "-"}]),
    "constraint value int": (_ACTIVE, [{"kind": "price_max", "value": 2, "label": "-"}]),
    "constraint value list": (_ACTIVE, [{"kind": "price_max", "value": [2], "label": "-"}]),
    "v1 constraint form": (_ACTIVE, [{"kind": "price_max", "value": 2, "label": "-"}]),
    "value text not canonical": (_ACTIVE, _written("4", "float", "min_stars")),
    "value text big float": (_ACTIVE, _written("1e16", "float", "min_stars")),
    "value text canonical float": (_ACTIVE, _written("4.5", "float", "min_stars")),
    "value text not an int": (_ACTIVE, _written("two", "int")),
    "value type unknown": (_ACTIVE, _written("2", "list")),
    "value text leading zero": (_ACTIVE, _written("02", "int")),
    "value bool": (_ACTIVE, _written("true", "bool", "amenity")),
    "v1 features form": (("features",), {"x": 1.5}),
    "big feature": (("features",), [{"name": "x", "value": 1e16}]),
    "tiny feature": (("features",), [{"name": "x", "value": 1e-7}]),
    "int feature": (("features",), [{"name": "x", "value": 2}]),
    "repeated feature": (("features",), [{"name": "x", "value": 2.0}, {"name": "x", "value": 3.0}]),
    "feature extra key": (("features",), [{"name": "x", "value": 2.0, "unit": "km"}]),
    "v1 review_refs form": (("review_refs",), {"R1": {"review_id": "r", "poi_id": "p"}}),
    "repeated tag": (("review_refs",), [{"tag": "R1", "review_id": "a", "poi_id": "p"}] * 2),
    "leg first turn negative": (("legs",), [{"poi_type": "hotel", "first_turn": -1, "candidates": []}]),
    "leg": (("legs",), [{"poi_type": "hotel", "first_turn": 0, "candidates": ["a"], "anchor": None}]),
    "huge int seed": (("seed",), 2**70),
    "old version": (("schema_version",), "0.9"),
    "null gold": (("turns", 1, "gold"), None),
    "unicode text": (("turns", 0, "text"), 'caf\u00e9 \u2028 "\\ \x00 \U0001f600'),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_mutated_line_has_the_pydantic_outcome(name: str, demo, tmp_path: Path) -> None:
    source, _kb = demo
    lines = (source / "test.jsonl").read_bytes().splitlines(keepends=True)[:3]
    path, value = MUTATIONS[name]
    obj = json.loads(lines[1])
    lines[1] = json.dumps(_edit(obj, path, value), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    (tmp_path / "test.jsonl").write_bytes(b"".join(lines))
    _outcome(tmp_path)


@pytest.mark.parametrize(
    "name",
    ["reordered keys", "spaces", "crlf", "bom", "no final newline", "duplicate id", "not utf8", "not json",
     "blank lines", "nan", "deep"],
)  # fmt: skip
def test_a_rewritten_line_has_the_pydantic_outcome(name: str, demo, tmp_path: Path) -> None:
    source, _kb = demo
    lines = (source / "test.jsonl").read_bytes().splitlines(keepends=True)[:3]
    obj = json.loads(lines[1])
    if name == "reordered keys":
        lines[1] = json.dumps(dict(reversed(obj.items())), separators=(",", ":")).encode() + b"\n"
    elif name == "spaces":
        lines[1] = json.dumps(obj).encode() + b"\n"
    elif name == "crlf":
        lines[1] = lines[1][:-1] + b"\r\n"
    elif name == "bom":
        lines[0] = b"\xef\xbb\xbf" + lines[0]
    elif name == "no final newline":
        lines[-1] = lines[-1].rstrip(b"\n")
    elif name == "duplicate id":
        lines[2] = lines[0]
    elif name == "not utf8":
        lines[1] = lines[1].replace(b'"text":"', b'"text":"\xff', 1)
    elif name == "not json":
        lines[1] = lines[1][: len(lines[1]) // 2] + b"\n"
    elif name == "blank lines":
        lines.insert(1, b"\n  \n")
    elif name == "nan":
        lines[1] = lines[1].replace(b'"features":{', b'"features":{"z":NaN,', 1)
    elif name == "deep":
        lines[1] = lines[1].replace(b'"seed":', b'"deep":' + b"[" * 200 + b"]" * 200 + b',"seed":', 1)
    (tmp_path / "test.jsonl").write_bytes(b"".join(lines))
    _dialogues, errors, _hash = _outcome(tmp_path)
    accepted = ("reordered keys", "spaces", "crlf", "bom", "no final newline", "blank lines", "nan")
    assert (name in accepted) == (not errors)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_byte_edits_have_the_pydantic_outcome(data: st.DataObject, demo, tmp_path_factory) -> None:
    source, _kb = demo
    line = (source / "test.jsonl").read_bytes().splitlines(keepends=True)[0]
    raw = bytearray(line[:-1])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        byte = data.draw(st.sampled_from(list(b'0123456789.-eE"{}[],:\\ tnfrux\xc3\xa9')))
        if op == "delete":
            del raw[at]
        elif op == "insert":
            raw.insert(at, byte)
        else:
            raw[at] = byte
    folder = tmp_path_factory.mktemp("edit")
    (folder / "test.jsonl").write_bytes(bytes(raw) + b"\n")
    _outcome(folder)


# -- the wire structs mirror the schema ----------------------------------------------------------------


def _shape(node: dict, defs: dict) -> object:
    """A canonical form of a JSON Schema node: types, enums, bounds, object fields in order, required
    keys, extra keys allowed or not (titles, descriptions and defaults left out)."""
    if "$ref" in node:
        return _shape(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in node:
        return ("anyOf", sorted(repr(_shape(x, defs)) for x in node["anyOf"]))
    if "enum" in node:
        return ("enum", sorted(node["enum"]))
    kind = node.get("type")
    if kind == "object" and "properties" in node:
        fields = tuple((k, _shape(v, defs)) for k, v in node["properties"].items())
        return ("object", fields, tuple(sorted(node.get("required", []))), node.get("additionalProperties"))
    if kind == "object":
        return ("map", _shape(node.get("additionalProperties", {}), defs))
    if kind == "array":
        return ("array", _shape(node.get("items", {}), defs))
    return (kind, node.get("minimum"), node.get("maximum"))


def test_wire_structs_describe_the_schema_written_form() -> None:
    wire = msgspec.json.schema(WireDialogue)
    schema = dialogue_json_schema()
    assert _shape(wire, wire["$defs"]) == _shape(schema, schema["$defs"])


def test_score_table_rows_are_the_dataclass_fields(demo) -> None:
    """``ScoreTable.to_dict`` builds the rows by hand (fast): they must stay ``dataclasses.asdict``."""
    from dataclasses import asdict

    folder, kb = demo
    lean = load_records(folder, "test")
    table = score_predictions(lean, _predictions(list(lean), "closed", 1), kb)
    out = table.to_dict()
    assert out["turns"] == [asdict(t) for t in table.turns] and out["turns"]
    assert out["dialogues"] == [asdict(d) for d in table.dialogues] and out["dialogues"]
