"""The LLM Scout builds a template's prompt parts once per attribute list (issue 26 item 1): the cached
text is the text it would build, for the same spec objects only."""

from __future__ import annotations

from groundtrace.catalog.demo_catalog import SKUS
from groundtrace.catalog.model import SKU, Document
from groundtrace.catalog.scout import llm_engine
from groundtrace.catalog.scout.llm_engine import build_messages
from groundtrace.catalog.templates import load_templates


def _sku_and_attributes() -> tuple[SKU, list]:
    sku = SKU.model_validate(SKUS[0])
    template = load_templates(None).for_category(sku.category)
    assert template is not None
    return sku, list(template.attributes)


def test_cached_attribute_block_equals_a_fresh_build_and_follows_changed_specs() -> None:
    sku, attributes = _sku_and_attributes()
    docs = [Document(source="catalog", source_type="catalog", source_ref="catalog:title", text=sku.title)]
    first = build_messages(sku, attributes, docs)
    again = build_messages(sku, list(attributes), docs)  # a new list of the same specs: served from cache
    assert first == again
    fresh = llm_engine._attributes_block_text(attributes)
    assert fresh in first[1]["content"] and llm_engine._reminder_text(attributes) in first[1]["content"]
    # equal content in new objects, and a changed definition: each built for what it holds
    renamed = [attributes[0].model_copy(update={"definition": "A changed definition."}), *attributes[1:]]
    changed = build_messages(sku, renamed, docs)[1]["content"]
    assert "A changed definition." in changed and "A changed definition." not in first[1]["content"]
    subset = build_messages(sku, attributes[:2], docs)[1]["content"]
    assert llm_engine._attributes_block_text(attributes[:2]) in subset
    assert f"covering all 2 slugs: {attributes[0].slug}, {attributes[1].slug}." in subset


def test_the_cache_is_bounded() -> None:
    built: list[int] = []
    cache = llm_engine._PerAttributes(lambda attrs: built.append(len(attrs)) or str(len(attrs)), size=2)
    _, attributes = _sku_and_attributes()
    lists = [attributes[:1], attributes[:2], attributes[:3]]
    assert [cache(a) for a in lists] == ["1", "2", "3"]
    assert cache(lists[2]) == "3" and cache(lists[1]) == "2"  # still held
    assert cache(lists[0]) == "1"  # evicted as the least recently used: built again
    assert built == [1, 2, 3, 1]
