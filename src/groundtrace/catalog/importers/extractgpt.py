"""OA-Mine and AE-110K in the ExtractGPT format: ``{"input": title, "category": ..., "target_scores":
{...}}``.

``target_scores`` is ``{attribute: {value: 1}}`` (several keys = alternative surface forms) or
``{attribute: {"n/a": 1}}``. The title is the only input, so every annotated attribute — brand and model
number included — stays a gold target; SKU ids are ``<format>:<file stem>:<line>``.

Partial annotation: an attribute a line does not list is *unknown* — no gold label, so it is scored neither
right nor wrong and never counts for abstention. Only an explicit ``{"n/a": 1}`` is not-applicable gold.
(OA-Mine annotations are partial: an attribute of the category missing from a line may still be stated in
the title, so reading it as n/a would punish a correct extraction.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from groundtrace.catalog.importers.base import (
    ImportedRecord,
    Importer,
    ImportIssue,
    build_sku,
    clean_value,
    gold_from_scores,
)
from groundtrace.catalog.importers.wdc_pave import _read_json_lines
from groundtrace.catalog.model import GoldLabel

#: Diet / specialty wording → grocery ``dietary_labels`` enum values.
DIETARY_VALUE_MAP: dict[str, str] = {
    "vegan": "vegan",
    "vegetarian": "vegetarian",
    "veggie": "vegetarian",
    "veg": "vegetarian",
    "gluten free": "gluten_free",
    "gluten-free": "gluten_free",
    "dairy free": "dairy_free",
    "dairy-free": "dairy_free",
    "lactose free": "lactose_free",
    "kosher": "kosher",
    "halal": "halal",
    "keto": "keto",
    "keto friendly": "keto",
    "paleo": "paleo",
    "sugar free": "sugar_free",
    "sugar-free": "sugar_free",
    "non gmo": "non_gmo",
    "non-gmo": "non_gmo",
    "nongmo": "non_gmo",
}


class ExtractGPTImporter(Importer):
    """Shared reader of the ExtractGPT JSONL format."""

    def derive(self, sku_id: str, gold: list[GoldLabel]) -> list[GoldLabel]:
        """Hook for dataset-specific value mapping; returns the final gold list."""
        return gold

    def records(self, path: Path) -> Iterator[ImportedRecord | ImportIssue]:
        stem = path.stem
        for number, data in _read_json_lines(path):
            if isinstance(data, ImportIssue):
                yield data
                continue
            missing = [k for k in ("input", "category", "target_scores") if k not in data]
            if missing:
                yield ImportIssue(str(path), number, f"missing field(s): {', '.join(missing)}")
                continue
            scores = data["target_scores"]
            title = clean_value(data["input"] or "")
            if not isinstance(scores, dict) or not title:
                yield ImportIssue(str(path), number, "empty input or target_scores is not an object")
                continue
            sku_id = f"{self.name}:{stem}:{number}"
            category = clean_value(data["category"])
            gold: list[GoldLabel] = []
            seen: set[str] = set()
            for attribute, entry in scores.items():
                slug = self.slug_for(attribute)
                if slug in seen:
                    self.counters["slug_collision"] += 1
                    continue
                label = gold_from_scores(sku_id, slug, entry, f"{self.name}:{attribute}", self.counters)
                if label is None:
                    yield ImportIssue(
                        str(path), number, f"attribute {attribute!r}: empty or malformed gold", "warning"
                    )
                    continue
                seen.add(slug)
                gold.append(label)
            sku = build_sku(path, number, sku_id=sku_id, title=title, category=category)
            if isinstance(sku, ImportIssue):
                yield sku
                continue
            yield ImportedRecord(sku=sku, gold=self.derive(sku_id, gold), line=number)


class OAMineImporter(ExtractGPTImporter):
    """OA-Mine (Amazon titles; Coffee, Tea, Breakfast Cereal, Vitamin, ...)."""

    name = "oa-mine"
    description = "OA-Mine titles (ExtractGPT format); unlisted attributes are unknown, not n/a."
    attribute_map: ClassVar[Mapping[str, str]] = {
        "Brand": "brand",
        "Net content": "net_content",
        "Pack size": "pack_count",
        "Item form": "item_form",
        "Flavor": "flavor",
        "Color": "color",
        "Material": "material",
        "Volume": "volume",
        "Caffeine content": "caffeine_content",
        "Container": "packaging_type",
        "Container type": "packaging_type",
        "Diet": "dietary_labels",
        "Specialty": "specialty",
        "Country": "country_of_origin",
        "Power source": "power_source",
    }

    def derive(self, sku_id: str, gold: list[GoldLabel]) -> list[GoldLabel]:
        """``Diet`` values → ``dietary_labels`` enum list (unmappable wording stays raw gold ``diet``);
        ``Specialty`` naming organic (not "made with organic ...") → extra gold ``organic: true``."""
        out: list[GoldLabel] = []
        for label in gold:
            if label.attribute == "dietary_labels" and isinstance(label.value, str):
                mapped = [
                    DIETARY_VALUE_MAP.get(part.strip().lower())
                    for part in re.split(r"\s*[&,/]\s*|\s+and\s+", label.value)
                ]
                if all(mapped):
                    label = label.model_copy(update={"value": sorted(set(mapped)), "alternatives": []})  # type: ignore[arg-type]
                else:
                    self.counters["diet_unmapped"] += 1
                    label = label.model_copy(update={"attribute": "diet"})
            out.append(label)
            if label.attribute == "specialty" and isinstance(label.value, str):
                forms = [label.value, *label.alternatives]
                if any(
                    re.search(r"\borganic\b", f, re.IGNORECASE)
                    and not re.search(r"\bmade with\b", f, re.IGNORECASE)
                    for f in forms
                ):
                    self.counters["organic_from_specialty"] += 1
                    out.append(
                        GoldLabel(
                            sku_id=sku_id,
                            attribute="organic",
                            value="true",
                            source="oa-mine:Specialty:organic",
                        )
                    )
        return out


class AE110KImporter(ExtractGPTImporter):
    """AE-110K (AliExpress titles; explicit n/a)."""

    name = "ae-110k"
    description = "AE-110K AliExpress titles (ExtractGPT format) with explicit n/a gold."
    attribute_map: ClassVar[Mapping[str, str]] = {
        "Brand Name": "brand",
        "Color": "color",
        "Material": "material",
        "Model Number": "model_number",
        "Weight": "weight",
        "Length": "length",
        "Quantity": "pack_count",
    }
