"""Open Food Facts CSV/TSV export (tab-separated, one product per row) → grocery SKUs with safety gold.

SKU: ``code`` → ``gtin`` (when its check digit is valid; the id is ``off:<code>`` either way),
``product_name`` (else ``generic_name`` / ``abbreviated_product_name``) → title, ``brands`` (first) → brand,
``ingredients_text`` → description, ``url``, ``image_url``; ``packaging``, ``origins``,
``manufacturing_places``, ``serving_size``, ``quantity`` → specs (a real catalog record states its net
content; columns used as gold are kept out of the SKU).
Category: ``"Grocery > <leaf>"`` from the last ``en:`` tag of ``categories_tags`` (``"Alcohol > ..."`` when a
tag names an alcoholic beverage); ``"Grocery"`` when there is none.

Gold (Open Food Facts labels are crowd-sourced, not audited — treat as silver; positive-only):

* ``allergens`` (multi) from the ``allergens`` column (``en:milk,en:soybeans``) through
  :data:`ALLERGEN_MAP`; an empty column is *unknown*, not "no allergens", so it gives no gold; a tag outside
  the map (``de:Hühnereiweiss``) makes the row's allergen gold incomplete, so it is dropped (warning).
  ``traces_tags`` ("may contain") is not allergen gold.
* ``dietary_labels`` (multi) from ``labels_tags`` via :data:`LABEL_DIET_MAP` plus ``en:vegan`` /
  ``en:vegetarian`` of ``ingredients_analysis_tags``; a label contradicted by the analysis (``en:vegan`` label
  with ``en:non-vegan`` analysis) is dropped (warning). Emitted only when non-empty.
* ``organic`` = ``"true"`` when a label is an organic certification (:data:`ORGANIC_LABELS`).
* no ``net_content`` gold: the ``quantity`` column is the record's own net-content field, so gold taken
  from it would be a copy of the input (the no-leak rule); the SKU carries it as the ``quantity`` spec.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from groundtrace.catalog.identity import valid_gtin
from groundtrace.catalog.importers.base import ImportedRecord, Importer, ImportIssue, build_sku, iter_nonempty
from groundtrace.catalog.model import GoldLabel
from groundtrace.core.files.text import iter_csv

ALLERGEN_MAP: dict[str, str] = {
    "en:milk": "milk",
    "en:eggs": "eggs",
    "en:fish": "fish",
    "en:crustaceans": "crustacean_shellfish",
    "en:shellfish": "crustacean_shellfish",
    "en:molluscs": "molluscs",
    "en:nuts": "tree_nuts",
    "en:peanuts": "peanuts",
    "en:gluten": "gluten",
    "en:wheat": "wheat",
    "en:soybeans": "soybeans",
    "en:soy": "soybeans",
    "en:sesame-seeds": "sesame",
    "en:sesame": "sesame",
    "en:mustard": "mustard",
    "en:celery": "celery",
    "en:lupin": "lupin",
    "en:sulphur-dioxide-and-sulphites": "sulphites",
}
LABEL_DIET_MAP: dict[str, str] = {
    "en:vegan": "vegan",
    "en:the-vegan-society": "vegan",
    "en:european-vegetarian-union-vegan": "vegan",
    "en:vegetarian": "vegetarian",
    "en:european-vegetarian-union": "vegetarian",
    "en:european-vegetarian-union-vegetarian": "vegetarian",
    "en:no-gluten": "gluten_free",
    "en:gluten-free": "gluten_free",
    "en:dzg-gluten-free": "gluten_free",
    "en:crossed-grain-trademark": "gluten_free",
    "en:no-lactose": "lactose_free",
    "en:lactose-free": "lactose_free",
    "en:no-milk": "dairy_free",
    "en:dairy-free": "dairy_free",
    "en:kosher": "kosher",
    "en:orthodox-union-kosher": "kosher",
    "en:halal": "halal",
    "en:no-gmos": "non_gmo",
    "en:non-gmo-project": "non_gmo",
    "en:no-added-sugar": "no_added_sugar",
    "en:sugar-free": "sugar_free",
    "en:no-sugar": "sugar_free",
    "en:low-sodium": "low_sodium",
    "en:keto": "keto",
    "en:paleo": "paleo",
}
ORGANIC_LABELS = frozenset(
    {
        "en:organic",
        "en:eu-organic",
        "en:usda-organic",
        "fr:ab-agriculture-biologique",
        "en:bio",
        "en:canada-organic",
        "en:demeter",
    }
)
_ORGANIC_PREFIXES = ("en:fr-bio-", "en:de-oko-", "en:it-bio-", "en:es-eco-")
ANALYSIS_DIET = {"en:vegan": "vegan", "en:vegetarian": "vegetarian"}
ANALYSIS_NEGATIVE = {"en:non-vegan": "vegan", "en:non-vegetarian": "vegetarian"}
ALCOHOL_TAGS = frozenset(
    {
        "en:alcoholic-beverages",
        "en:wines",
        "en:beers",
        "en:spirits",
        "en:ciders",
        "en:liqueurs",
        "en:red-wines",
        "en:white-wines",
        "en:sparkling-wines",
    }
)
SPEC_COLUMNS = ("packaging", "origins", "manufacturing_places", "serving_size", "quantity")
REQUIRED_COLUMNS = (
    "code",
    "product_name",
    "brands",
    "categories_tags",
    "ingredients_text",
    "allergens",
    "labels_tags",
    "ingredients_analysis_tags",
)


def _tags(raw: str | None) -> list[str]:
    return iter_nonempty(t.lower() for t in (raw or "").split(","))


def _humanise(tag: str) -> str:
    text = tag.split(":", 1)[-1].replace("-", " ").strip()
    return text[:1].upper() + text[1:]


def off_category(categories_tags: str | None) -> str:
    """``"Grocery > Hazelnut spreads"`` from the last ``en:`` tag; ``"Alcohol > ..."`` for alcoholic tags."""
    tags = [t for t in _tags(categories_tags) if t.startswith("en:") and t != "en:null"]
    root = "Alcohol" if any(t in ALCOHOL_TAGS for t in tags) else "Grocery"
    return f"{root} > {_humanise(tags[-1])}" if tags else root


def _is_organic(tag: str) -> bool:
    return tag in ORGANIC_LABELS or tag.startswith(_ORGANIC_PREFIXES)


class OpenFoodFactsImporter(Importer):
    """Open Food Facts product export (TSV)."""

    name = "openfoodfacts"
    description = "Open Food Facts TSV export: grocery SKUs with allergen/dietary/organic gold."
    attribute_map: ClassVar[Mapping[str, str]] = {
        "allergens": "allergens",
        "labels_tags": "dietary_labels",
    }

    def records(self, path: Path) -> Iterator[ImportedRecord | ImportIssue]:
        csv.field_size_limit(sys.maxsize)
        header: list[str] | None = None
        problems = 0
        for line, row, problem in iter_csv(path, delimiter="\t"):
            if row is None:  # a line that is not valid UTF-8 (or a record or header it broke)
                problems += 1
                yield ImportIssue(str(path), line, problem or "")
                continue
            if header is None:
                header = row
                absent = [c for c in REQUIRED_COLUMNS if c not in header]
                if absent:
                    yield ImportIssue(str(path), line, f"header lacks column(s): {', '.join(absent)}")
                    return
                continue
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                yield ImportIssue(str(path), line, f"{len(row)} fields, header has {len(header)}")
                continue
            yield from self._row(path, line, dict(zip(header, row, strict=True)))
        if header is None and not problems:
            yield ImportIssue(str(path), 1, "empty file")

    def _row(self, path: Path, line: int, row: dict[str, str]) -> Iterator[ImportedRecord | ImportIssue]:
        code = row["code"].strip()
        if not code:
            yield ImportIssue(str(path), line, "empty code")
            return
        title = next(
            (
                row.get(c, "").strip()
                for c in ("product_name", "generic_name", "abbreviated_product_name")
                if row.get(c, "").strip()
            ),
            "",
        )
        if not title:
            yield ImportIssue(str(path), line, f"product {code}: no product_name")
            return
        gtin = code if valid_gtin(code) else None
        if gtin is None:
            self.counters["invalid_gtin"] += 1
            yield ImportIssue(
                str(path), line, f"code {code!r} fails the GTIN check digit; gtin left empty", "warning"
            )
        sku_id = f"off:{code}"
        brands = iter_nonempty(row["brands"].split(","))
        sku = build_sku(
            path,
            line,
            sku_id=sku_id,
            title=title,
            description=row["ingredients_text"].strip(),
            brand=brands[0] if brands else None,
            category=off_category(row["categories_tags"]),
            gtin=gtin,
            specs={c: row[c].strip() for c in SPEC_COLUMNS if row.get(c, "").strip()},
            images=[row["image_url"].strip()] if row.get("image_url", "").strip() else [],
            url=row.get("url", "").strip() or None,
        )
        if isinstance(sku, ImportIssue):
            yield sku
            return
        gold: list[GoldLabel] = []
        issues: list[ImportIssue] = []

        allergen_tags = _tags(row["allergens"])
        if allergen_tags:
            unknown = [t for t in allergen_tags if t not in ALLERGEN_MAP]
            if unknown:
                self.counters["allergens_dropped_unmapped"] += 1
                issues.append(
                    ImportIssue(
                        str(path),
                        line,
                        f"allergen tag(s) {unknown} not mappable; allergen gold dropped for this product",
                        "warning",
                    )
                )
            else:
                gold.append(
                    GoldLabel(
                        sku_id=sku_id,
                        attribute="allergens",
                        value=sorted({ALLERGEN_MAP[t] for t in allergen_tags}),
                        source="openfoodfacts:allergens",
                    )
                )

        labels = _tags(row["labels_tags"])
        analysis = _tags(row["ingredients_analysis_tags"])
        diet = {LABEL_DIET_MAP[t] for t in labels if t in LABEL_DIET_MAP}
        diet |= {ANALYSIS_DIET[t] for t in analysis if t in ANALYSIS_DIET}
        contradicted = {ANALYSIS_NEGATIVE[t] for t in analysis if t in ANALYSIS_NEGATIVE} & diet
        if contradicted:
            self.counters["dietary_contradictions"] += 1
            issues.append(
                ImportIssue(
                    str(path),
                    line,
                    f"label(s) {sorted(contradicted)} contradicted by ingredients analysis; dropped",
                    "warning",
                )
            )
            diet -= contradicted
        if diet:
            gold.append(
                GoldLabel(
                    sku_id=sku_id,
                    attribute="dietary_labels",
                    value=sorted(diet),
                    source="openfoodfacts:labels_tags+ingredients_analysis_tags",
                )
            )
        if any(_is_organic(t) for t in labels):
            gold.append(
                GoldLabel(
                    sku_id=sku_id, attribute="organic", value="true", source="openfoodfacts:labels_tags"
                )
            )

        yield from issues
        yield ImportedRecord(sku=sku, gold=gold, line=line)
