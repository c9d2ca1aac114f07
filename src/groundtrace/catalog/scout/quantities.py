"""Number + unit parsing for extraction: a closed list of unit tokens, quantity mentions in text,
conversion to an attribute's unit (``core.evidence.normalize.parse_quantity``), and number formatting.

* :func:`unit_key` — the pint unit name of a unit token (``"fl. oz"`` → ``fluid_ounce``), or None.
* :func:`quantities` — every ``number unit`` mention in a text, with its span.
* :func:`accepts` — the value string of a quantity for a number attribute (converted to its unit), or
  None when the dimensions differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from groundtrace.catalog.model import AttributeSpec
from groundtrace.catalog.scout.numbers import find_numbers, resolve

_UNIT_TOKENS: dict[str, str] = {
    "fl oz": "fluid_ounce",
    "floz": "fluid_ounce",
    "fluid ounce": "fluid_ounce",
    "fluid ounces": "fluid_ounce",
    "oz": "ounce",
    "ounce": "ounce",
    "ounces": "ounce",
    "lb": "pound",
    "lbs": "pound",
    "pound": "pound",
    "pounds": "pound",
    "kg": "kilogram",
    "kilogram": "kilogram",
    "kilograms": "kilogram",
    "mg": "milligram",
    "g": "gram",
    "gram": "gram",
    "grams": "gram",
    "ml": "milliliter",
    "milliliter": "milliliter",
    "milliliters": "milliliter",
    "millilitre": "milliliter",
    "millilitres": "milliliter",
    "cl": "centiliter",
    "l": "liter",
    "liter": "liter",
    "liters": "liter",
    "litre": "liter",
    "litres": "liter",
    "gal": "gallon",
    "gallon": "gallon",
    "gallons": "gallon",
    "qt": "quart",
    "quart": "quart",
    "quarts": "quart",
    "mah": "milliampere_hour",
    "wh": "watt_hour",
    "kwh": "kilowatt_hour",
    "kw": "kilowatt",
    "w": "watt",
    "watt": "watt",
    "watts": "watt",
    "v": "volt",
    "volt": "volt",
    "volts": "volt",
    "hz": "hertz",
    "khz": "kilohertz",
    "mhz": "megahertz",
    "ghz": "gigahertz",
    "mm": "millimeter",
    "cm": "centimeter",
    "m": "meter",
    "in": "inch",
    "inch": "inch",
    "inches": "inch",
    '"': "inch",
    "”": "inch",
    "ft": "foot",
    "feet": "foot",
    "gb": "gigabyte",
    "tb": "terabyte",
    "mb": "megabyte",
    "%": "percent",
    "percent": "percent",
}
_DISPLAY = {
    "fluid_ounce": "fl oz",
    "ounce": "oz",
    "pound": "lb",
    "gram": "g",
    "kilogram": "kg",
    "milligram": "mg",
    "milliliter": "mL",
    "centiliter": "cL",
    "liter": "L",
    "gallon": "gal",
    "quart": "qt",
}
# the unit right after a number (the number itself is read by ``numbers.find_numbers``)
_UNIT_AFTER = re.compile(
    r"\s*-?\s*(?P<unit>fl\.?\s*oz|fluid\s+ounces?|oz|ounces?|lbs?|pounds?|kg|"
    r"kilograms?|mg|grams?|g|ml|millilit(?:er|re)s?|cl|lit(?:er|re)s?|l|gal(?:lons?)?|qt|quarts?|mah|kwh|wh|"
    r"kw|watts?|w|volts?|v|khz|mhz|ghz|hz|mm|cm|m|inch(?:es)?|in|ft|feet|gb|tb|mb|percent)(?![\w])\.?"
    r"|\s*(?P<unit2>%|\"|”)",
    re.IGNORECASE,
)
_MODEL_BEFORE = re.compile(r"[A-Za-z]-$")


def unit_key(token: str) -> str | None:
    t = re.sub(r"\s+", " ", token.lower().rstrip(".")).replace("fl. oz", "fl oz").replace("fl.oz", "fl oz")
    return _UNIT_TOKENS.get(t)


@lru_cache(maxsize=16384)
def convert(raw: str, target: str) -> float | None:
    """Magnitude of the quantity text ``raw`` in ``target`` units (``core.normalize.parse_quantity``;
    None when unparseable, dimensionless or of another dimension). Pure, so cached: pint parsing is the
    offline engine's hottest path and catalogs repeat the same few quantities."""
    # deferred: core.evidence.normalize loads pint, rapidfuzz and scipy (~0.2 s)
    from groundtrace.core.evidence.normalize import is_unitless, magnitude_in, parse_quantity, parse_unit

    q = parse_quantity(re.sub(r"\s*%$", " percent", raw.strip()))
    unit = parse_unit(target)
    if q is None or unit is None or is_unitless(q):
        return None
    try:
        return magnitude_in(q, unit)
    except Exception:  # noqa: BLE001 - pint errors beyond DimensionalityError: incompatible units
        return None


@lru_cache(maxsize=16384)
def fmt(x: float) -> str:
    """A number as ``core.normalize`` writes it (4 significant digits, integer digits kept)."""
    # deferred: core.evidence.normalize loads pint/scipy (~0.2 s)
    from groundtrace.core.evidence.normalize import normalize_value

    return normalize_value(repr(float(x)), "number") or f"{x:g}"


@dataclass(frozen=True)
class Qty:
    value: float
    unit: str  # pint unit name from the token table (display symbol lookup)
    start: int
    end: int
    raw: str  # "<value> <unit token>", parsed by core.normalize.parse_quantity
    ambiguous: bool = False  # the number has two plausible readings ("1.500 W"): the Judge sends it to review
    readings: tuple[float, ...] = ()  # every plausible reading, ``value`` first
    low: float | None = None  # the low end of a range ("100-240 V")


def quantities(text: str) -> list[Qty]:
    """Every number+unit mention of ``text`` (numbers: ``numbers.find_numbers`` — thousands separators,
    decimal commas, fractions, ranges; units from a closed token list; a reading implausible for the unit,
    ``numbers.PLAUSIBLE``, is dropped). Cached per distinct text (every number attribute of a template
    scans the same Documents); callers get their own list."""
    return list(_quantities(text))


@lru_cache(maxsize=256)
def _quantities(text: str) -> tuple[Qty, ...]:
    out = []
    for number in find_numbers(text):
        start, end = number.span
        if number.value < 0 or _MODEL_BEFORE.search(text[max(0, start - 2) : start]):
            continue  # "SM-G930 5 W": a model number; a negative size is none
        m = _UNIT_AFTER.match(text, end)
        if m is None:
            continue
        unit = m.group("unit") or m.group("unit2")
        key = unit_key(unit)
        if key is None:
            continue
        number = resolve(number, key)
        stop = m.end() - (1 if m.group(0).endswith(".") and m.group("unit") else 0)
        raw_num = f"{number.value!r} {unit}"  # "2.2-Pound" -> "2.2 Pound" for parse_quantity
        out.append(
            Qty(number.value, key, start, stop, raw_num, number.ambiguous, number.readings, number.low)
        )
    return tuple(out)


def dimension_units(spec: AttributeSpec) -> list[str]:
    """Target units a number attribute accepts: its unit, or its recommended unit symbols."""
    if spec.unit:
        return [spec.unit]
    return list(_unit_symbols(tuple(spec.recommended_values)))


@lru_cache(maxsize=1024)
def _unit_symbols(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(u for u in values if unit_key(u) is not None)


def accepts(spec: AttributeSpec, qty: Qty) -> str | None:
    """The value string of ``qty`` for ``spec`` (converted to its unit), or None when incompatible.
    Cached per (quantity, unit or recommended units): every number attribute of a template asks it about
    every quantity of a Document, once for itself and once per sibling attribute."""
    if spec.unit:
        return _accepts_in(qty.raw, spec.unit)
    return _accepts_any(qty.raw, qty.value, qty.unit, tuple(spec.recommended_values))


@lru_cache(maxsize=16384)
def _accepts_in(raw: str, unit: str) -> str | None:
    converted = convert(raw, unit)
    return None if converted is None else f"{fmt(converted)} {unit}"


@lru_cache(maxsize=16384)
def _accepts_any(raw: str, value: float, qty_unit: str, recommended: tuple[str, ...]) -> str | None:
    for unit in _unit_symbols(recommended):
        if convert(raw, unit) is not None:
            return f"{fmt(value)} {_DISPLAY.get(qty_unit, qty_unit)}"
    return None
