"""Issue 24 item 3: one number reader (catalog/scout/numbers.py) for the extractors and the Judge.

Hand-written expectations, then a hypothesis property: a number formatted the way Babel writes it for a
locale, inside a text that shows that locale's convention, reads back to the same value or is flagged
ambiguous with the value among its readings — never a silent 1000x error.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from babel.numbers import format_decimal
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.catalog.scout.numbers import find_numbers, plausible, resolve, text_convention
from groundtrace.catalog.scout.quantities import quantities


def _one(text: str) -> tuple[float, bool]:
    found = find_numbers(text)
    assert len(found) == 1, found
    return found[0].value, found[0].ambiguous


@pytest.mark.parametrize(
    ("text", "value", "ambiguous"),
    [
        ("10 000 mAh", 10000.0, False),  # a group starting with 0 cannot be a number of its own
        ("10\u202f000 mAh", 10000.0, False),
        ("10\u00a0000 mAh", 10000.0, False),
        ("1'200 mAh", 1200.0, False),
        ("1\u2019200 mAh", 1200.0, False),
        ("1,200 mAh", 1200.0, False),  # no other evidence: thousands comma
        ("1.200 mAh", 1.2, True),  # 1.2 or 1200
        ("1,5 L", 1.5, False),
        ("1.234,56 EUR", 1234.56, False),
        ("1,234.56 USD", 1234.56, False),
        ("1/2 cup", 0.5, False),
        ("1 1/2 cups", 1.5, False),
        ("1-1/2 in", 1.5, False),
        ("\u00bd cup", 0.5, False),
        ("-3.5 C", -3.5, False),
        ("\u22124 dB", -4.0, False),
        ("3 100 ml", 3100.0, True),  # maybe "3" and "100 ml"
    ],
)
def test_reads_number_forms(text: str, value: float, ambiguous: bool) -> None:
    assert _one(text) == (value, ambiguous)


def test_ranges() -> None:
    (r,) = find_numbers("Input: 100-240 V")
    assert (r.low, r.value, r.is_range) == (100.0, 240.0, True)
    (r,) = find_numbers("5 to 10 W")
    assert (r.low, r.value) == (5.0, 10.0)
    (r,) = find_numbers("-5 to -2 C")
    assert (r.low, r.value) == (-5.0, -2.0)


def test_text_convention_decides_between_readings() -> None:
    assert text_convention("Volume 1,5 L; weight 2,25 kg") == "comma"
    assert text_convention("3.7 V, 2.5 A") == "dot"
    assert text_convention("12 oz") is None
    # "1,500" next to a decimal comma may be 1.5 or 1500: ambiguous, 1.5 first
    n = next(x for x in find_numbers("1,5 L bottle, 1,500 ml jug") if x.text == "1,500")
    assert n.ambiguous and n.readings == (1.5, 1500.0)
    # a decimal-comma text groups thousands with spaces: "2 200 W" is one number there
    n = next(x for x in find_numbers("Capacity 1,5 L, power 2 200 W") if x.text == "2 200")
    assert (n.value, n.ambiguous) == (2200.0, False)
    # "1.200" next to a decimal comma is dot grouping
    n = next(x for x in find_numbers("2,5 kg, 1.200 mAh") if x.text == "1.200")
    assert (n.value, n.ambiguous) == (1200.0, False)


def test_plausibility_resolves_a_power_bank_but_not_a_kettle() -> None:
    (n,) = find_numbers("1.200 mAh")
    assert (resolve(n, "milliampere_hour").value, resolve(n, "milliampere_hour").ambiguous) == (1200.0, False)
    (n,) = find_numbers("1.500 W")
    assert resolve(n, "watt").ambiguous  # 1.5 W and 1500 W both exist
    assert not plausible(1.2, "milliampere_hour") and plausible(1200, "milliampere_hour")
    assert plausible(5.0, None)


def test_quantities_use_the_reader() -> None:
    (q,) = quantities("Battery capacity: 10 000 mAh.")
    assert (q.value, q.unit, q.ambiguous) == (10000.0, "milliampere_hour", False)
    (q,) = quantities("Power: 1.500 W")
    assert q.ambiguous and q.readings == (1.5, 1500.0)


_LOCALE_CONTEXT = {"en": "weight 2.5 kg; ", "de": "Gewicht 2,5 kg; ", "fr": "poids 2,5 kg ; ", "de_CH": ""}


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=0, max_value=99_999_999),
    st.integers(min_value=0, max_value=3),
    st.sampled_from(sorted(_LOCALE_CONTEXT)),
    st.booleans(),
)
def test_formatted_numbers_read_back_or_are_flagged(
    units: int, places: int, locale: str, negative: bool
) -> None:
    value = Decimal(units).scaleb(-places) * (-1 if negative else 1)
    fmt = "#,##0" + ("." + "0" * places if places else "")
    token = format_decimal(value, format=fmt, locale=locale)
    found = [
        n
        for n in find_numbers(_LOCALE_CONTEXT[locale] + token)
        if n.span[1] == len(_LOCALE_CONTEXT[locale]) + len(token)
    ]
    assert len(found) == 1, (token, found)
    n = found[0]
    want = float(value)
    if n.ambiguous:
        assert any(abs(r - want) <= 1e-9 * max(1.0, abs(want)) for r in n.readings), (token, n)
    else:
        assert abs(n.value - want) <= 1e-9 * max(1.0, abs(want)), (token, n)  # never a silent 1000x error
