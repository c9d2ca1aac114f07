"""Hostile Yelp input (issue 9, item 7): every bad line is one ``file:line: message``, the rest is read.

Before: a repeated business or review line raised ``TypeError: '<' not supported between instances of
'POI' and 'POI'``; a 100,000-deep JSON line raised ``RecursionError``; latitude 999 was kept; an integer
business id was turned into the string "12345" and matched nothing, unreported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.kb.select import SelectionConfig, select_kb
from groundtrace.crs.kb.yelp import BUSINESS_FILE, REVIEW_FILE, stream_businesses, stream_reviews

CONFIG = SelectionConfig(cities=["Tucson"], per_type={"restaurant": 5, "hotel": 0, "attraction": 0},
                         min_reviews=1, min_review_chars=10)  # fmt: skip


def business(bid: object, **over) -> dict:
    row = {"business_id": bid, "name": f"Place {bid}", "city": "Tucson", "state": "AZ", "latitude": 32.2,
           "longitude": -110.9, "stars": 4.0, "review_count": 5, "categories": "Restaurants, Italian",
           "attributes": None}  # fmt: skip
    return {**row, **over}


def review(rid: str, bid: str) -> dict:
    return {"review_id": rid, "business_id": bid, "stars": 4, "text": f"Lovely dinner here, review {rid}.",
            "date": "2020-01-01"}  # fmt: skip


def write(folder: Path, businesses: list, reviews: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in ((BUSINESS_FILE, businesses), (REVIEW_FILE, reviews)):
        lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def problems(report) -> list[str]:
    return [str(p) for p in report.problems]


def test_repeated_business_and_review_lines_are_reported_and_deduplicated(tmp_path) -> None:
    rows = [business("b1"), business("b2"), business("b1", name="Changed name")]
    reviews = [review("r1", "b1"), review("r2", "b2"), review("r1", "b1")]
    folder = write(tmp_path / "y", rows, reviews)
    kb, report = select_kb(folder / BUSINESS_FILE, folder / REVIEW_FILE, CONFIG)
    assert sorted(kb.pois) == ["b1", "b2"]
    assert kb.pois["b1"].name == "Place b1"  # the first line wins; nothing is silently merged
    assert sorted(kb.reviews) == ["r1", "r2"]
    assert problems(report) == [
        f"{folder / BUSINESS_FILE}:3: duplicate business_id 'b1' (first on line 1); skipped",
        f"{folder / REVIEW_FILE}:3: duplicate review_id 'r1' (already read); skipped",
    ]


def test_many_repeats_of_one_business_do_not_break_the_sampling(tmp_path) -> None:
    # 50 identical lines: the bounded heaps never compare two POI records
    folder = write(tmp_path / "y", [business("b1")] * 50, [review("r1", "b1")] * 50)
    kb, report = select_kb(folder / BUSINESS_FILE, folder / REVIEW_FILE, CONFIG)
    assert list(kb.pois) == ["b1"] and list(kb.reviews) == ["r1"]
    assert len(report.problems) == 49 + 49


def test_deep_json_bad_coordinates_and_integer_ids_are_reported(tmp_path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    rows = [business("b1"), deep, business("b2", latitude=999), business("b3", longitude=-200),
            business(12345), business("b4", latitude="NaN"), business("b5")]  # fmt: skip
    reviews = [review("r1", "b1"), review("r5", "b5"), {**review("r9", "b1"), "review_id": 9}]
    folder = write(tmp_path / "y", rows, reviews)
    kb, report = select_kb(folder / BUSINESS_FILE, folder / REVIEW_FILE, CONFIG)
    assert sorted(kb.pois) == ["b1", "b5"]  # good lines are processed
    b, r = folder / BUSINESS_FILE, folder / REVIEW_FILE
    assert problems(report) == [
        f"{b}:2: JSON nested deeper than 100 levels",
        f"{b}:3: lat: Input should be less than or equal to 90",
        f"{b}:4: lon: Input should be greater than or equal to -180",
        f"{b}:5: business_id must be a string, got an integer (12345)",
        f"{b}:6: lat: Input should be a finite number",
        f"{r}:3: review_id must be a string, got an integer (9)",
    ]


def test_integer_ids_are_reported_whatever_the_category(tmp_path) -> None:
    folder = write(tmp_path / "y", [business(7, categories="Dentists")], [])
    errors: list = []
    assert list(stream_businesses(folder / BUSINESS_FILE, errors)) == []
    assert [str(e) for e in errors] == [
        f"{folder / BUSINESS_FILE}:1: business_id must be a string, got an integer (7)"
    ]
    errors = []
    (folder / REVIEW_FILE).write_text(json.dumps(review("r1", "b1") | {"business_id": 1.5}) + "\n")
    assert list(stream_reviews(folder / REVIEW_FILE, errors)) == []
    assert "business_id must be a string, got a number (1.5)" in str(errors[0])


def test_cli_builds_the_good_lines_and_exits_1_when_nothing_was_selected(tmp_path) -> None:
    deep = '{"a":' * 50_000 + "1" + "}" * 50_000
    good = write(tmp_path / "good", [business("b1"), deep, business("b1")], [review("r1", "b1")])
    runner = CliRunner()
    args = ["--cities", "Tucson", "--per-type", "restaurant=5", "--min-reviews", "1",
            "--min-review-chars", "10", "--no-progress"]  # fmt: skip
    ok = runner.invoke(
        app, ["crs", "kb", "build", "--yelp-dir", str(good), "--out", str(tmp_path / "g.kb"), *args]
    )
    assert ok.exit_code == 0, ok.output
    assert "Traceback" not in ok.output
    flat = " ".join(ok.output.split())
    assert f"{BUSINESS_FILE}:2: JSON nested deeper than 100 levels" in flat
    assert f"{BUSINESS_FILE}:3: duplicate business_id 'b1' (first on line 1); skipped" in flat
    empty = write(tmp_path / "empty", [business("b1", latitude=999)], [])
    bad = runner.invoke(
        app, ["crs", "kb", "build", "--yelp-dir", str(empty), "--out", str(tmp_path / "e.kb"), *args]
    )
    assert bad.exit_code == 1, bad.output
    assert "error: the KB is empty" in bad.stderr
    assert "Traceback" not in bad.output


@pytest.mark.parametrize("lat", [90.0, -90.0])
def test_the_poles_are_valid_latitudes(tmp_path, lat) -> None:
    errors: list = []
    folder = write(tmp_path / "y", [business("b1", latitude=lat, longitude=180.0)], [])
    assert [p.lat for p in stream_businesses(folder / BUSINESS_FILE, errors)] == [lat] and errors == []
