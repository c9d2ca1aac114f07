"""Product lines and variants (issue 24 items 1 and 4), through the real pipeline (``enrich_list`` / the CLI).

A page of another product line or another variant of the same brand is never evidence for a SKU: the
Scout abstains with ``identity_mismatch`` and the differing words in the note, under every policy. A
sibling-variant page may only propose a ``variant_invariant`` attribute, to REVIEW. A catalog value that a
GTIN-matched feed or page contradicts becomes a ``conflict`` routed to REVIEW with both sides' evidence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.catalog.enrichment import enrich_list
from groundtrace.catalog.identity import gtin_check_digit, identity_match
from groundtrace.catalog.model import SKU, Action, AttributeResult, CandidateStatus, Document
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.cli import app

WEB = "https://www.walmart.com/ip/"


def _corpus(tmp_path: Path, pages: list[tuple[str, str]]) -> Path:
    path = tmp_path / "pages.jsonl"
    lines = [
        json.dumps({"url": f"{WEB}{i}", "title": t, "text": f"{t}\n{body}"})
        for i, (t, body) in enumerate(pages)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(
    tmp_path: Path, sku: dict, pages: list[tuple[str, str]], **config: object
) -> dict[str, AttributeResult]:
    results = enrich_list([sku], EnrichConfig(corpus=_corpus(tmp_path, pages), **config))  # type: ignore[arg-type]
    return {r.attribute: r for r in results}


def _from_web(r: AttributeResult) -> bool:
    return any(e.source == "web" for e in r.candidate.evidence)


def _assert_no_web_value(results: dict[str, AttributeResult], words: list[str]) -> None:
    """Nothing from the other page is written or proposed, and the abstentions name the differing words."""
    for r in results.values():
        assert not (_from_web(r) and r.decision.action == Action.WRITE), (r.attribute, r.candidate)
        assert not _from_web(r), (r.attribute, r.candidate.value)
    mismatched = [r for r in results.values() if r.candidate.status == CandidateStatus.IDENTITY_MISMATCH]
    assert mismatched, "the page's values must be recorded as identity mismatches"
    for r in mismatched:
        for word in words:
            assert word in r.candidate.note, (word, r.candidate.note)


# -- the issue's cases, through the pipeline ---------------------------------------------------------------
COLA_ZERO = (
    "Fizzco Cola Zero, 12 fl oz can",
    "Zero sugar. Sugar free. Dietary labels: sugar free, vegan. Country of origin: Mexico. Packaging: can.",
)


@pytest.mark.parametrize("policy", [None, "cautious"])
def test_diet_variant_page_writes_nothing_under_any_policy(tmp_path: Path, policy: str | None) -> None:
    sku = {"sku_id": "cola", "title": "Fizzco Cola, 12 fl oz can", "brand": "Fizzco", "category": "grocery"}
    results = _run(tmp_path, sku, [COLA_ZERO], policy=policy)
    assert results["dietary_labels"].candidate.value is None  # old code: [sugar_free], WRITE
    assert results["dietary_labels"].decision.action == Action.BLOCK
    _assert_no_web_value(results, ["zero"])


def test_other_product_line_of_the_brand_lends_nothing(tmp_path: Path) -> None:
    sku = {"sku_id": "bank", "title": "Voltix Power Bank", "brand": "Voltix", "category": "electronics"}
    page = (
        "Voltix Phone X 256GB",
        "Screen size: 6.7 in. Storage capacity: 256 GB. Connectivity: 5G, Bluetooth.",
    )
    results = _run(tmp_path, sku, [page])
    assert results["screen_size"].candidate.value is None  # old code: 6.7 in (matched at 0.6)
    _assert_no_web_value(results, ["power bank", "phone", "256gb"])


@pytest.mark.parametrize(
    ("sku", "page", "words"),
    [
        (  # the issue: texture variants of one line
            ("Nutty Co Crunchy Peanut Butter 16 oz", "Nutty Co", "grocery"),
            ("Nutty Co Creamy Peanut Butter 16 oz", "Country of origin: Canada. Packaging: plastic jar."),
            ["crunchy", "creamy"],
        ),
        (  # the issue: a tier word
            ("Sonix Earbuds", "Sonix", "electronics"),
            ("Sonix Earbuds Pro", "Connectivity: Bluetooth 5.3. Battery: 500 mAh. Weight: 50 g."),
            ["pro"],
        ),
        (  # the issue: storage sizes
            ("Voltix Phone X 128GB", "Voltix", "electronics"),
            ("Voltix Phone X 256GB", "Storage capacity: 256 GB. Screen size: 6.7 in. Weight: 200 g."),
            ["128gb", "256gb"],
        ),
        (  # other brands and words: caffeine
            ("Harbor Roasters House Blend Ground Coffee 12 oz", "Harbor Roasters", "grocery"),
            (
                "Harbor Roasters House Blend Decaf Ground Coffee 12 oz",
                "Caffeine: decaffeinated. Origin: Peru.",
            ),
            ["decaf"],
        ),
        (  # battery capacity of a power bank
            ("Ampora Slim Charger 10000mAh", "Ampora", "electronics"),
            ("Ampora Slim Charger 20000mAh", "Battery capacity: 20000 mAh. Weight: 350 g. Color: Blue."),
            ["10000mah", "20000mah"],
        ),
        (  # a size tier of a device line
            ("Lumen Tablet Mini", "Lumen", "electronics"),
            ("Lumen Tablet Ultra", "Screen size: 12.9 in. Weight: 640 g. Color: Silver."),
            ["mini", "ultra"],
        ),
        (  # strength words of a medicine-like product
            ("Restwell Pain Relief Regular Strength 100 Tablets", "Restwell", "health_household"),
            (
                "Restwell Pain Relief Extra Strength 100 Tablets",
                "Flavor: mint. Item form: tablets. Scent: none.",
            ),
            ["extra strength"],
        ),
        (  # another product line, no variant word at all
            ("Greenfield Oat Milk 32 fl oz", "Greenfield", "grocery"),
            ("Greenfield Almond Creamer 32 fl oz", "Country of origin: Spain. Allergens: tree nuts."),
            ["oat milk", "creamer", "almond"],
        ),
    ],
)
def test_sibling_and_other_line_pages_are_never_evidence(
    tmp_path: Path, sku: tuple[str, str, str], page: tuple[str, str], words: list[str]
) -> None:
    title, brand, category = sku
    results = _run(tmp_path, {"sku_id": "s", "title": title, "brand": brand, "category": category}, [page])
    _assert_no_web_value(results, words)


def test_same_product_page_with_retail_noise_is_still_used(tmp_path: Path) -> None:
    sku = {
        "sku_id": "pb",
        "title": "Nutty Co Crunchy Peanut Butter 16 oz",
        "brand": "Nutty Co",
        "category": "grocery",
    }
    page = ("Crunchy Peanut Butter, 16 oz Jar by Nutty Co - Walmart.com", "Country of origin: Canada.")
    results = _run(tmp_path, sku, [page])
    origin = results["country_of_origin"].candidate
    assert origin.status == CandidateStatus.EXTRACTED and origin.value == "Canada"
    assert _from_web(results["country_of_origin"])


# -- sibling pages lend variant-invariant attributes, to REVIEW only ------------------------------------
GADGETS = """\
category: gadgets
attributes:
  - slug: manufacturer
    name: Manufacturer
    type: string
    variant_invariant: true
  - slug: screen_size
    name: Screen size
    type: string
"""


@pytest.mark.parametrize("policy", ["default", "cautious", "eager"])
def test_sibling_page_lends_only_invariant_attributes_to_review(tmp_path: Path, policy: str) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "gadgets.yaml").write_text(GADGETS, encoding="utf-8")
    policy_path: object = policy
    if policy == "eager":  # a policy that would write anything: the sibling value still goes to a person
        policy_path = tmp_path / "eager.yaml"
        Path(str(policy_path)).write_text(
            "name: eager\nthreshold: 0.0\nverdicts: {PASS: WRITE, UNVERIFIED: WRITE, UNCERTAIN: WRITE, "
            "FAIL: WRITE}\n",
            encoding="utf-8",
        )
    sku = {"sku_id": "ph", "title": "Voltix Phone X 128GB", "brand": "Voltix", "category": "gadgets"}
    page = ("Voltix Phone X 256GB", "Manufacturer: Voltix Devices Ltd\nScreen size: 6.7 in")
    results = _run(tmp_path, sku, [page], templates=templates, policy=policy_path)
    from groundtrace.catalog.identity import FLAG_SIBLING_VARIANT

    lent = results["manufacturer"]
    assert lent.candidate.value == "Voltix Devices Ltd"
    assert lent.candidate.note.startswith(FLAG_SIBLING_VARIANT)
    assert lent.decision.action == Action.REVIEW, lent.decision
    other = results["screen_size"]
    assert other.candidate.value is None and other.candidate.status == CandidateStatus.IDENTITY_MISMATCH
    assert "128gb" in other.candidate.note and "256gb" in other.candidate.note


def test_templates_mark_only_brand_like_attributes_invariant() -> None:
    from groundtrace.catalog.templates import load_templates

    templates = load_templates()
    assert len(templates) == 10
    for template in templates:
        invariant = [a for a in template.attributes if a.variant_invariant]
        assert [a.slug for a in invariant] == ["brand"], template.category
        assert not any(a.safety_critical for a in invariant)


# -- conflicts are shown, not buried ----------------------------------------------------------------------
def _gtin(body: str = "01234567890") -> str:
    return body + gtin_check_digit(body)


def _conflict_asserts(r: AttributeResult, other_ref: str) -> None:
    cand = r.candidate
    assert cand.status == CandidateStatus.CONFLICT and cand.value is None
    assert r.decision.action == Action.REVIEW, r.decision  # old code: black WRITE, or BLOCK at 0.52
    quotes = {e.source_ref: e.quote for e in cand.evidence}
    assert set(quotes) == {"catalog:spec:Color", other_ref}
    assert "Black" in quotes["catalog:spec:Color"] and "Red" in quotes[other_ref]
    note = cand.note.lower()
    assert "'black'" in note and "'red'" in note and other_ref.lower() in note


@pytest.mark.parametrize("policy", [None, "cautious"])
def test_catalog_vs_gtin_feed_conflict_goes_to_review_with_both_sides(
    tmp_path: Path, policy: str | None
) -> None:
    gtin = _gtin()
    feed = tmp_path / "feed.csv"
    feed.write_text(f"gtin,Color\n{gtin},Red\n", encoding="utf-8")
    sku = SKU(
        sku_id="cable",
        title="Linkwell USB-C Cable 2 m",
        brand="Linkwell",
        category="electronics",
        gtin=gtin,
        specs={"Color": "Black"},
    )
    results = {r.attribute: r for r in enrich_list([sku], EnrichConfig(feed=feed, policy=policy))}  # type: ignore[arg-type]
    _conflict_asserts(results["color"], f"feed.csv#{gtin.zfill(14)}")


def test_catalog_vs_gtin_matched_page_conflict_goes_to_review(tmp_path: Path) -> None:
    gtin = _gtin("04000000001")
    sku = SKU(
        sku_id="cable",
        title="Linkwell USB-C Cable 2 m",
        brand="Linkwell",
        category="electronics",
        gtin=gtin,
        specs={"Color": "Black", "Connectivity": "USB", "Wattage": "60 W"},
    )
    page = ("Linkwell USB-C Cable 2 m", f"UPC: {gtin}\nColor: Red")
    results = {r.attribute: r for r in enrich_list([sku], EnrichConfig(corpus=_corpus(tmp_path, [page])))}
    _conflict_asserts(results["color"], f"{WEB}0")


def test_catalog_and_feed_that_agree_are_written(tmp_path: Path) -> None:
    gtin = _gtin()
    feed = tmp_path / "feed.csv"
    feed.write_text(f"gtin,Color\n{gtin},black\n", encoding="utf-8")
    sku = SKU(
        sku_id="c",
        title="Linkwell Cable",
        brand="Linkwell",
        category="electronics",
        gtin=gtin,
        specs={"Color": "Black"},
    )
    results = {r.attribute: r for r in enrich_list([sku], EnrichConfig(feed=feed))}
    assert results["color"].candidate.status == CandidateStatus.EXTRACTED
    assert results["color"].decision.action == Action.WRITE


def test_cli_enrich_routes_the_conflict_to_review(tmp_path: Path) -> None:
    gtin = _gtin()
    feed = tmp_path / "feed.csv"
    feed.write_text(f"gtin,Color\n{gtin},Red\n", encoding="utf-8")
    skus = tmp_path / "skus.jsonl"
    sku = SKU(
        sku_id="cable",
        title="Linkwell Cable",
        brand="Linkwell",
        category="electronics",
        gtin=gtin,
        specs={"Color": "Black"},
    )
    skus.write_text(sku.model_dump_json() + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["catalog", "enrich", str(skus), "--feed", str(feed), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {json.loads(line)["attribute"]: json.loads(line) for line in out.read_text().splitlines()}
    assert rows["color"]["decision"]["action"] == "REVIEW"
    assert len(rows["color"]["candidate"]["evidence"]) == 2


# -- title comparison units ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "relation"),
    [
        ("Fizzco Cola, 12 fl oz can", "Fizzco Cola Zero, 12 fl oz can", "sibling_variant"),
        ("Brisa Iced Tea Lemon", "Brisa Iced Tea Diet Lemon", "sibling_variant"),
        ("Brisa Iced Tea Lemon 6 pack", "Brisa Iced Tea Lemon, 6-Pack - Walmart.com", "same"),
        ("Kettle Pro Blender 1200W", "Kettle Pro Blender 900W", "sibling_variant"),
        ("Kettle Pro Blender", "Kettle Pro Food Processor", "other_product"),
        ("Orla Face Cream Sensitive 50 ml", "Orla Face Cream Sensitive 50ml | Orla Official Store", "same"),
        ("Orla Face Cream, Unscented", "Orla Face Cream, Lavender", "sibling_variant"),
        ("Trek Mug Stainless Steel 20 oz, Black", "Trek Mug 20 oz Stainless Steel (Black)", "same"),
    ],
)
def test_compare_titles(a: str, b: str, relation: str) -> None:
    from groundtrace.catalog.identity import compare_titles

    brand = a.split()[0]
    assert compare_titles(a, b, [brand]).relation == relation


def test_identity_result_names_the_differing_words() -> None:
    sku = SKU(sku_id="s", title="Voltix Power Bank", brand="Voltix", category="electronics")
    page = Document(
        source="web", source_type="retailer", source_ref="u", text="", title="Voltix Phone X 256GB"
    )
    result = identity_match(sku, page)
    assert not result.matched and result.relation == "other_product"
    assert result.differing == ["-power", "-bank", "+phone", "+256gb", "+x"]
    assert result.reason == (
        "identity_mismatch: another product line (line words: SKU 'power bank', page 'phone'; "
        "variant words: page '256gb x')"
    )


@pytest.mark.parametrize(
    ("sku_title", "page_title", "relation", "word"),
    [
        (
            "Polar Peak Lager Beer 12 fl oz",
            "Polar Peak Light Lager Beer 12 fl oz",
            "sibling_variant",
            "+light",
        ),
        (
            "Dripline Coffee Pods Original 12 ct",
            "Dripline Coffee Pods Decaf 12 ct",
            "sibling_variant",
            "+decaf",
        ),
        ("Nimbus Drive 1TB", "Nimbus Drive 2TB", "sibling_variant", "+2tb"),
        ("Zephyr Watch Series 5", "Zephyr Watch Series 5 Plus", "sibling_variant", "+plus"),
        (
            "Aurel Hand Soap, Lavender, 8 fl oz",
            "Aurel Hand Soap, Eucalyptus, 8 fl oz",
            "sibling_variant",
            "+eucalyptus",
        ),
        ("Kora Salsa Mild 16 oz", "Kora Salsa Hot 16 oz", "sibling_variant", "+hot"),
        ("Kora Salsa Mild 16 oz", "Kora Tortilla Chips 16 oz", "other_product", "+tortilla"),
        ("Vireo Headphones Max, Black", "Vireo Speaker Mini, Black", "other_product", "-headphone"),
        (
            "Tallis Vitamin D3 Gummies 60 ct",
            "Tallis Vitamin D3 Softgels 60 ct",
            "sibling_variant",
            "+softgels",
        ),
    ],
)
def test_other_brands_and_variant_words(sku_title: str, page_title: str, relation: str, word: str) -> None:
    brand = sku_title.split()[0]
    sku = SKU(sku_id="s", title=sku_title, brand=brand, category="grocery")
    page = Document(source="web", source_type="retailer", source_ref="u", text="", title=page_title)
    result = identity_match(sku, page)
    assert not result.matched and result.relation == relation and word in result.differing, result


def test_same_product_despite_order_case_and_retail_suffix() -> None:
    sku = SKU(sku_id="s", title="Aurel Hand Soap, Lavender, 8 fl oz", brand="Aurel", category="grocery")
    for title in (
        "AUREL HAND SOAP - 8 FL OZ - LAVENDER | Target",
        "Hand Soap, 8 fl oz, Lavender by Aurel - Walmart.com",
        "Aurel Lavender Hand Soap 8 fl. oz. bottle",
    ):
        page = Document(source="web", source_type="retailer", source_ref="u", text="", title=title)
        result = identity_match(sku, page)
        assert result.matched and result.relation == "same" and result.differing == [], (title, result)


def test_sku_mpn_listed_on_another_lines_page_confirms_nothing() -> None:
    sku = SKU(sku_id="s", title="Voltix Power Bank", brand="Voltix", mpn="VX-PB10", category="electronics")
    listed = Document(
        source="web",
        source_type="retailer",
        source_ref="u",
        text="Screen size: 6.7 in\nCompatible accessories: VX-PB10 power bank, VX-CH20 charger",
        title="Voltix Phone X 256GB",
    )
    result = identity_match(sku, listed)
    assert not result.matched and result.relation == "other_product" and result.checks["mpn"] is None
    own = listed.model_copy(update={"text": "Model: VX-PB10", "title": "Voltix Portable Charger"})
    assert identity_match(sku, own).matched  # the page's own labelled part number still confirms


@pytest.mark.parametrize("policy", ["default", "cautious"])
def test_cli_issue_command_writes_nothing_from_a_variant_page(tmp_path: Path, policy: str) -> None:
    """`groundtrace catalog enrich SKUS --corpus PAGES --feed FEED --policy P`, the issue's command."""
    gtin = _gtin("05000000002")
    skus = tmp_path / "skus.jsonl"
    skus.write_text(
        json.dumps(
            {
                "sku_id": "cola",
                "title": "Fizzco Cola, 12 fl oz can",
                "brand": "Fizzco",
                "category": "grocery",
                "gtin": gtin,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    feed = tmp_path / "feed.csv"
    feed.write_text(f"gtin,Brand\n{gtin},Fizzco\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = [
        "catalog",
        "enrich",
        str(skus),
        "--corpus",
        str(_corpus(tmp_path, [COLA_ZERO])),
        "--feed",
        str(feed),
    ]
    result = CliRunner().invoke(app, [*args, "--policy", policy, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {json.loads(line)["attribute"]: json.loads(line) for line in out.read_text().splitlines()}
    assert rows["dietary_labels"]["candidate"]["value"] is None
    assert rows["dietary_labels"]["candidate"]["status"] == "identity_mismatch"
    assert "zero" in rows["dietary_labels"]["candidate"]["note"]
    written_from_web = [
        a
        for a, r in rows.items()
        if r["decision"]["action"] == "WRITE"
        and any(e["source"] == "web" for e in r["candidate"]["evidence"])
    ]
    assert written_from_web == []
