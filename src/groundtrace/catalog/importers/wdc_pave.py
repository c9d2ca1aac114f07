"""WDC-PAVE (wbsg-uni-mannheim/wdc-pave): offers with gold values, and templates from its
``descriptions.csv``.

Offer line: ``id, category, input_title, input_description, url, target_scores`` where ``target_scores`` is
``{attribute: {value: {"pid": [0 title / 1 description], "score": 1}}}`` or ``{attribute: {"n/a": 1}}``.

Mapping (``WDC_ATTRIBUTE_MAP``): attribute names → template slugs. Identifier attributes do not become gold:
``Retail UPC`` → ``SKU.gtin`` (only when its check digit is valid), ``Manufacturer Stock Number`` / ``Part
Number`` / ``Model Number`` → ``SKU.mpn``. ``Brand`` (or ``Manufacturer``) is gold ``brand`` only: WDC
offers have no brand field apart from the label being evaluated, so ``SKU.brand`` stays empty (copying the
label onto the record would let the Scout read the answer). Every other attribute is gold under its slug;
the template generator uses the same table, so generated WDC templates and imported gold agree on slugs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from groundtrace.catalog.identity import valid_gtin
from groundtrace.catalog.importers.base import (
    NA,
    ImportedRecord,
    Importer,
    ImportIssue,
    build_sku,
    clean_value,
    gold_from_scores,
    iter_nonempty,
    slugify,
)
from groundtrace.catalog.model import AttributeSpec, CategoryTemplate
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.text import iter_csv

#: WDC attribute name → template slug (``gtin`` / ``mpn`` mean "SKU identifier, not gold").
WDC_ATTRIBUTE_MAP: dict[str, str] = {
    "Brand": "brand",
    "Manufacturer": "brand",
    "Retail UPC": "gtin",
    "Manufacturer Stock Number": "mpn",
    "Part Number": "mpn",
    "Model Number": "mpn",
    "Product Type": "product_type",
    "Color": "color",
    "Color(s)": "color",
    "Material": "material",
    "Capacity": "capacity",
    "Voltage": "voltage",
    "Width": "width",
    "Height": "height",
    "Depth": "depth",
    "Length": "length",
    "Shape": "shape",
    "Pack Quantity": "pack_count",
    "Size/Weight": "net_content",
    "Flavor": "flavor",
    "Packing Type": "packaging_type",
    "Interface": "interface",
}
IDENTIFIER_SLUGS = frozenset({"gtin", "mpn"})


def _read_json_lines(path: Path) -> Iterator[tuple[int, dict | ImportIssue]]:
    """``(line, object)`` per JSON-object line; ``(line, issue)`` for a bad line (``core.files.jsonl``: not
    UTF-8, too long, too deep, not JSON, not an object); the other lines are still read."""
    for number, data, error in iter_jsonl(path, objects_only=True):
        yield number, (ImportIssue(str(path), number, error.message) if error is not None else data)


def _values(scores: object) -> list[str]:
    if not isinstance(scores, dict):
        return []
    return [v for v in (clean_value(k) for k in scores) if v and v.lower() != NA]


class WDCPaveImporter(Importer):
    """WDC-PAVE ``train_large.jsonl`` style offers (title + description, gold with n/a)."""

    name = "wdc-pave"
    description = "WDC-PAVE offers: input_title/input_description/category/target_scores (n/a gold)."
    attribute_map = WDC_ATTRIBUTE_MAP

    def records(self, path: Path) -> Iterator[ImportedRecord | ImportIssue]:
        for number, data in _read_json_lines(path):
            if isinstance(data, ImportIssue):
                yield data
                continue
            missing = [k for k in ("id", "input_title", "category", "target_scores") if k not in data]
            if missing:
                yield ImportIssue(str(path), number, f"missing field(s): {', '.join(missing)}")
                continue
            scores = data["target_scores"]
            if not isinstance(scores, dict):
                yield ImportIssue(str(path), number, "target_scores is not an object")
                continue
            title = clean_value(data.get("input_title") or "")
            if not title:
                yield ImportIssue(str(path), number, "empty input_title")
                continue
            raw_id = data["id"]
            if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
                yield ImportIssue(
                    str(path), number, f"id must be a non-empty string or integer, not {raw_id!r:.60}"
                )
                continue
            sku_id = f"wdc:{raw_id}"
            identity: dict[str, str | None] = {"gtin": None, "mpn": None}
            gold = []
            seen_slugs: set[str] = set()
            for attribute, entry in scores.items():
                slug = self.slug_for(attribute)
                if slug == "gtin":
                    for code in _values(entry):
                        if valid_gtin(code):
                            identity["gtin"] = identity["gtin"] or re.sub(r"\D", "", code)
                        else:
                            self.counters["invalid_upc"] += 1
                            yield ImportIssue(
                                str(path),
                                number,
                                f"Retail UPC {code!r} fails the GTIN check digit; not used",
                                "warning",
                            )
                    continue
                if slug == "mpn":
                    identity["mpn"] = identity["mpn"] or next(iter(_values(entry)), None)
                    continue
                if slug in seen_slugs:
                    self.counters["slug_collision"] += 1
                    continue
                label = gold_from_scores(sku_id, slug, entry, f"wdc-pave:{attribute}", self.counters)
                if label is None:
                    yield ImportIssue(
                        str(path), number, f"attribute {attribute!r}: empty or malformed gold", "warning"
                    )
                    continue
                seen_slugs.add(slug)
                gold.append(label)
            sku = build_sku(
                path,
                number,
                sku_id=sku_id,
                title=title,
                description=clean_value(data.get("input_description") or ""),
                category=clean_value(data["category"]),
                gtin=identity["gtin"],
                mpn=identity["mpn"],
                url=data.get("url") or None,
            )
            if isinstance(sku, ImportIssue):
                yield sku
                continue
            yield ImportedRecord(sku=sku, gold=gold, line=number)


# -- templates from descriptions.csv ---------------------------------------------------------------------
#: unit spelling in example values → canonical unit of its family (pint syntax), so "2TB" and "40GB"
#: both vote for GB and the values stay convertible.
_UNIT_MAP = {
    "gb": "GB",
    "gigabytes": "GB",
    "tb": "GB",
    "terabytes": "GB",
    "mb": "GB",
    "megabytes": "GB",
    "w": "W",
    "watts": "W",
    "watt": "W",
    "v": "V",
    "volts": "V",
    "volt": "V",
    "mhz": "MHz",
    "ghz": "MHz",
    "rpm": "rpm",
    '"': "in",
    "in": "in",
    "inch": "in",
    "inches": "in",
    "ft": "in",
    "mm": "mm",
    "cm": "mm",
    "oz": "oz",
    "lb": "oz",
    "lbs": "oz",
    "g": "g",
    "kg": "g",
    "qt": "L",
    "gal": "L",
    "l": "L",
    "ml": "L",
    "ct": "carat",
    "ctw": "carat",
}
_UNIT_RE = re.compile(r"\d\s*-?\s*([A-Za-z\"]+)")
_NUMERIC_TYPES = ("numeric",)
_IMAGE_CONCEPTS = {"material_design", "stone"}
MAX_RECOMMENDED = 15
MAX_EXAMPLES = 10


def _data_types(raw: str) -> list[str]:
    return [t.strip().lower() for t in re.findall(r'"([^"]+)"', raw or "")]


def _majority_unit(values: list[str]) -> str | None:
    units: Counter[str] = Counter()
    for value in values:
        match = _UNIT_RE.search(value)
        if match and match.group(1).lower() in _UNIT_MAP:
            units[_UNIT_MAP[match.group(1).lower()]] += 1
    if not units:
        return None
    unit, count = units.most_common(1)[0]
    return unit if count * 2 > sum(units.values()) else None  # a strict majority, else no unit


def templates_from_wdc(csv_path: Path) -> tuple[list[CategoryTemplate], list[ImportIssue]]:
    """One template per WDC category from ``descriptions.csv`` (``;``-separated, UTF-8 with BOM).

    Per attribute: slug from :data:`WDC_ATTRIBUTE_MAP` (identifier rows — UPC, MPN — are skipped; they are
    SKU fields), ``definition`` = Human_Description, ``type`` number when every listed data type is numeric
    (unit = the majority unit in the example values), else string; ``recommended_values`` = all observed
    values when at most 15, ``examples`` = the first 10; ``image_friendly`` for material/design and stone
    concepts. Rows missing Category or Attribute, and lines that are not valid UTF-8, are reported with their
    line; the other rows are read.
    """
    issues: list[ImportIssue] = []
    by_category: dict[str, dict] = {}
    needed = {"Category", "Attribute", "Human_Description", "Data_Types"}
    header: list[str] | None = None
    for line, cells, problem in iter_csv(csv_path, delimiter=";"):
        if cells is None:  # a line that is not valid UTF-8 (or a record or the header it broke)
            issues.append(ImportIssue(str(csv_path), line, problem or ""))
            continue
        if header is None:
            header = cells
            if not needed <= set(header):
                raise ValueError(f"{csv_path}:{line}: header lacks {sorted(needed - set(header))}")
            continue
        row = dict(zip(header, cells, strict=False))
        category = (row.get("Category") or "").strip()
        attribute = (row.get("Attribute") or "").strip()
        if not category or not attribute:
            issues.append(ImportIssue(str(csv_path), line, "row without Category or Attribute"))
            continue
        slug = WDC_ATTRIBUTE_MAP.get(attribute, slugify(attribute))
        if slug in IDENTIFIER_SLUGS:
            continue
        entry = by_category.setdefault(
            category, {"description": (row.get("Category_Description") or "").strip(), "attributes": {}}
        )
        if slug in entry["attributes"]:
            issues.append(
                ImportIssue(
                    str(csv_path), line, f"{category}: {attribute!r} repeats slug {slug!r}", "warning"
                )
            )
            continue
        values = iter_nonempty(
            v for v in (row.get("Unique Values List (target_scores)") or "").split(", ") if v.strip() != NA
        )
        types = _data_types(row.get("Data_Types") or "")
        numeric = bool(types) and all(t.startswith(_NUMERIC_TYPES) for t in types)
        entry["attributes"][slug] = AttributeSpec(
            slug=slug,
            name=attribute,
            definition=(row.get("Human_Description") or "").strip(),
            type="number" if numeric else "string",
            unit=_majority_unit(values) if numeric else None,
            recommended_values=values if len(values) <= MAX_RECOMMENDED and not numeric else [],
            examples=values[:MAX_EXAMPLES],
            image_friendly=(row.get("concept") or "").strip() in _IMAGE_CONCEPTS,
        )
    if header is None:  # an empty file, or its header line is not valid UTF-8
        raise ValueError("; ".join(str(i) for i in issues) or f"{csv_path}:1: header lacks {sorted(needed)}")
    templates = []
    for category, entry in by_category.items():
        amp = category.replace(" And ", " & ")
        templates.append(
            CategoryTemplate(
                category=category,
                aliases=[amp] if amp != category else [],
                description=entry["description"],
                attributes=list(entry["attributes"].values()),
            )
        )
    return templates, issues
