"""SQLite KB store: round trip, hash verification, clear errors, summary without loading."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.select import SelectionConfig, select_kb
from groundtrace.crs.kb.store import (
    MIGRATIONS,
    KBIntegrityError,
    NotAKnowledgeBaseError,
    kb_summary,
    load_kb,
    read_meta,
    save_kb,
)
from groundtrace.crs.kb.yelp import BUSINESS_FILE, REVIEW_FILE
from groundtrace.crs.schema import POI, Review
from tests.conftest import FIXTURES

YELP = FIXTURES / "yelp"


@pytest.fixture(scope="module")
def fixture_kb() -> KnowledgeBase:
    cfg = SelectionConfig(
        n_cities=2, per_type={"restaurant": 3, "hotel": 2, "attraction": 1}, min_reviews=1, min_review_chars=0
    )
    kb, _ = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, cfg, name="fixture")
    return kb


def test_round_trip_keeps_content_and_hash(fixture_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = save_kb(fixture_kb, tmp_path / "kb.sqlite", source="fixtures/yelp", selection={"seed": 0})
    loaded = load_kb(path)
    assert loaded.content_hash == fixture_kb.content_hash
    assert loaded.pois == fixture_kb.pois and loaded.reviews == fixture_kb.reviews
    assert loaded.name == "fixture"
    meta = read_meta(path)
    assert meta["format"] == "groundtrace-kb" and meta["source"] == "fixtures/yelp"
    assert meta["selection"] == {"seed": 0}
    with sqlite3.connect(path) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM migrations")] == [m[0] for m in MIGRATIONS]


def test_save_is_idempotent(fixture_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite"
    save_kb(fixture_kb, path, created="2026-01-01T00:00:00+00:00")
    first = path.read_bytes()
    save_kb(fixture_kb, path, created="2026-01-01T00:00:00+00:00")
    assert path.read_bytes() == first
    assert not list(tmp_path.glob(".*.tmp"))


def test_summary_without_loading(fixture_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = save_kb(fixture_kb, tmp_path / "kb.sqlite", source="s")
    summary = kb_summary(path)
    assert summary["pois"] == len(fixture_kb.pois) and summary["reviews"] == len(fixture_kb.reviews)
    assert summary["content_hash"] == fixture_kb.content_hash
    assert summary["cities"] == fixture_kb.summary()["cities"]
    assert summary["source"] == "s" and summary["created"]


def test_tampered_file_fails_the_hash_check(fixture_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = save_kb(fixture_kb, tmp_path / "kb.sqlite")
    rid = min(fixture_kb.reviews)
    record = json.loads(fixture_kb.reviews[rid].model_dump_json())
    record["text"] = "edited after the fact"
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE reviews SET record = ? WHERE review_id = ?", (json.dumps(record), rid))
    with pytest.raises(KBIntegrityError, match="content hash mismatch"):
        load_kb(path)
    assert load_kb(path, verify=False).reviews[rid].text == "edited after the fact"


def test_invalid_stored_record_is_an_integrity_error(fixture_kb: KnowledgeBase, tmp_path: Path) -> None:
    """A record edited into something the schema rejects names the file, table and id (no traceback)."""
    path = save_kb(fixture_kb, tmp_path / "kb.sqlite")
    pid = min(fixture_kb.pois)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE pois SET record = ? WHERE poi_id = ?", ('{"poi_id": 5}', pid))
    for verify in (True, False):
        with pytest.raises(KBIntegrityError, match=f"pois record '{pid}' is invalid"):
            load_kb(path, verify=verify)


def test_not_a_kb_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")
    with pytest.raises(NotAKnowledgeBaseError, match="not an SQLite file"):
        load_kb(text)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(NotAKnowledgeBaseError, match="not a groundtrace KB"):
        load_kb(other)
    with pytest.raises(FileNotFoundError):
        load_kb(tmp_path / "missing.sqlite")


_ids = st.text(alphabet="abcdefghij0123456789_-", min_size=1, max_size=8)


@st.composite
def _kbs(draw: st.DrawFn) -> KnowledgeBase:
    poi_ids = draw(st.lists(_ids, min_size=1, max_size=5, unique=True))
    pois = [
        POI(
            poi_id=pid,
            name=draw(st.text(max_size=10)),
            city=draw(st.sampled_from(["A", "Bé"])),
            poi_type=draw(st.sampled_from(["restaurant", "hotel", "attraction"])),
            lat=draw(st.floats(-80, 80)),
            lon=draw(st.floats(-179, 179)),
            stars=draw(st.sampled_from([1.0, 3.5, 5.0])),
            review_count=draw(st.integers(0, 100)),
            price_level=draw(st.none() | st.integers(1, 4)),
            attributes=draw(
                st.dictionaries(
                    st.sampled_from(["noise", "wifi", "has_tv"]),
                    st.text(max_size=5) | st.booleans(),
                    max_size=3,
                )
            ),
        )
        for pid in poi_ids
    ]
    review_ids = draw(st.lists(_ids, max_size=6, unique=True))
    reviews = [
        Review(
            review_id="r" + rid,
            poi_id=draw(st.sampled_from(poi_ids)),
            stars=3.0,
            text=draw(st.text(max_size=40)),
        )
        for rid in review_ids
    ]
    return KnowledgeBase(pois, reviews)


@settings(max_examples=15, deadline=None)
@given(_kbs())
@pytest.mark.slow
def test_store_round_trips_any_kb(kb: KnowledgeBase) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        loaded = load_kb(save_kb(kb, Path(tmp) / "kb.sqlite"))
    assert loaded.pois == kb.pois and loaded.reviews == kb.reviews
    assert loaded.content_hash == kb.content_hash


# -- CLI ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_cli_build_info_and_demo(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundtrace.cli import app

    runner = CliRunner()
    out = tmp_path / "kb.sqlite"
    result = runner.invoke(
        app,
        [
            "crs",
            "kb",
            "build",
            "--yelp-dir",
            str(YELP),
            "--out",
            str(out),
            "--cities",
            "Tucson, Atlantis",
            "--per-type",
            "1",
            "--min-reviews",
            "2",
            "--min-review-chars",
            "0",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    flat = result.output.replace("\n", "")
    assert "Tucson" in flat and "POIs: 3" in flat
    assert "yelp_academic_dataset_business.json:9: invalid JSON" in flat  # problems printed as file:line
    summary = json.loads((tmp_path / "kb.sqlite.summary.json").read_text(encoding="utf-8"))
    assert summary["pois"] == 3 and len(summary["problems"]) == 5
    assert summary["selection_report"]["cities"] == ["Tucson"]
    assert (
        summary["selection_report"]["missing_cities"] == ["Atlantis"]
        and "no eligible POI in: Atlantis" in flat
    )
    info = runner.invoke(app, ["crs", "kb", "info", str(out), "--verify"])
    assert info.exit_code == 0 and "content hash verified" in info.output
    as_json = runner.invoke(app, ["crs", "kb", "info", str(out), "--json"])
    assert json.loads(as_json.output)["selection"]["cities"] == ["Tucson", "Atlantis"]
    bad = runner.invoke(app, ["crs", "kb", "info", str(YELP / BUSINESS_FILE)])
    assert bad.exit_code == 1
    missing = runner.invoke(app, ["crs", "kb", "build", "--yelp-dir", str(tmp_path), "--out", str(out)])
    assert missing.exit_code == 2
    demo = runner.invoke(app, ["crs", "kb", "demo", "--out", str(tmp_path / "demo.sqlite"), "--seed", "3"])
    assert demo.exit_code == 0, demo.output
    assert (
        load_kb(tmp_path / "demo.sqlite").content_hash == kb_summary(tmp_path / "demo.sqlite")["content_hash"]
    )


def test_parse_per_type() -> None:
    from groundtrace.cli.crs_kb_cmd import parse_per_type

    assert parse_per_type("800") == {"restaurant": 800, "hotel": 800, "attraction": 800}
    assert parse_per_type(" restaurant=5, Hotel=2 ") == {"restaurant": 5, "hotel": 2, "attraction": 0}
    for bad, why in (
        ("-1", ">= 0"),
        ("museum=3", "TYPE=N"),
        ("hotel=x", "not an integer"),
        ("lots", "integer"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_per_type(bad)


def test_cli_build_per_type_targets_and_config_file(tmp_path: Path) -> None:
    """Per-type targets from --per-type and a YAML config (CLI options override the file)."""
    from typer.testing import CliRunner

    from groundtrace.cli import app

    config = tmp_path / "selection.yaml"
    config.write_text(
        "cities: [Tucson]\nper_type: {restaurant: 2, hotel: 0, attraction: 0}\n"
        "min_reviews: 2\nmin_review_chars: 0\nstar_bands: [4.0]\nband_allocation: equal\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    base = ["crs", "kb", "build", "--yelp-dir", str(YELP), "--no-progress", "--config", str(config)]
    result = runner.invoke(app, [*base, "--out", str(tmp_path / "a.sqlite")])
    assert result.exit_code == 0, result.output
    kb = load_kb(tmp_path / "a.sqlite")
    assert sorted(p.poi_type for p in kb.pois.values()) == ["restaurant", "restaurant"]
    selection = kb_summary(tmp_path / "a.sqlite")["selection"]
    assert selection["star_bands"] == [4.0] and selection["band_allocation"] == "equal"
    result = runner.invoke(
        app, [*base, "--per-type", "restaurant=1,hotel=1", "--out", str(tmp_path / "b.sqlite")]
    )
    assert result.exit_code == 0, result.output
    kb = load_kb(tmp_path / "b.sqlite")
    assert sorted(p.poi_type for p in kb.pois.values()) == ["hotel", "restaurant"]
    config.write_text("per_type: {spa: 3}\n", encoding="utf-8")
    bad = runner.invoke(app, [*base, "--out", str(tmp_path / "c.sqlite")])
    assert bad.exit_code == 2 and "unknown POI type" in bad.output and "selection.yaml" in bad.output
    bad = runner.invoke(app, [*base, "--per-type", "spa=3", "--out", str(tmp_path / "c.sqlite")])
    assert bad.exit_code == 2 and "TYPE=N" in bad.output
