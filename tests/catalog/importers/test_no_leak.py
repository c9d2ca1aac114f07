"""Benchmarks cannot leak: no importer copies a gold value into a SKU field that the Scout reads as
evidence for that same attribute (``Brand: ...`` for brand, a ``key: value`` spec whose key names the
attribute), and every gold value records whether it is present in the input text."""

from __future__ import annotations

import pytest

from groundtrace.catalog.importers import import_file
from groundtrace.catalog.importers.base import sku_text, value_in_text
from groundtrace.catalog.model import SKU, AttributeSpec, GoldLabel
from groundtrace.catalog.scout.lexicons import attribute_keys
from groundtrace.catalog.scout.sentences import norm_key
from groundtrace.catalog.sources.catalog_record import catalog_documents
from groundtrace.catalog.templates import load_templates
from tests.conftest import FIXTURES, shared_path

TEMPLATES = load_templates()
FIX = FIXTURES / "catalog"


def _spec(category: str, slug: str) -> AttributeSpec:
    template = TEMPLATES.for_category(category)
    found = next((a for a in template.attributes if a.slug == slug), None) if template else None
    return found or AttributeSpec(slug=slug, name=slug.replace("_", " "))


def leaks(sku: SKU, label: GoldLabel) -> list[str]:
    """The catalog Documents (source_ref) that the Scout reads as a field of ``label``'s attribute and
    that state its gold value (any surface form)."""
    if label.not_applicable or label.value is None:
        return []
    keys = attribute_keys(_spec(sku.category, label.attribute))
    out = []
    for doc in catalog_documents(sku):
        field = doc.metadata["field"]
        if field in ("title", "description"):
            continue  # free text a real record holds; whether the value is in it is ``in_text``
        key = "brand" if field == "brand" else field.removeprefix("spec:")
        if norm_key(key) in keys and value_in_text(label, doc.text.split(":", 1)[-1]):
            out.append(doc.source_ref)
    return out


def test_leak_detector_can_fail() -> None:
    """The old WDC import (gold brand copied onto ``SKU.brand``) and gold copied into a named spec are
    both caught."""
    sku = SKU(
        sku_id="w", title="Kosher Dills", brand="Mt. Olive", category="Grocery", specs={"Net Wt": "16 oz"}
    )
    assert leaks(sku, GoldLabel(sku_id="w", attribute="brand", value="Mt. Olive")) == ["catalog:brand"]
    assert leaks(sku, GoldLabel(sku_id="w", attribute="net_content", value="16 oz")) == [
        "catalog:spec:Net Wt"
    ]
    assert leaks(sku, GoldLabel(sku_id="w", attribute="flavor", value="16 oz")) == []
    off = SKU(sku_id="o", title="Oats", category="Grocery", specs={"quantity": "350 g"})
    assert leaks(off, GoldLabel(sku_id="o", attribute="net_content", value="350 g")) == [
        "catalog:spec:quantity"
    ]


@pytest.mark.parametrize(
    ("fmt", "path"),
    [
        ("wdc-pave", FIX / "wdc_sample.jsonl"),
        ("oa-mine", FIX / "oa_mine_sample.jsonl"),
        ("ae-110k", FIX / "ae_110k_sample.jsonl"),
        ("openfoodfacts", FIX / "off_sample.tsv"),
        ("wdc-pave", ("catalog", "wdc_pave", "train_large.jsonl")),
        ("oa-mine", ("catalog", "oa_mine", "validation.jsonl")),
        ("ae-110k", ("catalog", "ae_110k", "validation.jsonl")),
        ("openfoodfacts", ("catalog", "openfoodfacts", "products.tsv")),
    ],
    ids=lambda p: p if isinstance(p, str) else "/".join(p[-2:] if isinstance(p, tuple) else p.parts[-2:]),
)
def test_importer_copies_no_gold_into_its_evidence_field(fmt: str, path) -> None:  # type: ignore[no-untyped-def]
    # real files are given as ../shared/data parts and resolved here, inside the test: shared_path skips
    # (or fails in CI) when they are missing, which at collection time would be an error for the module
    report, records = import_file(fmt, shared_path(*path) if isinstance(path, tuple) else path)
    assert records
    found = [(r.sku.sku_id, g.attribute, src) for r in records for g in r.gold for src in leaks(r.sku, g)]
    assert found == []
    # in_text is set for every value gold, and it is what the text says
    for r in records:
        for g in r.gold:
            if g.not_applicable:
                assert g.in_text is None
            else:
                assert g.in_text == value_in_text(g, sku_text(r.sku))
    assert report.gold_in_text == sum(bool(g.in_text) for r in records for g in r.gold)


def test_value_in_text_whole_words_alternatives_and_lists() -> None:
    text = "Ocean Spray 100% Juice, 32-oz bottle; contains tree nuts and milk"
    assert value_in_text(GoldLabel(sku_id="a", attribute="b", value="ocean spray"), text)
    assert value_in_text(GoldLabel(sku_id="a", attribute="b", value="32 oz"), text)
    assert not value_in_text(GoldLabel(sku_id="a", attribute="b", value="Spra"), text)
    assert value_in_text(GoldLabel(sku_id="a", attribute="b", value="Cran", alternatives=["Juice"]), text)
    assert value_in_text(GoldLabel(sku_id="a", attribute="b", value=["tree_nuts", "milk"]), text)
    assert not value_in_text(GoldLabel(sku_id="a", attribute="b", value=["milk", "eggs"]), text)
    assert value_in_text(GoldLabel(sku_id="a", attribute="b", not_applicable=True), text) is None
