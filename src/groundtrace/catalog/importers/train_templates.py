"""Evaluation templates built from a dataset's *train* split (OA-Mine, AE-110K have no category schema).

Contract: ``templates_from_gold(skus, gold, max_vocab=15)`` → one :class:`CategoryTemplate` per SKU
category, whose attributes are the gold attributes annotated in that category's SKUs (first-seen order),
typed from their gold values (:func:`infer_spec`):

* ``bool`` — every value is a yes/no word (``"true"``, ``"false"``, ``"yes"``, ``"no"``);
* ``enum``, multi-valued — list gold (``dietary_labels``: ``["gluten_free", "vegan"]``), allowed values =
  the items seen (the built-in template's allowed values when it has the same slug and they hold them);
* ``number`` with unit symbols — at least ``NUMBER_SHARE`` of the labels state a quantity with a unit
  (``"12 oz"``, ``"2.2 Pound Bag"``, ``"13cm"``) or a count (``"100 Count"``): ``recommended_values`` =
  the unit symbols seen (the rule engine converts to none of them, the value keeps its own unit), the
  definition says when counts occur; only units of the attribute's main dimensions count — those stated by
  at least ``DIMENSION_SHARE`` of the labels with a unit (cache sizes in MB: a ``"1G"`` read as grams is
  dropped, :func:`_main_dimensions`);
* ``number`` without a unit (a pack/piece count) — at least ``NUMBER_SHARE`` state a whole count (``"3"``,
  ``"Pack of 3"``, ``"6-pack"``, ``"24 Count"``) and the slug names a count (pack, count, quantity,
  pieces, number) or some values name one ("Pack of 3", "60 Count": bare numbers alone may be sizes);
* ``string`` otherwise, ``recommended_values`` = the distinct observed values when at most
  ``max_vocab`` of them (values without a letter are never vocabulary: the rule engine would read a bare
  ``"4"`` or ``"16"`` wherever the text writes that number — a ``6" leg`` as 6 shelves) — or, when at least
  ``PREFIX_SHARE`` of the category's labelled titles *open* with their value (a brand: "Mt. Olive Kosher
  Dills"), every observed value up to ``MAX_PREFIX_VOCAB`` with ``title_prefix: true``, so the offline
  engine reads a known value opening a title as stated (brand from title prefixes, learned per category).

``examples`` = the first 10 values; ``safety_critical`` / ``image_friendly`` follow the built-in
template's attribute of the same slug (allergens, dietary labels). Only the *train* split may be used, so
the templates never see the validation values they are scored on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import cache

from groundtrace.catalog.model import SKU, AttributeSpec, CategoryTemplate, GoldLabel
from groundtrace.catalog.templates import load_templates
from groundtrace.core.evidence.normalize import parse_quantity

NUMBER_SHARE = 0.8
PREFIX_SHARE = 0.8
DIMENSION_SHARE = 0.1
MAX_PREFIX_VOCAB = 2000
_BOOL_WORDS = frozenset({"true", "false", "yes", "no"})
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*-?\s*")
_WORD = re.compile(r"([A-Za-z\"”'%][A-Za-z.]*)\s*")
_COUNT_WORDS = re.compile(
    r"^(?:count|ct|pack|packs|pk|pcs?|pieces?|capsules?|tablets?|softgels?|pods?|bags?|sachets?|units?|ea|"
    r"sticks?|rolls?|sheets?|pairs?|bars?|cans?|bottles?|lozenges?|gummies|servings?)\.?$",
    re.IGNORECASE,
)
_PACK_OF = re.compile(
    r"\b(?:pack|case|box|set|bundle|lot)\s+of\s+(\d+)\b|\b(\d+)\s*[-/]?\s*(?:pack|pk)\b", re.IGNORECASE
)
_COUNT_SLUG = re.compile(r"pack|count|quantity|pieces?|number")
#: dimensions of a product quantity: mass, volume, length, area, power, voltage, charge, energy, frequency
_DIMENSIONS = frozenset(
    {
        "[mass]",
        "[length] ** 3",
        "[length]",
        "[length] ** 2",
        "[mass] * [length] ** 2 / [time] ** 3",
        "[mass] * [length] ** 2 / [time] ** 3 / [current]",
        "[current] * [time]",
        "[mass] * [length] ** 2 / [time] ** 2",
        "1 / [time]",
    }
)
_DATA_UNITS = frozenset({"kb", "mb", "gb", "tb"})


def _unit_of(number: str, unit: str, glued: bool) -> str | None:
    """``unit`` (lower case) when ``number unit`` is a product quantity: a pint unit of a product dimension;
    a one-letter unit only glued to its number or in lower case (``"13cm"``, ``"2L"``, ``"500 g"``; a shoe
    size ``"9.5 M"`` or ``"8 W"`` is no quantity)."""
    if len(unit) == 1 and not glued and not unit.islower():
        return None
    if unit.lower() in _DATA_UNITS:
        return unit.lower()
    q = parse_quantity(f"{number} {unit}")
    if q is None or q.unitless or str(q.dimensionality) not in _DIMENSIONS:
        return None
    return unit.lower()


def _dimension(unit: str) -> str:
    """The physical dimension of a unit symbol ``_unit_of`` accepted (``"[information]"`` for data units)."""
    if unit in _DATA_UNITS:
        return "[information]"
    q = parse_quantity(f"1 {unit}")
    return "" if q is None else str(q.dimensionality)


def _main_dimensions(parsed: list[tuple[list[str], bool]]) -> list[tuple[list[str], bool]]:
    """``parsed`` (:func:`_quantity_units` per label) keeping only the units of the attribute's main
    dimensions: those stated by at least ``DIMENSION_SHARE`` of the labels with a unit. A stray reading of
    another dimension (``"1G"`` read as grams, ``"1M"`` as metres among cache sizes in MB) would make the
    rule engine take every quantity of that dimension in the text as the value (a ``3.5-inch`` drive bay
    as the cache size)."""
    per_label = [{_dimension(u) for u in units} for units, _count in parsed]
    stated = Counter(d for dims in per_label for d in dims)
    with_unit = sum(bool(dims) for dims in per_label)
    kept = {d for d, n in stated.items() if d and n >= DIMENSION_SHARE * with_unit}
    return [([u for u in units if _dimension(u) in kept], count) for units, count in parsed]


def _quantity_units(value: str) -> tuple[list[str], bool]:
    """``(unit symbols of the quantities value states, whether it states a whole count)``."""
    units: list[str] = []
    count = bool(_PACK_OF.search(value)) or bool(re.fullmatch(r"\s*\d+\s*", value))
    for m in _NUMBER.finditer(value):
        words = []
        pos = m.end()
        for _ in range(2):
            w = _WORD.match(value, pos)
            if not w:
                break
            words.append(w.group(1).rstrip("."))
            pos = w.end()
        if words and _COUNT_WORDS.match(words[0]):
            count = count or "." not in m.group(1) and "," not in m.group(1)
            continue
        glued = not value[m.end(1) : m.end()].strip() and m.end() == m.end(1)
        for k in range(len(words), 0, -1):
            unit = _unit_of(m.group(1), " ".join(words[:k]), glued)
            if unit is not None:
                units.append(unit)
                break
    return units, count


@cache
def _builtin_specs() -> dict[str, AttributeSpec]:
    out: dict[str, AttributeSpec] = {}
    for template in load_templates():
        for spec in template.attributes:
            out.setdefault(spec.slug, spec)
    return out


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def opens_title(value: str, title: str) -> bool:
    """True when ``title`` starts with ``value`` as whole words (case and punctuation ignored)."""
    v, t = _norm(value), _norm(title)
    return bool(v) and (t == v or t.startswith(v + " "))


def infer_spec(
    slug: str, values: list[str | list[str]], max_vocab: int = 15, prefix_share: float = 0.0
) -> AttributeSpec:
    """The typed :class:`AttributeSpec` of ``slug`` from its gold values in one category (module docstring);
    ``values`` holds one entry per labelled SKU (a list for list gold), ``prefix_share`` is the share of
    those SKUs whose title opens with their value."""
    name = slug.replace("_", " ").title()
    base = _builtin_specs().get(slug)
    flags = {"safety_critical": base.safety_critical, "image_friendly": base.image_friendly} if base else {}
    definition = f"{slug.replace('_', ' ')} as annotated in the train split"
    items = [v for value in values for v in (value if isinstance(value, list) else [value])]
    distinct = list(dict.fromkeys(v for v in items if v and any(ch.isalnum() for ch in v)))
    if any(isinstance(v, list) for v in values):
        allowed = distinct
        if base is not None and base.type == "enum" and set(distinct) <= set(base.allowed_values):
            allowed = list(base.allowed_values)
        return AttributeSpec(slug=slug, name=name, definition=definition, type="enum", allowed_values=allowed,
                             multi_valued=True, examples=distinct[:10], **flags)  # fmt: skip
    strings = [v for v in values if isinstance(v, str) and v.strip()]
    if distinct and all(v.strip().lower() in _BOOL_WORDS for v in distinct):
        return AttributeSpec(slug=slug, name=name, definition=definition, type="bool",
                             allowed_values=["true", "false"], **flags)  # fmt: skip
    parsed = _main_dimensions([_quantity_units(v) for v in strings])
    with_unit = sum(bool(units) for units, _count in parsed)
    counts = sum(count for units, count in parsed if not units)
    if strings and (with_unit + counts) >= NUMBER_SHARE * len(strings):
        if with_unit >= counts:
            units = list(dict.fromkeys(u for us, _c in parsed for u in us))
            kinds = "a quantity with its unit" + (" or a count" if counts else "")
            return AttributeSpec(slug=slug, name=name, definition=f"{definition}: {kinds}", type="number",
                                 recommended_values=units, examples=distinct[:10], **flags)  # fmt: skip
        named = any(
            c and not re.fullmatch(r"\s*\d+\s*", v) for v, (_u, c) in zip(strings, parsed, strict=True)
        )
        if _COUNT_SLUG.search(slug) or named:
            return AttributeSpec(slug=slug, name=name, definition=f"{definition}: a whole count",
                                 type="number", examples=distinct[:10], **flags)  # fmt: skip
    prefix = prefix_share >= PREFIX_SHARE and len(strings) >= 5
    limit = MAX_PREFIX_VOCAB if prefix else max_vocab
    return AttributeSpec(
        slug=slug,
        name=name,
        definition=definition + ("; usually opens the product title" if prefix else ""),
        type="string",
        recommended_values=[v for v in distinct if any(ch.isalpha() for ch in v)]
        if len(distinct) <= limit
        else [],
        examples=distinct[:10],
        title_prefix=prefix,
        **flags,
    )


def templates_from_gold(
    skus: Iterable[SKU], gold: Iterable[GoldLabel], max_vocab: int = 15
) -> list[CategoryTemplate]:
    """One typed template per category of ``skus`` from the attributes its ``gold`` labels name."""
    skus = list(skus)
    category_of = {sku.sku_id: sku.category for sku in skus}
    title_of = {sku.sku_id: sku.title for sku in skus}
    values: dict[str, dict[str, list[str | list[str]]]] = {}
    opening: dict[tuple[str, str], int] = {}
    for label in gold:
        category = category_of.get(label.sku_id)
        if not category:
            continue
        seen = values.setdefault(category, {}).setdefault(label.attribute, [])
        if label.value not in (None, "", []):
            seen.append(label.value)
            if isinstance(label.value, str) and opens_title(label.value, title_of[label.sku_id]):
                opening[(category, label.attribute)] = opening.get((category, label.attribute), 0) + 1
    return [
        CategoryTemplate(
            category=category,
            attributes=[
                infer_spec(slug, vals, max_vocab, opening.get((category, slug), 0) / max(1, len(vals)))
                for slug, vals in attrs.items()
            ],
            description="built from the train split's gold labels",
        )
        for category, attrs in values.items()
    ]


def title_key(title: str) -> str:
    """A title compared case- and punctuation-insensitively (the split-overlap check)."""
    return _norm(title)


def without_titles(
    skus: Iterable[SKU], gold: Iterable[GoldLabel], held_out: Iterable[SKU]
) -> tuple[list[SKU], list[GoldLabel], int]:
    """``(skus, gold, dropped)`` without the SKUs whose title (:func:`title_key`) is also a title of
    ``held_out`` — the shared OA-Mine / AE-110K validation files are subsets of their train files, so
    templates or models built from the whole train file would see the validation values."""
    titles = {title_key(s.title) for s in held_out}
    rows = list(skus)
    kept = [s for s in rows if title_key(s.title) not in titles]
    ids = {s.sku_id for s in kept}
    return kept, [g for g in gold if g.sku_id in ids], len(rows) - len(kept)
