"""Fuzz suite for the CRS input formats (issue 9, item 8): Yelp business/review JSON lines, dataset JSONL,
predictions JSONL.

Files are built from good lines plus mutated ones (truncated, wrong types, deep, over-long, duplicated,
not UTF-8, not an object). For every file the readers must: report each bad line once as one line
``file:line: message`` (no traceback), process every good line, and change nothing silently (what they
yield equals what a good line says). The CLI tests check the exit codes of README ("Exit codes"): 0 when
the good lines produced something, 1 when nothing was produced, 2 for an unusable input path.

Hypothesis examples are kept small (``max_examples``) so the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.dataset.files import read_dialogues
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, read_predictions
from groundtrace.crs.kb.yelp import stream_businesses, stream_reviews
from groundtrace.crs.schema import Dialogue
from tests.crs.report.demo_data import make_demo

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "crs_metrics"
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# -- mutations of one JSON line (each makes the line bad in a way a reader must report) ---------------------
def _truncate(line: bytes) -> bytes:
    return line[: max(1, len(line) // 2)]


MUTATIONS = {
    "truncated": _truncate,
    "not JSON": lambda line: b"{" + line,
    "not an object": lambda line: b"[" + line + b"]",
    "deep": lambda line: b"[" * 5_000 + b"]" * 5_000,
    "not UTF-8": lambda line: line.replace(b'"', b'"\xff', 1),
    "a number": lambda line: b"42",
}


def _message_shape(path: Path) -> re.Pattern[str]:
    return re.compile(rf"^{re.escape(str(path))}:(\d+): \S[^\n]*$")


def _write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


# -- Yelp businesses -------------------------------------------------------------------------------------
def _business(i: int) -> dict:
    return {"business_id": f"b{i:03d}", "name": f"Place {i}", "city": "Tucson", "state": "AZ",
            "latitude": 32.0 + i / 1000, "longitude": -110.0 - i / 1000, "stars": float(i % 5),
            "review_count": i, "categories": "Restaurants, Italian",
            "attributes": {"WiFi": "u'free'"}}  # fmt: skip


FIELD_BREAKS = {
    "latitude out of range": ("latitude", 999),
    "longitude out of range": ("longitude", -200.5),
    "latitude not a number": ("latitude", "north"),
    "stars out of range": ("stars", 7),
    "integer id": ("business_id", 12345),
    "missing name": ("name", None),
    "list id": ("business_id", ["b1"]),
}

business_line = st.one_of(
    st.tuples(st.just("good"), st.integers(0, 999)),
    st.tuples(st.sampled_from(sorted(MUTATIONS)), st.integers(0, 999)),
    st.tuples(st.sampled_from(sorted(FIELD_BREAKS)), st.integers(0, 999)),
    st.tuples(st.just("repeat"), st.integers(0, 999)),
)


@FUZZ
@given(st.lists(business_line, min_size=1, max_size=12))
def test_business_reader(tmp_path_factory, plan) -> None:
    path = tmp_path_factory.mktemp("yelp") / "business.json"
    lines: list[bytes] = []
    expected: dict[str, dict] = {}  # the good lines' POIs, first occurrence of each id
    bad: set[int] = set()
    for kind, i in plan:
        row = _business(i)
        if kind == "good" or (kind == "repeat" and not expected):
            if row["business_id"] in expected:
                bad.add(len(lines) + 1)  # a repeated id is reported
            else:
                expected[row["business_id"]] = row
            lines.append(json.dumps(row).encode())
        elif kind == "repeat":
            first = next(iter(expected.values()))
            lines.append(json.dumps({**first, "name": "changed"}).encode())
            bad.add(len(lines))
        elif kind in MUTATIONS:
            lines.append(MUTATIONS[kind](json.dumps(row).encode()))
            bad.add(len(lines))
        else:
            key, value = FIELD_BREAKS[kind]
            lines.append(json.dumps({**row, key: value}).encode())
            bad.add(len(lines))
    _write_lines(path, lines)
    errors: list = []
    pois = list(stream_businesses(path, errors))
    # good lines processed, in order, and unchanged
    assert [p.poi_id for p in pois] == list(expected)
    for poi in pois:
        row = expected[poi.poi_id]
        assert (poi.name, poi.lat, poi.lon, poi.stars) == (row["name"], row["latitude"], row["longitude"],
                                                           row["stars"])  # fmt: skip
        assert poi.attributes.get("wifi") == "free"
    # each bad line reported once, as one line naming file:line
    shape = _message_shape(path)
    reported = [int(shape.match(str(e)).group(1)) for e in errors]  # type: ignore[union-attr]
    assert sorted(reported) == sorted(bad)


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(["good", "repeat", *sorted(MUTATIONS), "int id"]),
                          st.integers(0, 99)), min_size=1, max_size=12))  # fmt: skip
def test_review_reader(tmp_path_factory, plan) -> None:
    path = tmp_path_factory.mktemp("yelp") / "review.json"
    lines: list[bytes] = []
    expected: dict[str, str] = {}
    bad: set[int] = set()
    for kind, i in plan:
        row = {
            "review_id": f"r{i}",
            "business_id": "b1",
            "stars": 4,
            "text": f"Review number {i}.",
            "date": None,
        }
        if kind in ("good", "repeat"):
            lines.append(json.dumps(row).encode())
            if row["review_id"] in expected:
                bad.add(len(lines))
            else:
                expected[row["review_id"]] = row["text"]
        elif kind == "int id":
            lines.append(json.dumps({**row, "review_id": i}).encode())
            bad.add(len(lines))
        else:
            lines.append(MUTATIONS[kind](json.dumps(row).encode()))
            bad.add(len(lines))
    _write_lines(path, lines)
    errors: list = []
    reviews = list(stream_reviews(path, errors, business_ids={"b1"}))
    assert {r.review_id: r.text for r in reviews} == expected
    assert [r.review_id for r in reviews] == list(expected)
    shape = _message_shape(path)
    assert sorted(int(shape.match(str(e)).group(1)) for e in errors) == sorted(bad)  # type: ignore[union-attr]


def test_an_over_long_line_is_reported_and_the_next_line_read(tmp_path) -> None:
    path = tmp_path / "business.json"
    huge = json.dumps({**_business(1), "name": "x" * (9 << 20)}).encode()  # over the 8 MiB line limit
    _write_lines(path, [huge, json.dumps(_business(2)).encode()])
    errors: list = []
    assert [p.poi_id for p in stream_businesses(path, errors)] == ["b002"]
    assert len(errors) == 1 and re.match(
        rf"{re.escape(str(path))}:1: line is \d+ bytes, over the", str(errors[0])
    )


# -- dataset JSONL -----------------------------------------------------------------------------------------
DIALOGUE_LINES = [line for line in (FIXTURES / "dialogues.jsonl").read_bytes().splitlines() if line.strip()]


def _dialogue_breaks(line: bytes) -> dict[str, bytes]:
    row = json.loads(line)
    return {
        "turns not a list": json.dumps({**row, "turns": "none"}).encode(),
        "unknown key": json.dumps({**row, "colour": "red"}).encode(),
        "lat out of range": json.dumps({**row, "anchor": {"name": "H", "lat": 999, "lon": 0}}).encode(),
        "turn index a string": json.dumps({**row, "turns": [{**row["turns"][0], "index": "zero"}]}).encode(),
    }


@FUZZ
@given(st.lists(st.tuples(st.integers(0, len(DIALOGUE_LINES) - 1),
                          st.sampled_from(["good", *sorted(MUTATIONS), "turns not a list", "unknown key",
                                           "lat out of range", "turn index a string"])),
                min_size=1, max_size=8))  # fmt: skip
def test_dataset_reader(tmp_path_factory, plan) -> None:
    path = tmp_path_factory.mktemp("data") / "test.jsonl"
    lines, good, bad = [], [], set()
    for i, kind in plan:
        line = DIALOGUE_LINES[i]
        if kind == "good":
            lines.append(line)
            good.append(Dialogue.model_validate_json(line))
        else:
            lines.append(MUTATIONS[kind](line) if kind in MUTATIONS else _dialogue_breaks(line)[kind])
            bad.add(len(lines))
    _write_lines(path, lines)
    reader = read_dialogues(path)
    assert list(reader) == good  # good lines processed, unchanged
    shape = _message_shape(path)
    assert sorted(int(shape.match(str(e)).group(1)) for e in reader.errors) == sorted(bad)  # type: ignore[union-attr]


# -- predictions JSONL and the CLI -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzzdemo")
    demo = make_demo(root, n_dialogues=4)
    args = ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path)]
    result = CliRunner().invoke(app, ["crs", "run", *args, "--system", "oracle", "--out", str(root / "run")])
    assert result.exit_code == 0, result.output
    return args, (root / "run" / PREDICTIONS_FILE).read_bytes().splitlines()


PREDICTION_BREAKS = {
    "ranking not a list": lambda row: {**row, "ranking": "P1"},
    "NaN latency": lambda row: {**row, "latency_s": float("nan")},
    "negative cost": lambda row: {**row, "cost_usd": -1},
    "unknown key": lambda row: {**row, "colour": 1},
    "turn index a string": lambda row: {**row, "turn_index": "one"},
}


@pytest.mark.slow  # end to end: every fuzzed file through the CLI
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_predictions_files_through_crs_score(demo_run, tmp_path_factory, data) -> None:
    args, good_lines = demo_run
    kinds = ["good", "duplicate", *sorted(MUTATIONS), *sorted(PREDICTION_BREAKS)]
    plan = data.draw(st.lists(st.tuples(st.integers(0, len(good_lines) - 1), st.sampled_from(kinds)),
                              min_size=1, max_size=10))  # fmt: skip
    folder = tmp_path_factory.mktemp("pred")
    path = folder / "p.jsonl"
    lines, kept, bad = [], {}, set()
    for i, kind in plan:
        line = good_lines[i]
        row = json.loads(line)
        if kind in ("good", "duplicate"):
            lines.append(line)
            kept.setdefault((row["dialogue_id"], row["turn_index"]), line)
        elif kind in MUTATIONS:
            lines.append(MUTATIONS[kind](line))
            bad.add(len(lines))
        else:
            lines.append(json.dumps(PREDICTION_BREAKS[kind](row)).encode())
            bad.add(len(lines))
    _write_lines(path, lines)
    file = read_predictions(path)
    good_rows = [json.loads(x) for n, x in enumerate(lines, 1) if n not in bad]
    assert [p.model_dump(mode="json") for p in file.predictions] == [
        {**row, "setting": row.get("setting", "closed")} for row in good_rows
    ]  # every good line, in order, unchanged
    shape = _message_shape(path)
    assert sorted(int(shape.match(e).group(1)) for e in file.errors) == sorted(bad)  # type: ignore[union-attr]
    result = CliRunner().invoke(
        app, ["crs", "score", *args, "--predictions", str(path), "--out", str(folder / "s")]
    )
    assert "Traceback" not in result.output
    for number in bad:
        assert re.search(rf"skipped {re.escape(str(path))}:{number}: \S", result.stderr)
    assert result.exit_code == (0 if kept else 1), result.output  # README: nothing scored -> 1
    if kept:
        # nothing silently changed: the file scores exactly like its first good line per turn alone
        clean = folder / "clean.jsonl"
        _write_lines(clean, list(kept.values()))
        again = CliRunner().invoke(app, ["crs", "score", *args, "--predictions", str(clean), "--out",
                                         str(folder / "c")])  # fmt: skip
        assert again.exit_code == 0, again.output
        a = json.loads((folder / "s" / "scores.json").read_text())
        b = json.loads((folder / "c" / "scores.json").read_text())
        duplicates = a["predictions"].pop("duplicate")
        b["predictions"].pop("duplicate")
        assert a == b
        assert duplicates == len([1 for i, k in plan if k in ("good", "duplicate")]) - len(kept)
        if duplicates:
            assert f"{duplicates} duplicate prediction(s)" in result.stderr


def test_unusable_paths_are_usage_errors(demo_run, tmp_path) -> None:
    args, _ = demo_run
    missing = CliRunner().invoke(app, ["crs", "score", *args, "--predictions", str(tmp_path / "nope.jsonl"),
                                       "--out", str(tmp_path / "s")])  # fmt: skip
    assert missing.exit_code == 2 and "Traceback" not in missing.output
    no_yelp = CliRunner().invoke(app, ["crs", "kb", "build", "--yelp-dir", str(tmp_path), "--out",
                                       str(tmp_path / "kb.sqlite"), "--no-progress"])  # fmt: skip
    assert no_yelp.exit_code == 2 and "Traceback" not in no_yelp.output


# -- whole datasets: duplicate dialogues, a bad manifest, nothing to run -------------------------------------
def test_duplicate_dialogues_and_a_bad_manifest_are_reported(tmp_path) -> None:
    from groundtrace.crs.dataset.files import read_dataset

    folder = tmp_path / "data"
    folder.mkdir()
    _write_lines(folder / "train.jsonl", [DIALOGUE_LINES[0], DIALOGUE_LINES[1], DIALOGUE_LINES[0]])
    _write_lines(folder / "test.jsonl", [DIALOGUE_LINES[1], DIALOGUE_LINES[2]])
    (folder / "manifest.json").write_text('[{"kb": NaN}]')
    data = read_dataset(folder)
    assert [d.dialogue_id for d in data.all_dialogues()] == ["d1", "d2", "d3"]
    train, test = folder / "train.jsonl", folder / "test.jsonl"
    assert [str(e) for e in data.errors] == [
        f"{train}:3: duplicate dialogue_id 'd1' (first at {train}:1); skipped",
        f"{test}:1: duplicate dialogue_id 'd2' (first at {train}:2); skipped",
        f"{folder / 'manifest.json'}: non-finite number NaN is not JSON",
    ]
    assert data.manifest == {}
    (folder / "manifest.json").write_text("[1, 2]")
    assert str(read_dataset(folder).errors[-1]).endswith("manifest.json: expected a JSON object, got list")


def test_crs_run_on_duplicates_and_on_nothing(demo_run, tmp_path) -> None:
    args, _ = demo_run
    dataset = Path(args[args.index("--dataset") + 1])
    kb = args[args.index("--kb") + 1]
    lines = (dataset / "train.jsonl").read_bytes().splitlines()
    dup = _write_lines(tmp_path / "dup.jsonl", [lines[0], lines[0]])
    runner = CliRunner()
    ran = runner.invoke(app, ["crs", "run", "--dataset", str(dup), "--kb", kb, "--system", "oracle", "--out",
                              str(tmp_path / "a")])  # fmt: skip
    assert ran.exit_code == 0, ran.output  # before: ValueError traceback (dialogue_id appears twice)
    assert f"{dup}:2: duplicate dialogue_id" in " ".join(ran.stderr.split())
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    nothing = runner.invoke(app, ["crs", "run", "--dataset", str(empty), "--kb", kb, "--system", "oracle",
                                  "--out", str(tmp_path / "b")])  # fmt: skip
    assert nothing.exit_code == 1, nothing.output  # before: FileNotFoundError traceback
    assert "error: the run produced nothing" in nothing.stderr and "Traceback" not in nothing.output
