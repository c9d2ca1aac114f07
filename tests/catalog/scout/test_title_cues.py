"""Title cues of the offline engine (issue 12 item 4): quantities and pack counts in titles ("11.3 oz",
"25/Pack", "4Pcs/Lot", "146-GB"), counts for a count-typed net content, booleans stated as words, a brand
learned per category from title prefixes (``title_prefix``), and typed templates from gold."""

from __future__ import annotations

from groundtrace.catalog.importers.train_templates import templates_from_gold
from groundtrace.catalog.model import SKU, AttributeSpec, CategoryTemplate, GoldLabel
from groundtrace.catalog.scout.lexicon_engine import Q_BARE, Q_MENTION, Q_NAMED, LexiconEngine
from groundtrace.catalog.sources.catalog_record import catalog_documents
from groundtrace.catalog.templates import load_templates

GROCERY = load_templates().for_category("grocery")
ELECTRONICS = load_templates().for_category("electronics")


def _found(template: CategoryTemplate, slug: str, title: str, description: str = "") -> dict[str, float]:
    """value → best quality of the findings for ``slug`` on a SKU with this title / description."""
    sku = SKU(sku_id="s", title=title, description=description, category=template.category)
    spec = template.attribute(slug)
    out = LexiconEngine().extract(
        sku, [spec], catalog_documents(sku), template_attributes=template.attributes
    )
    found: dict[str, float] = {}
    for f in out.findings:
        s, e = f.evidence.span
        assert f.evidence.quote == (title if f.evidence.source_ref == "catalog:title" else description)[s:e]
        found[f.value] = max(found.get(f.value, 0.0), f.quality)
    return found


def test_quantities_in_titles_are_found_but_stay_bare() -> None:
    """ "11.3 oz", "146-GB" are extracted from titles; a bare quantity keeps quality 0.6 there too (blocked
    at the default θ: on the WDC-PAVE train part a bare title quantity was the gold value 12 times in 22),
    while one in a sentence naming the attribute is 0.85."""
    title = "Folgers Classic Roast Ground Coffee, 11.3 oz"
    assert _found(GROCERY, "net_content", title) == {"11.3 oz": Q_BARE}
    assert _found(GROCERY, "net_content", "Coffee", "Net weight 11.3 oz.") == {"11.3 oz": Q_NAMED}
    assert _found(ELECTRONICS, "capacity", "HP 146-GB 10K 2.5 DP SAS HDD") == {"146 GB": Q_BARE}


def test_pack_counts_with_a_slash_and_pieces_per_lot() -> None:
    assert _found(GROCERY, "pack_count", "Pens, Blue Ink, 25/Pack") == {"25": Q_NAMED}
    assert _found(GROCERY, "pack_count", "FISH KING 4Pcs/Lot Spinner Bait") == {"4": Q_NAMED}
    assert _found(GROCERY, "pack_count", "Tags, 1,000/Box") == {"1000": Q_NAMED}  # never "000/Box" → 0


def test_booleans_stated_as_words_in_titles() -> None:
    assert _found(GROCERY, "organic", "Organic Fair Trade Dark Roast Coffee") == {"true": Q_NAMED}
    assert _found(GROCERY, "organic", "Non-Organic Coffee Blend") == {"false": Q_NAMED}
    gluten = CategoryTemplate(
        category="snacks", attributes=[AttributeSpec(slug="gluten_free", name="Gluten Free", type="bool")]
    )
    assert _found(gluten, "gluten_free", "Crunchy Gluten-Free Crackers, 4 oz") == {"true": Q_NAMED}


def _train(n: int = 10) -> tuple[list[SKU], list[GoldLabel]]:
    brands = ["Mt. Olive", "Vlasic", "Claussen", "Mt. Olive", "Vlasic"] * (n // 5)
    skus, gold = [], []
    for i, brand in enumerate(brands):
        skus.append(SKU(sku_id=f"t{i}", title=f"{brand} Kosher Dills, {16 + i} oz", category="Pickles"))
        gold += [
            GoldLabel(sku_id=f"t{i}", attribute="brand", value=brand),
            GoldLabel(sku_id=f"t{i}", attribute="net_content", value=f"{16 + i} Ounce"),
            GoldLabel(sku_id=f"t{i}", attribute="pack_count", value="Pack of 2" if i % 2 else "1"),
            GoldLabel(sku_id=f"t{i}", attribute="organic", value="true" if i % 3 else "false"),
            GoldLabel(sku_id=f"t{i}", attribute="dietary_labels", value=["vegan", "gluten_free"]),
            GoldLabel(sku_id=f"t{i}", attribute="size", value=f"{8 + i % 3}.5 M"),
        ]
    return skus, gold


def test_templates_from_gold_are_typed() -> None:
    (template,) = templates_from_gold(*_train())
    spec = {a.slug: a for a in template.attributes}
    assert (spec["net_content"].type, spec["net_content"].recommended_values) == ("number", ["ounce"])
    assert spec["pack_count"].type == "number" and spec["pack_count"].unit is None
    assert "a whole count" in spec["pack_count"].definition
    assert (spec["organic"].type, spec["organic"].allowed_values) == ("bool", ["true", "false"])
    diet = spec["dietary_labels"]
    assert diet.type == "enum" and diet.multi_valued and diet.safety_critical  # as the built-in attribute
    assert {"vegan", "gluten_free", "kosher"} <= set(diet.allowed_values)
    assert spec["size"].type == "string"  # shoe sizes "9.5 M" are no lengths in metres
    assert spec["brand"].title_prefix and spec["brand"].recommended_values == [
        "Mt. Olive",
        "Vlasic",
        "Claussen",
    ]


def test_a_brand_learned_from_title_prefixes_is_read_where_it_opens_the_title() -> None:
    (template,) = templates_from_gold(*_train())
    assert _found(template, "brand", "Mt. Olive Kosher Dills, 24 oz") == {"Mt. Olive": Q_NAMED}
    # a known brand elsewhere in the title is only a mention (0.75: the policy blocks it by default)
    assert _found(template, "brand", "Pickle relish, like Vlasic") == {"Vlasic": Q_MENTION}
    assert _found(template, "net_content", "Mt. Olive Kosher Dills, 24 oz") == {"24 oz": Q_BARE}


def test_a_count_typed_net_content_takes_counts() -> None:
    skus = [
        SKU(sku_id=f"v{i}", title=f"Vitamin D3, {30 * (i + 1)} Count", category="Vitamin") for i in range(6)
    ]
    gold = [GoldLabel(sku_id=s.sku_id, attribute="net_content", value=f"{30 * (i + 1)} Count") for i, s in
            enumerate(skus)]  # fmt: skip
    (template,) = templates_from_gold(skus, gold)
    assert template.attribute("net_content").type == "number"
    assert _found(template, "net_content", "Nature Made Vitamin C, 100 Count (Pack of 2)") == {"100": Q_NAMED}
