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


def _typed(slug: str, values: list[str], category: str = "Parts") -> CategoryTemplate:
    skus = [SKU(sku_id=f"p{i}", title=f"Part {i}", category=category) for i in range(len(values))]
    gold = [GoldLabel(sku_id=f"p{i}", attribute=slug, value=v) for i, v in enumerate(values)]
    (template,) = templates_from_gold(skus, gold)
    return template


def test_units_of_a_stray_dimension_are_no_units_of_the_attribute() -> None:
    """Cache sizes in MB with a "1G" (read as grams) and a "1M" (metres) among them: only the data units are
    the attribute's, so a drive's "3.5-inch" bay is never its cache size (WDC-PAVE: 22 such values, all wrong,
    with the units of every dimension kept)."""
    values = ["12MB", "4MB", "2MB", "1G", "1M", "512KB", "16MB", "8MB", "256MB", "2GB", "6MB", "20MB"]
    template = _typed("cache", values, "Computers")
    spec = template.attribute("cache")
    assert (spec.type, spec.recommended_values) == ("number", ["mb", "kb", "gb"])
    assert _found(template, "cache", "Dell 3.5-inch SCSI Hot-Plug Hard Drive, 15K") == {}
    assert _found(template, "cache", "HP Smart Array P400 Controller, 256MB") == {"256 megabyte": Q_BARE}
    # two dimensions that both carry the attribute stay: gallons and pounds of an ice bin's capacity
    mixed = _typed("capacity", ["29 gallon", "1 gal", "115-lb", "400 lb", "35 gallon", "22 lbs"], "Kitchen")
    assert mixed.attribute("capacity").recommended_values == ["gallon", "gal", "lb", "lbs"]


def test_bare_numbers_are_never_vocabulary() -> None:
    """A gauge of "16" or "14" as vocabulary would be read wherever the text writes 16 or 14 (a 16" leg);
    values with a letter stay vocabulary ("25K" page yields)."""
    template = _typed("gauge", ["16", "14", "18", "16", "14", "12", "10 Micron"], "Tables")
    assert template.attribute("gauge").type == "string"
    assert template.attribute("gauge").recommended_values == ["10 Micron"]
    assert _found(template, "gauge", 'Work Table, 30" x 48", 6" legs with 16" riser') == {}
    yields = _typed("page_yield", ["25K", "500", "6K", "2,600", "500"], "Toner")
    assert yields.attribute("page_yield").recommended_values == ["25K", "6K"]
