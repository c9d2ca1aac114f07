from __future__ import annotations

import math
import re

import pint
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.evidence.normalize import (
    UREG,
    abbreviations,
    expand_abbreviation,
    load_abbreviations,
    magnitude_in,
    normalize_value,
    numbers_close,
    parse_bool,
    parse_quantity,
    parse_unit,
    same_dimension,
    values_equal,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", True),
        ("y", True),
        ("TRUE", True),
        ("1", True),
        ("✓", True),
        ("Contains milk", True),
        ("contains", True),
        ("with lid", True),
        ("included", True),
        ("no", False),
        ("N", False),
        ("false", False),
        ("0", False),
        ("none", False),
        ("without", False),
        ("gluten-free", False),
        ("Free from nuts", False),
        ("free-from", False),
        ("does not contain soy", False),
        ("Doesn't contain soy", False),
        ("non-GMO", False),
        ("no added sugar", False),
        ("may contain nuts", None),
        ("Not applicable", None),
        ("no information", None),
        ("No, it doesn't", False),
        ("N/A", None),
        ("unknown", None),
        ("", None),
        ("blue", None),
    ],
)
def test_parse_bool(text: str, expected: bool | None) -> None:
    assert parse_bool(text) is expected


@pytest.mark.parametrize(
    ("text", "magnitude", "unit"),
    [
        ("60 Hz", 60, "hertz"),
        ("60Hz", 60, "hertz"),
        ("60 hertz", 60, "hertz"),
        ("12 oz", 12, "ounce"),
        ("12 fl oz", 12, "fluid_ounce"),
        ("12 fl. oz.", 12, "fluid_ounce"),
        ("2000mAh", 2000, "milliampere_hour"),
        ("65 W", 65, "watt"),
        ("3.7V", 3.7, "volt"),
        ("16 GB", 16, "gigabyte"),
        ('15"', 15, "inch"),
        ("15 inch", 15, "inch"),
        ("5 lbs", 5, "pound"),
        ("500 ml", 500, "milliliter"),
        ("500 mL", 500, "milliliter"),
        ("2 L", 2, "liter"),
        ("1.5 kg", 1.5, "kilogram"),
        ("1,5 kg", 1.5, "kilogram"),
        ("1,500 g", 1500, "gram"),
        ("1 1/2 in", 1.5, "inch"),
        ("12 ct", 12, "piece"),
        ("2 x 150 ml", 300, "milliliter"),
        ("2×150ml", 300, "milliliter"),
        ("-5 °C", -5, "degree_Celsius"),
        ("42", 42, "dimensionless"),
    ],
)
def test_parse_quantity(text: str, magnitude: float, unit: str) -> None:
    q = parse_quantity(text)
    assert q is not None
    assert q.magnitude == pytest.approx(magnitude)
    assert q.units == UREG.Unit(unit)


@pytest.mark.parametrize("text", ["", "five grams", "5 stars", "10 x 20 cm", "1/0", "g 5", "12 oz and more"])
def test_parse_quantity_rejects(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        ("12 oz", "g", "340.2 g"),  # 12 × 28.349523125 g = 340.194... g
        ("12 fl oz", "ml", "354.9 ml"),  # 12 × 29.5735295625 ml = 354.882... ml
        ("1 lb", "g", "453.6 g"),  # 453.59237 g
        ('15"', "cm", "38.1 cm"),  # 15 × 2.54 cm
        ("2 L", "ml", "2000 ml"),
        ("1 GB", "MB", "1000 MB"),
        ("1 kWh", "Wh", "1000 Wh"),
        ("2 x 150 ml", "L", "0.3 L"),
        ("60", "Hz", "60 Hz"),  # a bare number is taken to be in the unit
        ("123456.7 mAh", "mAh", "123457 mAh"),  # integer digits are never rounded away
        ("0.0123456 kg", "kg", "0.01235 kg"),
        ("12 oz", "ml", None),  # mass into volume: incompatible
        ("twelve", "g", None),
    ],
)
def test_normalize_number(value: str, unit: str, expected: str | None) -> None:
    assert normalize_value(value, "number", unit=unit) == expected


def test_numbers_close_is_an_or_of_both_tolerances() -> None:
    assert numbers_close(100, 101.9)  # 1.9 apart: beyond 0.5 absolute, within 2% of 101.9 (2.038)
    assert numbers_close(3, 3.4)  # 13% apart, but within 0.5 absolute
    assert not numbers_close(10, 11)  # 1 apart (> 0.5) and 9.1% (> 2%)
    assert not numbers_close(100, 102.5)  # 2.5 > 0.5 and 2.5 > 0.02 × 102.5 = 2.05
    assert numbers_close(1000, 1020)  # 20 <= 0.02 × 1020 = 20.4
    assert not numbers_close(float("nan"), float("nan"))


def test_values_equal_numbers() -> None:
    assert values_equal("60 Hz", "60Hz", "number")
    assert values_equal("12 oz", "340 g", "number")  # 340.19 g vs 340 g; 12 oz vs 11.993 oz
    assert values_equal("0.5 L", "500 ml", "number")
    # close in kg (0.4 apart) but not in g: both must hold
    assert not values_equal("1 kg", "1400 g", "number")
    assert not values_equal("12 oz", "12 fl oz", "number")  # mass vs volume: never an exception
    assert not values_equal("5", "5 g", "number")  # bare number vs unit without a target unit
    assert values_equal("5", "5 g", "number", unit="g")
    assert not values_equal("5 V", "5 g", "number", unit="g")


def test_values_equal_bools_strings_enums() -> None:
    assert values_equal("Yes", "true", "bool")
    assert not values_equal("contains nuts", "nut-free", "bool")
    assert values_equal("NiMH", "nickel-metal hydride")
    assert values_equal("Nickel Metal Hydride", "ni-mh")
    assert values_equal("Li-ion", "Lithium Ion")
    assert values_equal("60Hz", "60 hz")
    assert values_equal("12 oz", "340 g") and values_equal("60 hertz", "60Hz")  # untyped: whole quantities
    assert not values_equal("12", "12.2")  # ...but bare numbers stay strings unless kind="number"
    assert not values_equal("NiMH", "Li-ion")
    assert values_equal("Stainless-Steel", "SS", "enum")


def test_normalize_enum_and_string() -> None:
    allowed = ["Stainless Steel", "Plastic", "Lithium-Ion"]
    assert normalize_value("stainless-steel", "enum", allowed=allowed) == "Stainless Steel"
    assert normalize_value("SS", "enum", allowed=allowed) == "Stainless Steel"
    assert normalize_value("LI ION", "enum", allowed=allowed) == "Lithium-Ion"
    assert normalize_value("glass", "enum", allowed=allowed) is None
    assert normalize_value("  NiMH   Battery. ") == "nickel metal hydride battery"
    assert normalize_value("yes", "bool") == "true" and normalize_value("Free from", "bool") == "false"
    assert normalize_value("maybe", "bool") is None


def test_string_normalisation_idempotent_when_casefold_reorders_marks() -> None:
    once = normalize_value("İ\u0abc")  # casefold("İ") = "i" + U+0307, which must move after U+0ABC
    assert once is not None and normalize_value(once) == once


def test_expand_abbreviation() -> None:
    assert expand_abbreviation("NiMH battery") == "nickel-metal hydride battery"
    assert (
        expand_abbreviation("nimh, LI ION, w/lid, S/S bowl")
        == "nickel-metal hydride, lithium-ion, with lid, stainless steel bowl"
    )
    assert expand_abbreviation("glass bowls") == "glass bowls"  # "ss" inside a word is not "SS"


def test_load_abbreviations_reports_bad_entries_by_line_and_keeps_the_rest() -> None:
    text = "good one: [G1]\n42: [X]\nbad list: G2\nrepeat: [g-1, R2]\n"
    with pytest.warns(UserWarning) as caught:
        table = load_abbreviations(text, "custom.yaml")
    assert table == {"good one": ["G1"], "repeat": ["R2"]}
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith("custom.yaml:2: skipped")
    assert messages[1].startswith("custom.yaml:3: skipped 'bad list'")
    assert messages[2].startswith("custom.yaml:4: alias 'g-1' is listed twice")
    with pytest.raises(ValueError, match="custom.yaml:1"):
        load_abbreviations("- just a list", "custom.yaml")
    with pytest.raises(ValueError, match=r"custom.yaml:3: invalid YAML"):  # where the parser gave up
        load_abbreviations("good: [G1]\nbroken: [unclosed\n", "custom.yaml")


def test_abbreviation_data_file() -> None:
    table = abbreviations()
    assert len(table) >= 25
    keys = [re.sub(r"[-\s]+", "", a.casefold()) for aliases in table.values() for a in aliases]
    assert len(keys) == len(set(keys)), "an alias is listed twice"
    for expansion in table:
        assert expand_abbreviation(expansion) == expansion, f"{expansion!r} contains an alias"


UNITS = ["g", "kg", "oz", "fl oz", "lb", "ml", "L", "mAh", "W", "V", "Hz", "GB", '"', "inch", "ct", "°C", ""]
quantity_text = st.builds(
    lambda n, d, unit, space: f"{n}{'.' + str(d) if d is not None else ''}{' ' if space else ''}{unit}",
    st.integers(-5000, 100000),
    st.one_of(st.none(), st.integers(0, 999)),
    st.sampled_from(UNITS),
    st.booleans(),
)
free_text = (
    st.text(alphabet=st.sampled_from(list("abs NIMHLi-ionw/o_.12,\"'ÉßＧ—")), max_size=30)
    | st.text(max_size=30)
    | st.text(st.characters(categories=["Lu", "Ll", "Mn", "Nd", "Pd", "Po", "Zs"]), max_size=12)
)


def test_huge_numbers_format_without_decimal_overflow() -> None:
    """29 integer digits exceed decimal's default 28-digit precision (hypothesis found it)."""
    once = normalize_value("9999999999999998483608109057", "number")
    assert once == "10000000000000000000000000000"
    assert normalize_value(once, "number") == once


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(quantity_text, free_text),
    st.sampled_from(["bool", "number", "enum", "string"]),
    st.sampled_from([None, "g", "ml", "Hz"]),
)
def test_normalize_value_idempotent(value: str, kind: str, unit: str | None) -> None:
    allowed = ["Stainless Steel", "NiMH", "red", "Li-ion"] if kind == "enum" else None
    once = normalize_value(value, kind, unit=unit, allowed=allowed)  # type: ignore[arg-type]
    if once is not None:
        assert normalize_value(once, kind, unit=unit, allowed=allowed) == once  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(quantity_text, free_text),
    st.one_of(quantity_text, free_text),
    st.sampled_from(["bool", "number", "enum", "string"]),
    st.sampled_from([None, "g", "in"]),
)
def test_values_equal_reflexive_and_symmetric(a: str, b: str, kind: str, unit: str | None) -> None:
    assert values_equal(a, a, kind, unit)  # type: ignore[arg-type]
    assert values_equal(a, b, kind, unit) == values_equal(b, a, kind, unit)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.01, 1e6),
    st.sampled_from([("oz", "g"), ("lb", "kg"), ("fl oz", "ml"), ("inch", "cm"), ("L", "ml")]),
)
def test_unit_conversion_round_trip(x: float, units: tuple[str, str]) -> None:
    src, dst = units
    converted = normalize_value(f"{x} {src}", "number", unit=dst)
    assert converted is not None
    assert values_equal(f"{x} {src}", converted, "number", unit=dst)
    expected = (
        UREG.Quantity(x, UREG.Unit({"fl oz": "fluid_ounce", "L": "liter"}.get(src, src))).to(dst).magnitude
    )
    assert float(converted.split()[0]) == pytest.approx(expected, rel=1e-3, abs=1e-9)


_UNITS = [
    "g",
    "kg",
    "oz",
    "lb",
    "mg",
    "ml",
    "L",
    "fl oz",
    "gal",
    "in",
    "cm",
    "mm",
    "ft",
    "W",
    "kW",
    "V",
    "mAh",
    "Wh",
]
_UNITS += ["Hz", "GHz", "GB", "TB", "percent", "piece", "degC", "degF", "kelvin", "count"]


@settings(max_examples=300)
@given(
    magnitude=st.one_of(
        st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(-(10**6), 10**6)
    ),
    source=st.sampled_from(_UNITS),
    target=st.sampled_from(_UNITS),
)
def test_magnitude_in_is_bit_identical_to_pint(magnitude: float, source: str, target: str) -> None:
    """The cached-factor conversion equals ``float(q.to(unit).magnitude)`` exactly (offset units such as
    degC go through pint), and is None exactly where pint raises a dimensionality / offset error."""
    src, dst = parse_unit(source), parse_unit(target)
    assert src is not None and dst is not None
    q = UREG.Quantity(magnitude, src)
    try:
        expected: float | None = float(q.to(dst).magnitude)
    except (pint.DimensionalityError, pint.OffsetUnitCalculusError):
        expected = None
    got = magnitude_in(q, dst)
    assert got == expected or (
        got is not None and expected is not None and math.isnan(got) and math.isnan(expected)
    )


@pytest.mark.parametrize("source", _UNITS)
def test_same_dimension_equals_pint(source: str) -> None:
    src = parse_unit(source)
    assert src is not None
    q = UREG.Quantity(2.5, src)
    for target in _UNITS:
        dst = parse_unit(target)
        assert dst is not None
        assert same_dimension(q, dst) == (q.dimensionality == (1 * dst).dimensionality), (source, target)
