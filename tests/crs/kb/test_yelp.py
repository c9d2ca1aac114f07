"""Yelp loader: literal parsing, attribute and category mapping, streaming with file:line problems."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.files.errors import LineError
from groundtrace.crs.kb.yelp import (
    BUSINESS_FILE,
    REVIEW_FILE,
    business_to_poi,
    classify,
    iter_json_lines,
    map_attributes,
    parse_literal,
    split_categories,
    stream_businesses,
    stream_reviews,
    yelp_files,
)
from groundtrace.crs.schema import ATTRIBUTE_KEYS
from tests.conftest import FIXTURES, shared_path

YELP = FIXTURES / "yelp"


# -- parse_literal -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("u'quiet'", "quiet"),
        ("'none'", "none"),  # the *string* none (Alcohol), not Python None
        ("None", None),
        ("True", True),
        ("False", False),
        ("2", 2),
        ("'True'", "True"),
        ("{'romantic': False, u'classy': None}", {"romantic": False, "classy": None}),
        ("{'a': (1, 2)}", {"a": [1, 2]}),
        ("quiet", "quiet"),  # plain text is returned as is
        ("  u'loud'  ", "loud"),
        ("__import__('os').system('echo hacked')", "__import__('os').system('echo hacked')"),  # never eval'd
        ("{'a': print(1)}", "{'a': print(1)}"),  # a call is not a literal
        ("{'b', 'a'}", ["a", "b"]),  # a set becomes a sorted list
        ("{'a': 1", "{'a': 1"),  # truncated literal
        ("1+2j", "1+2j"),  # complex is not a LiteralValue
        ("{'a': [1, 2j]}", "{'a': [1, 2j]}"),  # ... nor a container holding one
        (True, True),
        (None, None),
        (3, 3),
    ],
)
def test_parse_literal_table(raw: object, expected: object) -> None:
    assert parse_literal(raw) == expected


def _is_literal_value(value: object) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(_is_literal_value(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_literal_value(v) for k, v in value.items())
    return False


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parse_literal_never_raises_and_returns_a_literal_value(raw: str) -> None:
    assert _is_literal_value(parse_literal(raw))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="{}[]()'\"uU:,.0123456789-+eE jNoneTrueFalse\\", max_size=80))
def test_parse_literal_never_raises_on_literal_like_noise(raw: str) -> None:
    assert _is_literal_value(parse_literal(raw))


_literals = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(_literals)
def test_parse_literal_round_trips_python_reprs(value: object) -> None:
    """What Yelp did (str(python_value)) is undone exactly."""
    assert parse_literal(repr(value)) == value


# -- attributes and categories ----------------------------------------------------------------------


def _fixture_business(business_id: str) -> dict:
    for line in (YELP / BUSINESS_FILE).read_text(encoding="utf-8").splitlines():
        if f'"business_id":"{business_id}"' in line:
            return json.loads(line)
    raise KeyError(business_id)


def test_map_attributes_of_the_sushi_bar() -> None:
    attrs, price = map_attributes(_fixture_business("b_sushi")["attributes"])
    assert price == 4
    assert attrs == {
        "noise": "quiet",
        "wifi": "free",
        "alcohol": "full_bar",
        "attire": "dressy",
        "ambience": ["classy", "romantic"],  # upscale None → unknown, not listed
        "good_for_meal": ["dinner"],
        "parking": True,  # street: True
        "wheelchair_accessible": True,
        "good_for_kids": False,
        # HasTV "None" → unknown → absent; CoatCheck is not a canonical key
    }
    assert set(attrs) <= set(ATTRIBUTE_KEYS)


def test_map_attributes_edge_cases() -> None:
    assert map_attributes(None) == ({}, None)
    assert map_attributes("not a dict") == ({}, None)
    attrs, price = map_attributes(
        {
            "BusinessParking": (
                "{'garage': False, 'street': False, 'validated': False, 'lot': False, 'valet': False}"
            ),
            "Alcohol": "'none'",
            "RestaurantsPriceRange2": "None",
            "Ambience": "{'romantic': None, 'classy': None}",  # every flag unknown → absent
            "NoiseLevel": "u'deafening'",  # unknown enum value → absent
            "BikeParking": "'True'",  # a string holding a quoted boolean
        }
    )
    assert attrs == {"parking": False, "alcohol": "none", "bike_parking": True}
    assert price is None
    assert map_attributes({"RestaurantsPriceRange2": "7"}) == ({}, None)


@pytest.mark.parametrize(
    ("categories", "expected"),
    [
        ("Sushi Bars, Japanese, Restaurants", "restaurant"),
        ("Hotels, Hotels & Travel, Restaurants", "hotel"),  # hotel wins over restaurant
        ("Museums, Arts & Entertainment, Cafes", "attraction"),  # a museum café is still a museum
        ("Restaurants, Music Venues, Arts & Entertainment", "restaurant"),  # restaurant wins over attraction
        ("Casinos, Arts & Entertainment, Hotels", "hotel"),
        ("Coffee & Tea, Food", "restaurant"),
        ("Food, Grocery", None),  # weak food keyword vetoed by a shop keyword
        ("Travel Services, Hotels & Travel", None),  # the parent category alone is not a hotel
        ("Dentists, Health & Medical", None),
        (None, None),
        ("", None),
    ],
)
def test_classify_precedence(categories: str | None, expected: str | None) -> None:
    assert classify(split_categories(categories)) == expected


@pytest.mark.parametrize(
    ("name", "categories", "expected"),
    [  # real Yelp records (../shared/data/yelp, yelp_dense)
        (
            "Restaurant R'evolution",
            "Event Planning & Services, Hotels, Cajun/Creole, Restaurants",
            "restaurant",
        ),
        ("Capitol Grille", "Hotels & Travel, Hotels, Lounges, Mexican, Restaurants", "restaurant"),
        ("Sheraton New Orleans Hotel", "Cajun/Creole, Hotels, Hotels & Travel, Restaurants", "hotel"),
        ("Creekside Inn", "Restaurants, American (New), Hotels, Hotels & Travel", "hotel"),
        ("Gaylord Opryland Resort", "Hotels & Travel, Restaurants, Museums, Hotels, Resorts", "hotel"),
        ("1-275 Rest Area Manatee County", "Hotels, Rest Stops, Hotels & Travel", None),
        ("Gotham Escape Room", "Active Life, Escape Games", "attraction"),
        ("Creve Coeur Golf Course", "Golf, Active Life", "attraction"),
        ("Tat Starz", "Arts & Entertainment, Shopping, Art Galleries, Piercing, Tattoo", None),
        ("Baum's Dancewear", "Arts & Crafts, Sports Wear, Performing Arts, Shopping, Sporting Goods", None),
        ("Arizona Stagecoach", "Tours, Travel Services, Airport Shuttles, Transportation, Taxis", None),
        ("Golf Galaxy", "Shopping, Fashion, Active Life, Golf, Sporting Goods", None),
    ],
)
def test_classify_with_the_business_name(name: str, categories: str, expected: str | None) -> None:
    assert classify(split_categories(categories), name=name) == expected


def test_split_categories() -> None:
    assert split_categories(" Bars , Pubs,, ") == ["Bars", "Pubs"]
    assert split_categories(None) == []
    assert split_categories(["A", " B "]) == ["A", "B"]


# -- streaming ---------------------------------------------------------------------------------------


def test_stream_businesses_reports_bad_lines_and_keeps_the_rest() -> None:
    errors: list[LineError] = []
    pois = {p.poi_id: p for p in stream_businesses(YELP / BUSINESS_FILE, errors)}
    assert set(pois) == {"b_sushi", "b_taco", "b_hotel", "b_museum", "b_casino", "b_cafe"}
    assert pois["b_hotel"].poi_type == "hotel" and pois["b_museum"].poi_type == "attraction"
    assert pois["b_taco"].attributes == {} and pois["b_taco"].price_level is None  # null attributes
    assert pois["b_cafe"].attributes == {"wifi": "free", "outdoor_seating": True, "bike_parking": True}
    # the last line has no trailing newline and is still read
    assert pois["b_cafe"].price_level == 1
    where = [(Path(e.file).name, e.line) for e in errors]
    assert where == [(BUSINESS_FILE, 9), (BUSINESS_FILE, 10), (BUSINESS_FILE, 12)]  # line 7 is blank
    assert "invalid JSON" in errors[0].message
    assert "latitude" in errors[1].message
    assert "expected a JSON object" in errors[2].message
    assert str(errors[1]).startswith(f"{YELP / BUSINESS_FILE}:10: ")


def test_stream_businesses_open_only() -> None:
    ids = {p.poi_id for p in stream_businesses(YELP / BUSINESS_FILE, [], open_only=True)}
    assert "b_museum" not in ids and "b_sushi" in ids


def test_stream_reviews_filters_by_business_and_reports_problems() -> None:
    errors: list[LineError] = []
    reviews = list(stream_reviews(YELP / REVIEW_FILE, errors, business_ids={"b_taco", "b_hotel"}))
    assert [r.review_id for r in reviews] == ["r_t1", "r_t2", "r_t3", "r_h1", "r_h2", "r_h3"]
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [
        (8, "invalid JSON"),
        (13, "missing required field(s)"),
    ]
    everything: list[LineError] = []
    all_reviews = list(stream_reviews(YELP / REVIEW_FILE, everything))
    assert len(all_reviews) == 19 and len(everything) == 2
    assert "\u2014" in next(r.text for r in all_reviews if r.review_id == "r_s5")


def test_prefilter_skips_unwanted_lines_unparsed() -> None:
    """A malformed line of an unwanted business is skipped without being reported (documented)."""
    errors: list[LineError] = []
    list(stream_reviews(YELP / REVIEW_FILE, errors, business_ids={"b_hotel"}))  # line 8 (broken) is b_taco
    assert errors == [
        LineError(file=str(YELP / REVIEW_FILE), line=13, message="missing required field(s): text")
    ]


def test_on_bytes_counts_every_byte(tmp_path: Path) -> None:
    seen: list[int] = []
    list(iter_json_lines(YELP / REVIEW_FILE, [], seen.append))
    assert sum(seen) == (YELP / REVIEW_FILE).stat().st_size


def test_business_to_poi_unmapped_returns_none() -> None:
    assert business_to_poi({"business_id": "x", "categories": "Dentists"}) is None


def test_yelp_files_names_the_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=BUSINESS_FILE):
        yelp_files(tmp_path)


# -- real data -------------------------------------------------------------------------------------


def test_real_yelp_sample_loads_without_problems() -> None:
    business = shared_path("yelp", BUSINESS_FILE)
    review = shared_path("yelp", REVIEW_FILE)
    errors: list[LineError] = []
    pois = list(stream_businesses(business, errors))
    assert errors == []
    by_type = {t: sum(p.poi_type == t for p in pois) for t in ("restaurant", "hotel", "attraction")}
    # 332 businesses carry "Restaurants"; the weaker food keywords add cafés, bakeries...
    # (measured on the file)
    assert by_type["restaurant"] >= 332 and by_type["hotel"] > 0 and by_type["attraction"] > 0
    for poi in pois:
        assert set(poi.attributes) <= set(ATTRIBUTE_KEYS)
        assert poi.price_level is None or 1 <= poi.price_level <= 4
    # every business id of the file, mapped or not: the SOURCES note says 77 reviews match one
    all_ids = {obj["business_id"] for _, obj in iter_json_lines(business, [])}
    assert len(all_ids) == 1000
    matched = list(stream_reviews(review, errors, business_ids=all_ids))
    assert len(matched) == 77 and errors == []
    noise = [p.attributes["noise"] for p in pois if "noise" in p.attributes]
    assert noise and set(noise) <= {"quiet", "average", "loud", "very_loud"}


@settings(max_examples=150, deadline=None)
@given(
    business_id=st.text(min_size=1, max_size=25),
    text=st.text(max_size=80).map(lambda t: t + ' "business_id":"decoy" '),
    text_first=st.booleans(),
    compact=st.booleans(),
)
def test_prefilter_never_drops_a_wanted_line(
    business_id: str, text: str, text_first: bool, compact: bool
) -> None:
    from groundtrace.crs.kb.yelp import business_id_prefilter

    fields = [("text", text), ("business_id", business_id)]
    obj = dict(fields if text_first else fields[::-1])
    line = (
        json.dumps(obj, separators=(",", ":") if compact else None, ensure_ascii=False).encode("utf-8")
        + b"\n"
    )
    assert business_id_prefilter({business_id})(line)
    # an unwanted plain id is skipped without parsing (the decoy inside the text is never taken for the key)
    if compact and business_id.isalnum() and business_id.isascii():
        assert not business_id_prefilter({"decoy"})(line)


_yelp_keys = st.sampled_from(
    ["NoiseLevel", "WiFi", "Alcohol", "RestaurantsAttire", "Ambience", "GoodForMeal", "BusinessParking",
     "RestaurantsPriceRange2", "HasTV", "DogsAllowed", "Caters"]
)  # fmt: skip
_raw_values = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["None", "True", "False", "u'quiet'", "'none'", "2", "{'lot': True}", "{'romantic': None}"]
    ),
    st.none(),
    st.booleans(),
    st.integers(),
    _literals.map(repr),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_yelp_keys, _raw_values, max_size=8))
def test_map_attributes_output_is_always_canonical(raw: dict) -> None:
    attrs, price = map_attributes(raw)
    assert set(attrs) <= set(ATTRIBUTE_KEYS)
    assert price is None or (isinstance(price, int) and 1 <= price <= 4)
    for key, value in attrs.items():
        if key in ("ambience", "good_for_meal"):
            assert isinstance(value, list) and value == sorted(value)
        elif key in ("noise", "wifi", "alcohol", "attire"):
            assert isinstance(value, str)
        else:
            assert isinstance(value, bool)


def test_unpaired_surrogate_lines_are_reported_and_the_rest_kept(tmp_path: Path) -> None:
    """``"\\ud800"`` decodes to a lone surrogate no UTF-8 file or SQLite text can hold: report, skip, go
    on."""
    lines = [
        '{"review_id": "r0", "business_id": "b1", "stars": 4, "text": "Great food \\ud800 here"}',
        '{"review_id": "r1", "business_id": "b1", "stars": 4, "text": "Smiles \\ud83d\\ude00 all round"}',
        '{"review_id": "r2", "business_id": "b1", "stars": 4, "text": "A literal backslash-udon: \\\\udon"}',
        '{"review_id": "r3", "business_id": "b1", "stars": 4, "text": "Lone low \\uDC00 surrogate"}',
    ]
    path = tmp_path / REVIEW_FILE
    path.write_text("\n".join(lines), encoding="utf-8")
    errors: list[LineError] = []
    reviews = list(stream_reviews(path, errors))
    assert [r.review_id for r in reviews] == ["r1", "r2"]
    assert reviews[0].text == "Smiles \U0001f600 all round" and reviews[1].text.endswith("\\udon")
    assert [(e.line, "surrogate" in e.message) for e in errors] == [(1, True), (4, True)]
    assert str(errors[0]).startswith(f"{path}:1: ")
    business = tmp_path / BUSINESS_FILE
    good = (
        '{"business_id": "b%d", "name": "%s", "latitude": 1, "longitude": 2, "stars": 4, "categories": "%s"}'
    )
    business.write_text(
        "\n".join(
            [
                good % (1, "Caf\\ud800", "Cafes"),
                good % (2, "Fine", "Cafes, X\\udfff"),
                good % (3, "Ok", "Cafes"),
            ]
        ),
        encoding="utf-8",
    )
    errors = []
    assert [p.poi_id for p in stream_businesses(business, errors)] == ["b3"]
    assert [e.line for e in errors] == [1, 2] and all("surrogate" in e.message for e in errors)


def test_cli_kb_build_survives_a_surrogate_in_a_review(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from groundtrace.cli import app
    from groundtrace.crs.kb.store import load_kb

    business = {
        "business_id": "b1",
        "name": "X",
        "city": "T",
        "latitude": 1.0,
        "longitude": 2.0,
        "stars": 4.0,
        "review_count": 5,
        "categories": "Restaurants",
    }
    (tmp_path / BUSINESS_FILE).write_text(json.dumps(business) + "\n", encoding="utf-8")
    reviews = [
        json.dumps({"review_id": f"r{i}", "business_id": "b1", "stars": 4, "text": f"Lovely dinner {i}"})
        for i in range(3)
    ]
    reviews[1] = reviews[1].replace("dinner", "dinner \\ud800")
    (tmp_path / REVIEW_FILE).write_text("\n".join(reviews) + "\n", encoding="utf-8")
    out = tmp_path / "kb.sqlite"
    result = CliRunner().invoke(
        app,
        [
            "crs",
            "kb",
            "build",
            "--yelp-dir",
            str(tmp_path),
            "--out",
            str(out),
            "--min-reviews",
            "1",
            "--min-review-chars",
            "0",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{REVIEW_FILE}:2: unpaired" in result.output.replace("\n", "")
    assert sorted(load_kb(out).reviews) == ["r0", "r2"]


def test_lines_that_are_not_utf8_are_reported_as_such_and_the_rest_kept(tmp_path: Path) -> None:
    """``json.loads(bytes)`` guesses UTF-16 from ``\\xff\\xfe`` and says "'utf-16-le' codec can't decode";
    lines are decoded as UTF-8 explicitly, so the message says what is wrong, with file:line."""
    review = '{"review_id": "r%d", "business_id": "b1", "stars": 4, "text": "Lovely caf\u00e9 %s"}'
    lines = [
        "\ufeff".encode() + (review % (0, "first")).encode(),  # a UTF-8 byte-order mark opening the file
        b"\xff\xfe" + (review % (1, "utf-16 guess")).encode(),
        (review % (2, "fine")).encode(),
        (review % (3, "latin-1")).encode("latin-1"),  # the é as one byte 0xe9
        (review % (4, "encoded surrogate")).encode().replace(b"\xc3\xa9", b"\xed\xa0\x80"),
        (review % (5, "last")).encode(),
    ]
    path = tmp_path / REVIEW_FILE
    path.write_bytes(b"\n".join(lines))
    errors: list[LineError] = []
    reviews = list(stream_reviews(path, errors))
    assert [r.review_id for r in reviews] == ["r0", "r2", "r5"]
    assert reviews[0].text == "Lovely caf\u00e9 first"  # the BOM is not part of the record
    assert [e.line for e in errors] == [2, 4, 5]
    assert all(e.message.startswith("not valid UTF-8: ") for e in errors), errors
    assert not any("utf-16" in e.message or "codec" in e.message for e in errors)
    assert (
        str(errors[0])
        == f"{path}:2: not valid UTF-8: invalid start byte (byte 0xff at byte offset 0 of the line)"
    )
    assert "byte 0xe9" in errors[1].message and "byte 0xed" in errors[2].message
    # the selective pass: the bad line of a wanted business is reported, one of another business is not
    errors = []
    assert [r.review_id for r in stream_reviews(path, errors, business_ids={"b1"})] == ["r0", "r2", "r5"]
    assert [e.line for e in errors] == [2, 4, 5]
    errors = []
    assert list(stream_reviews(path, errors, business_ids={"other"})) == [] and errors == []
    # a BOM later in the file is not silently accepted
    path.write_bytes(
        b"\n".join([(review % (0, "a")).encode(), "\ufeff".encode() + (review % (1, "b")).encode()])
    )
    errors = []
    assert [r.review_id for r in stream_reviews(path, errors)] == ["r0"]
    assert [e.line for e in errors] == [2] and "BOM" in errors[0].message
    # the business file goes through the same reader
    business = tmp_path / BUSINESS_FILE
    good = (
        '{"business_id": "b%d", "name": "Caf\u00e9 %d", "latitude": 1, "longitude": 2, "stars": 4, '
        '"categories": "Cafes"}'
    )
    business.write_bytes(
        b"\n".join(
            [
                b"\xff\xfe" + (good % (1, 1)).encode(),
                (good % (2, 2)).encode("latin-1"),
                (good % (3, 3)).encode(),
            ]
        )
    )
    errors = []
    assert [p.poi_id for p in stream_businesses(business, errors)] == ["b3"]
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [
        (1, "not valid UTF-8"),
        (2, "not valid UTF-8"),
    ]


def test_parse_literal_is_silent_on_invalid_escapes() -> None:
    """Untrusted attribute text with an invalid escape decodes without a DeprecationWarning/SyntaxWarning."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert parse_literal("'a\\[b'") == "a\\[b"
        assert parse_literal("u'quiet'") == "quiet"
    assert caught == []


def test_parse_literal_results_are_independent_copies() -> None:
    """Decoding is cached; a caller that edits a decoded dict must not change the next result."""
    raw = "{'garage': False, 'street': True}"
    first = parse_literal(raw)
    assert isinstance(first, dict)
    first["garage"] = "edited"
    assert parse_literal(raw) == {"garage": False, "street": True}
