"""The public release layout both ways: export → import-release restores the dataset and the KB exactly."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.cli import app
from groundtrace.crs.dataset.files import read_dialogues, write_dialogues
from groundtrace.crs.dataset.kb_files import open_text, poi_from_record, poi_record
from groundtrace.crs.dataset.placeholders import (
    RedactionError,
    escape_release,
    release_placeholder,
    split_release,
)
from groundtrace.crs.dataset.trace_release import export_release, import_release
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import load_kb
from groundtrace.crs.schema import POI, Review
from tests.conftest import FIXTURES
from tests.crs.dataset.conftest import runner, yelp_file

IO = FIXTURES / "crs_io"
YELP = IO / "yelp_reviews_full.json"


def _io_kb() -> KnowledgeBase:
    pois = [POI.model_validate_json(x) for x in (IO / "kb_pois.jsonl").read_text().splitlines()]
    reviews = [Review.model_validate_json(x) for x in (IO / "kb_reviews.jsonl").read_text().splitlines()]
    return KnowledgeBase(pois, reviews, name="crs_io")


def _gz_lines(path: Path) -> list[str]:
    with open_text(path, "rt") as handle:
        return handle.read().splitlines()


def _write_gz_lines(path: Path, lines: list[str]) -> None:
    with open_text(path, "wt") as handle:
        handle.write("".join(line + "\n" for line in lines))


# -- the [Q:N] grammar ----------------------------------------------------------------------------------


@given(st.lists(st.one_of(st.text(alphabet="[Q:=]1a ", max_size=12), st.integers(1, 30)), max_size=8))
def test_release_texts_round_trip_whatever_they_contain(parts: list[str | int]) -> None:
    merged: list[str | int] = []
    for p in parts:  # the writer escapes each whole literal between two placeholders
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif p != "":
            merged.append(p)
    text = "".join(release_placeholder(p) if isinstance(p, int) else escape_release(p) for p in merged)
    assert split_release(text) == merged


def test_a_malformed_placeholder_is_an_error() -> None:
    assert split_release("a [Q:=] b [Q:2] c") == ["a [Q:] b ", 2, " c"]
    for bad in ("[Q:0]", "[Q:x]", "[Q:12"):
        with pytest.raises(RedactionError, match="malformed placeholder at character 0"):
            split_release(bad)


def test_poi_records_round_trip_and_type_every_attribute() -> None:
    poi = POI(
        poi_id="p",
        name="P",
        city="C",
        poi_type="restaurant",
        lat=1.0,
        lon=2.0,
        stars=4.5,
        review_count=3,
        attributes={
            "noise": "quiet",
            "wifi_free": True,
            "ambience": ["classy"],
            "mined": {"noise": ["r:0-3"]},
        },
    )
    record = poi_record(poi)
    assert [(a.key, a.value, a.value_type) for a in record.attributes] == [
        ("ambience", '["classy"]', "json"),
        ("mined", '{"noise":["r:0-3"]}', "json"),
        ("noise", "quiet", "str"),
        ("wifi_free", "true", "bool"),
    ]
    assert poi_from_record(record) == poi


# -- round trips --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_near_verbatim_quotes_and_uncovered_quotes_round_trip(tmp_path: Path) -> None:
    """The crs_io fixture has a near-verbatim quote per dialogue; one turn loses its spans (an LLM turn),
    so its cited quotes are located for redaction only (``added`` spans, dropped on import)."""
    kb = _io_kb()
    src = tmp_path / "src"
    dialogues = list(read_dialogues(IO / "dataset" / "train.jsonl"))
    turn = dialogues[0].turns[1].model_copy(update={"quote_spans": []})
    dialogues[0] = dialogues[0].model_copy(
        update={"turns": [dialogues[0].turns[0], turn, *dialogues[0].turns[2:]]}
    )
    write_dialogues(src / "train.jsonl", dialogues)
    report = export_release(src, kb, tmp_path / "rel")
    assert report.splits == {"train": 2} and report.near_verbatim == 2 and report.problems == []
    released = "\n".join(_gz_lines(tmp_path / "rel" / "data" / "train.jsonl.gz"))
    assert "Classy and upscale" not in released and "mezze platter" not in released
    line = json.loads(released.splitlines()[0])
    assert [s["added"] for s in line["turns"][1]["quote_spans"]] == [True]
    edited = [s for t in line["turns"] for s in t["quote_spans"] if s["edits"]]
    assert edited and set(edited[0]["edits"][0]) == {"start", "end", "text"}
    back = import_release(tmp_path / "rel", YELP, tmp_path / "out")
    assert back.problems == [] and back.kb_identical is True and back.kb_hash == kb.content_hash
    assert (tmp_path / "out" / "train.jsonl").read_bytes() == (src / "train.jsonl").read_bytes()
    assert load_kb(tmp_path / "out" / "kb.sqlite").content_hash == kb.content_hash


def _scores(dataset: Path, system: str, setting: str, out: Path) -> dict:
    result = runner.invoke(
        app, ["crs", "run", "--dataset", str(dataset), "--system", system, "--setting", setting,
              "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out / "scores.json").read_text())


@pytest.mark.slow
def test_export_then_import_release_gives_identical_scores(
    demo_release: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, rel, yelp = demo_release
    assert sorted(p.relative_to(rel).as_posix() for p in rel.rglob("*")) == [
        "README.md",
        "data",
        "data/test.jsonl.gz",
        "data/train.jsonl.gz",
        "data/validation.jsonl.gz",
        "knowledge_base",
        "knowledge_base/pois.jsonl.gz",
        "knowledge_base/review_index.jsonl.gz",
        "manifest.json",
        "release.json",
        "schema.json",
    ]
    index = _gz_lines(rel / "knowledge_base" / "review_index.jsonl.gz")
    assert "text" not in json.loads(index[0])  # no review text is released
    result = runner.invoke(
        app,
        ["crs", "import-release", str(rel), "--yelp-dir", str(yelp.parent), "--out", str(tmp_path / "ds")],
    )
    assert result.exit_code == 0, result.output
    assert "identical to the released one" in result.output
    for split in ("train", "validation", "test"):
        assert (tmp_path / "ds" / f"{split}.jsonl").read_bytes() == (ds / f"{split}.jsonl").read_bytes()
    for system, setting in (("oracle", "closed"), ("random", "closed"), ("random", "open")):
        original = _scores(ds, system, setting, tmp_path / f"a-{system}-{setting}")
        imported = _scores(tmp_path / "ds", system, setting, tmp_path / f"b-{system}-{setting}")
        assert imported == original


@pytest.mark.slow
def test_bad_input_is_reported_by_file_and_line_and_the_rest_is_imported(
    demo_release: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    ds, rel, _ = demo_release
    bad = tmp_path / "rel"
    shutil.copytree(rel, bad)
    train_file = bad / "data" / "train.jsonl.gz"
    lines = _gz_lines(train_file)
    broken = json.loads(lines[1])
    span_turn = next(t for t in broken["turns"] if t["quote_spans"])
    span_turn["quote_spans"][0]["start"] += 1  # wrong offsets
    _write_gz_lines(train_file, [lines[0], json.dumps(broken), '{"dialogue_id": "cut', *lines[2:]])
    # a review the test dialogue quotes (and the broken train dialogue does not cite) is missing from the
    # user's file
    first = json.loads(_gz_lines(bad / "data" / "test.jsonl.gz")[0])
    cited = {r["review_id"] for r in broken["review_refs"]}
    quoted = next(
        s["review_id"] for t in first["turns"] for s in t["quote_spans"] if s["review_id"] not in cited
    )
    kb = load_kb(ds.parent / "kb.sqlite")
    partial = yelp_file(kb, tmp_path / "reviews.json", skip=frozenset({quoted}))
    # and a validation file whose gzip stream is cut short
    raw = (bad / "data" / "validation.jsonl.gz").read_bytes()
    (bad / "data" / "validation.jsonl.gz").write_bytes(raw[: len(raw) // 2])
    result = runner.invoke(
        app,
        ["crs", "import-release", str(bad), "--yelp-reviews", str(partial), "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1, result.output
    out = result.output
    index = _gz_lines(bad / "knowledge_base" / "review_index.jsonl.gz")
    index_line = next(i for i, x in enumerate(index, 1) if json.loads(x)["review_id"] == quoted)
    assert f"review_index.jsonl.gz:{index_line}: review '{quoted}' not found in" in out
    assert f"test.jsonl.gz:1: {first['dialogue_id']}: " in out and "dialogue left out" in out
    assert f"train.jsonl.gz:2: {broken['dialogue_id']}: turn {span_turn['index']}: [Q:1] span offsets" in out
    assert "train.jsonl.gz:3: not a release dialogue" in out
    assert "validation.jsonl.gz:" in out and "rest of file lost" in out
    assert "DIFFERS from the released one" in out
    # everything else was imported, unchanged
    originals = list(read_dialogues(ds / "train.jsonl"))
    citing = [d for d in originals if quoted in {r.review_id for r in d.review_refs.values()}]
    expected = [d for i, d in enumerate(originals) if i != 1 and d not in citing]
    assert list(read_dialogues(tmp_path / "out" / "train.jsonl")) == expected
    assert len(expected) >= len(originals) // 2
    assert list(read_dialogues(tmp_path / "out" / "test.jsonl")) == []


@pytest.mark.slow
def test_a_changed_review_is_reported_at_its_yelp_line(
    demo_release: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, rel, yelp = demo_release
    lines = yelp.read_text().splitlines()
    obj = json.loads(lines[4])
    obj["text"] = obj["text"] + " Edited later."
    changed = tmp_path / "reviews.json"
    changed.write_text("\n".join([*lines[:4], json.dumps(obj), *lines[5:]]) + "\n")
    report = import_release(rel, changed, tmp_path / "out")
    messages = [str(p) for p in report.problems]
    assert f"{changed}:5: review {obj['review_id']!r}: text differs from the released one" in messages[0]
    assert report.kb_identical is False


@pytest.mark.slow
def test_cli_usage_errors(demo_release: tuple[Path, Path, Path], tmp_path: Path) -> None:
    ds, rel, yelp = demo_release
    both = runner.invoke(app, ["crs", "import-release", str(rel), "--out", str(tmp_path / "o")])
    assert both.exit_code == 2 and "--yelp-dir or --yelp-reviews" in both.output
    missing = runner.invoke(
        app, ["crs", "import-release", str(rel), "--yelp-dir", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert missing.exit_code == 2 and "yelp_academic_dataset_review.json not found" in missing.output
    not_release = runner.invoke(
        app, ["crs", "import-release", str(ds), "--yelp-reviews", str(yelp), "--out", str(tmp_path / "o")]
    )
    assert not_release.exit_code == 2 and "not a TRACE release folder" in not_release.output
    fmt = runner.invoke(
        app, ["crs", "export", str(ds), "--kb", str(ds.parent / "kb.sqlite"), "--format", "zip", "--out", "x"]
    )
    assert fmt.exit_code == 2 and "unknown format 'zip'" in fmt.output


@pytest.mark.slow
def test_release_files_are_reproducible(demo_release: tuple[Path, Path, Path], tmp_path: Path) -> None:
    ds, rel, _ = demo_release
    export_release(ds, load_kb(ds.parent / "kb.sqlite"), tmp_path / "again")
    for name in ("data/test.jsonl.gz", "knowledge_base/pois.jsonl.gz", "README.md", "release.json"):
        assert (tmp_path / "again" / name).read_bytes() == (rel / name).read_bytes(), name
    assert gzip.decompress((rel / "data" / "test.jsonl.gz").read_bytes()).count(b"\n") >= 1
