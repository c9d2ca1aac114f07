"""KB selection: allocation arithmetic, seeded bottom-k review sampling, stratified selection, determinism."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from groundtrace.crs.kb.select import SelectionConfig, allocate, seeded_key, select_kb, star_band
from groundtrace.crs.kb.yelp import BUSINESS_FILE, REVIEW_FILE
from tests.conftest import FIXTURES, shared_path

YELP = FIXTURES / "yelp"


def test_allocate_equal_largest_remainder() -> None:
    # 10 over 3 roomy strata: shares 3.33 each → floors 3,3,3; the 1 left goes to the lowest index.
    assert allocate(10, [5, 5, 5]) == [4, 3, 3]


def test_allocate_water_fills_a_small_stratum() -> None:
    # round 1: shares 3.33 → [4,3,3] capped at [1,3,3] (7 placed, 3 left)
    # round 2: 3 over strata 1 and 2 → 1.5 each → floors 1,1, remainder to index 1 → [1,5,4]
    assert allocate(10, [1, 10, 10]) == [1, 5, 4]


def test_allocate_proportional_and_capped_total() -> None:
    # weights 10:20:30 → shares 1, 2, 3 of 6
    assert allocate(6, [10, 20, 30], [10, 20, 30]) == [1, 2, 3]
    assert allocate(100, [3, 4]) == [3, 4]  # target beyond capacity: everything
    assert allocate(5, []) == []
    assert allocate(0, [3, 3]) == [0, 0]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 300),
    st.lists(st.integers(0, 50), max_size=8),
    st.booleans(),
)
def test_allocate_invariants(target: int, caps: list[int], proportional: bool) -> None:
    counts = allocate(target, caps, [float(c) for c in caps] if proportional else None)
    assert sum(counts) == min(target, sum(caps))
    assert all(0 <= n <= c for n, c in zip(counts, caps, strict=True))


def test_star_band_edges_are_lower_inclusive() -> None:
    edges = [2.5, 3.5, 4.5]
    assert [star_band(s, edges) for s in (1.0, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_config_validation() -> None:
    with pytest.raises(ValidationError, match="unknown POI type"):
        SelectionConfig(per_type={"bar": 3})
    with pytest.raises(ValidationError, match="strictly increasing"):
        SelectionConfig(star_bands=[3.5, 2.5])
    with pytest.raises(ValidationError):
        SelectionConfig(unknown_field=1)


def _fixture_config(**kw: object) -> SelectionConfig:
    base = {
        "per_type": {"restaurant": 2, "hotel": 1, "attraction": 1},
        "min_reviews": 2,
        "max_reviews_per_poi": 2,
        "min_review_chars": 0,
        "seed": 7,
    }
    base.update(kw)
    return SelectionConfig(**base)


def test_select_kb_on_the_fixture() -> None:
    kb, report = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, _fixture_config(n_cities=1))
    # Tucson has 4 eligible POIs (sushi, taco, hotel, museum), Reno 2 (casino review_count 40, cafe 3)
    assert report.cities == ["Tucson"]
    assert report.eligible == {"Tucson": {"restaurant": 2, "hotel": 1, "attraction": 1}}
    assert sorted(kb.pois) == ["b_hotel", "b_museum", "b_sushi", "b_taco"]
    assert report.shortfall == {}
    # the cap keeps the 2 reviews of smallest seeded key, whatever the file order
    sushi = ["r_s1", "r_s2", "r_s3", "r_s4", "r_s5", "r_s6"]
    expected = sorted(sorted(sushi, key=lambda r: seeded_key(7, r))[:2])
    assert [r.review_id for r in kb.reviews_of("b_sushi")] == expected
    assert all(len(kb.reviews_of(p)) == 2 for p in kb.pois)
    # malformed business lines, and the malformed review lines of candidate POIs, as file:line
    assert [(Path(p.file).name, p.line) for p in report.problems] == [
        (BUSINESS_FILE, 9),
        (BUSINESS_FILE, 10),
        (BUSINESS_FILE, 12),
        (REVIEW_FILE, 8),
        (REVIEW_FILE, 13),
    ]


def test_select_kb_city_names_match_case_insensitively_and_min_reviews_filters() -> None:
    # the cafe is spelled "reno", the casino "Reno": a 1-1 tie, so the smaller string "Reno" names the city
    kb, report = select_kb(
        YELP / BUSINESS_FILE, YELP / REVIEW_FILE, _fixture_config(cities=["RENO"], min_reviews=1)
    )
    assert report.cities == ["Reno"]
    assert {p.poi_id: p.city for p in kb.pois.values()} == {"b_casino": "Reno", "b_cafe": "Reno"}
    # min_reviews=2: the cafe has one review in the file, so it is not usable → restaurant shortfall 2
    kb2, report2 = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, _fixture_config(cities=["Reno"]))
    assert sorted(kb2.pois) == ["b_casino"]
    assert report2.shortfall == {"restaurant": 2, "attraction": 1}


def test_select_kb_is_deterministic_and_independent_of_review_order(tmp_path: Path) -> None:
    lines = (YELP / REVIEW_FILE).read_text(encoding="utf-8").split("\n")
    random.Random(3).shuffle(lines)
    shuffled = tmp_path / REVIEW_FILE
    shuffled.write_text("\n".join(lines), encoding="utf-8")
    cfg = _fixture_config(n_cities=2)
    blines = (YELP / BUSINESS_FILE).read_text(encoding="utf-8").split("\n")
    random.Random(4).shuffle(blines)
    bshuffled = tmp_path / BUSINESS_FILE
    bshuffled.write_text("\n".join(blines), encoding="utf-8")
    kb1, _ = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, cfg)
    kb2, _ = select_kb(YELP / BUSINESS_FILE, shuffled, cfg)
    kb3, _ = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, cfg)
    kb4, _ = select_kb(bshuffled, shuffled, cfg)
    assert kb1.content_hash == kb2.content_hash == kb3.content_hash == kb4.content_hash
    assert "Reno" in kb1.cities()


def test_select_kb_star_strata() -> None:
    # one restaurant wanted in Tucson: bands of sushi (4.5 → band 3) and taco (3.0 → band 1) are both
    # non-empty; proportional allocation of 1 over sizes [0,1,0,1] gives it to the lower band index.
    kb, _ = select_kb(
        YELP / BUSINESS_FILE,
        YELP / REVIEW_FILE,
        _fixture_config(cities=["Tucson"], per_type={"restaurant": 1}),
    )
    assert sorted(kb.pois) == ["b_taco"]


def test_select_kb_on_real_sample() -> None:
    business = shared_path("yelp", BUSINESS_FILE)
    review = shared_path("yelp", REVIEW_FILE)
    cfg = SelectionConfig(
        n_cities=40,
        per_type={"restaurant": 50, "hotel": 50, "attraction": 50},
        min_reviews=1,
        min_review_chars=0,
    )
    kb, report = select_kb(business, review, cfg)
    assert report.problems == []
    assert 0 < len(kb.pois) <= 150 and len(kb.reviews) <= 77  # only 77 reviews of the file match a business
    for poi in kb.pois.values():
        assert poi.city in report.cities
        assert 1 <= len(kb.reviews_of(poi.poi_id)) <= cfg.max_reviews_per_poi


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=6), unique=True, max_size=40), st.integers(0, 8), st.integers(0, 5)
)
def test_bottom_k_keeps_the_smallest_keys_in_any_order(ids: list[str], cap: int, seed: int) -> None:
    from groundtrace.crs.kb.select import _BottomK

    heap: _BottomK[str] = _BottomK(cap)
    for ident in ids:
        heap.offer(seeded_key(seed, ident), ident, ident)
    assert heap.offered == len(ids)
    assert (
        heap.ordered() == sorted(ids, key=lambda i: seeded_key(seed, i))[:cap]
    )  # reference: sort everything


def test_select_kb_reports_selected_cities_that_end_with_no_poi() -> None:
    # Reno's candidates (the casino hotel: 2 reviews in the file; the cafe: 1) cannot keep 3 reviews
    kb, report = select_kb(
        YELP / BUSINESS_FILE,
        YELP / REVIEW_FILE,
        _fixture_config(cities=["Tucson", "Reno"], min_reviews=3, max_reviews_per_poi=3),
    )
    assert report.cities == ["Reno", "Tucson"] and "Reno" not in kb.cities()
    assert report.empty_cities == {
        "Reno": "none of its 2 candidate POI(s) kept >= 3 review(s) of 0-5000 characters"
    }
    # one restaurant over two cities: allocate gives it to Reno (the lower index), Tucson gets no candidate
    kb, report = select_kb(
        YELP / BUSINESS_FILE,
        YELP / REVIEW_FILE,
        _fixture_config(n_cities=2, min_reviews=1, per_type={"restaurant": 1}),
    )
    assert sorted(kb.pois) == ["b_cafe"]
    assert list(report.empty_cities) == ["Tucson"]
    assert report.empty_cities["Tucson"].startswith("no candidate: the per-type targets")
    # every selected city has a POI: nothing reported
    _, report = select_kb(YELP / BUSINESS_FILE, YELP / REVIEW_FILE, _fixture_config(n_cities=1))
    assert report.empty_cities == {}


def test_cli_kb_build_flags_a_city_with_no_poi_on_real_sample(tmp_path: Path) -> None:
    """The audit's case: on the 1,000-business sample, Tucson is among the top 8 cities but none of its
    candidates has a review of >= 40 characters in the 999-review file."""
    import json

    from typer.testing import CliRunner

    from groundtrace.cli import app
    from groundtrace.crs.kb.select import summary_path

    yelp = shared_path("yelp", BUSINESS_FILE).parent
    out = tmp_path / "kb.sqlite"
    args = ["crs", "kb", "build", "--yelp-dir", str(yelp), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--min-reviews", "1", "--per-type", "50", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads(summary_path(out).read_text(encoding="utf-8"))
    report = summary["selection_report"]
    assert "Tucson" in report["cities"] and "Tucson" not in summary["cities"]
    assert list(report["empty_cities"]) == ["Tucson"]
    assert "kept >= 1 review(s) of 40-5000 characters" in report["empty_cities"]["Tucson"]
    assert "1 selected city(ies) with 0 POIs (not in the KB):" in result.output
    assert "  Tucson: none of its " in result.output
