"""Identity matching: GTIN validation and the near-variant rules of the seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.catalog.identity import (
    extract_pack_count,
    extract_sizes,
    extract_variants,
    gtin_check_digit,
    identity_match,
    normalize_gtin,
    valid_gtin,
)
from groundtrace.catalog.model import SKU, Document

# UPC-A 036000291452 (check digit: odd positions 0+6+0+2+1+5=14 → ×3 = 42; even 3+0+0+9+4 = 16; 58 → 2)
UPC = "036000291452"


def sku(title: str, **kw: object) -> SKU:
    return SKU(sku_id="s1", title=title, category="grocery", **kw)  # type: ignore[arg-type]


def page(title: str, text: str = "", **metadata: object) -> Document:
    return Document(
        source="web",
        source_type="retailer",
        source_ref="https://shop.example/p",
        text=text,
        title=title,
        metadata=metadata,
    )


# -- GTIN ------------------------------------------------------------------------------------------------
def test_valid_gtin_lengths_and_check_digits() -> None:
    assert valid_gtin(UPC)
    assert valid_gtin("0" + UPC)  # EAN-13 form
    assert valid_gtin("00" + UPC)  # GTIN-14 form
    assert valid_gtin("96385074")  # EAN-8
    assert valid_gtin("036000 29145-2")  # spaces/hyphens ignored
    assert not valid_gtin("036000291453")  # wrong check digit
    assert not valid_gtin("12345")  # wrong length
    assert not valid_gtin("03600029145X")
    assert not valid_gtin("")


def test_normalize_gtin_makes_upc_and_ean_equal() -> None:
    assert normalize_gtin(UPC) == normalize_gtin("0" + UPC) == "00036000291452"
    assert normalize_gtin("036000291453") is None


@given(st.integers(min_value=0, max_value=10**13 - 1), st.sampled_from([7, 11, 12, 13]))
def test_computed_check_digit_always_validates(n: int, body_len: int) -> None:
    body = str(n % 10**body_len).zfill(body_len)
    code = body + gtin_check_digit(body)
    assert valid_gtin(code)
    assert normalize_gtin(code) == code.zfill(14)


@given(
    st.integers(min_value=0, max_value=10**11 - 1),
    st.integers(min_value=0, max_value=11),
    st.integers(min_value=1, max_value=9),
)
def test_changing_one_digit_invalidates(n: int, position: int, delta: int) -> None:
    # weights 1 and 3 are coprime with 10, so any single-digit change moves the sum mod 10
    body = str(n).zfill(11)
    code = body + gtin_check_digit(body)
    changed = code[:position] + str((int(code[position]) + delta) % 10) + code[position + 1 :]
    assert not valid_gtin(changed)


# -- extraction helpers ---------------------------------------------------------------------------------
def test_extract_sizes_units_and_amounts() -> None:
    sizes = extract_sizes("Juice 32 oz, 1 1/2 lb bag, 2,5 kg, 12 fl. oz. can, 750ml and 1.5L")
    assert [s.text for s in sizes] == ["32 oz", "1 1/2 lb", "2,5 kg", "12 fl. oz.", "750ml", "1.5L"]
    assert [s.dimension for s in sizes] == ["mass", "mass", "mass", "volume", "volume", "volume"]
    assert sizes[0].amount == pytest.approx(907.18, abs=0.01)  # 32 × 28.3495 g
    assert sizes[3].amount == pytest.approx(354.88, abs=0.01)  # 12 × 29.5735 mL
    assert extract_sizes("no sizes here, just 12 apples") == []


def test_sizes_compare_within_two_percent() -> None:
    sixteen_oz, pound, grams, twelve = (extract_sizes(t)[0] for t in ("16 oz", "1 lb", "454 g", "12 oz"))
    assert sixteen_oz.same_as(pound) and sixteen_oz.same_as(grams)
    assert sixteen_oz.same_as(twelve) is False
    assert sixteen_oz.same_as(extract_sizes("16 fl oz")[0]) is None  # mass vs volume: not comparable


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Pack of 4", 4),
        ("6-pack", 6),
        ("6 Pack", 6),
        ("12 ct", 12),
        ("24-Count", 24),
        ("24/Case", 24),
        ("12/Carton", 12),
        ("6 x 330 ml", 6),
        ("Twin Pack", 2),
        ("single pack", 1),
        ("Single Serve Pods", None),
        ("Ground Coffee 12 oz", None),
        ("case of 24 cans", 24),
    ],
)
def test_extract_pack_count(text: str, count: int | None) -> None:
    assert extract_pack_count(text) == count


def test_extract_variants_prefers_longer_phrases_and_skips_brand() -> None:
    found = extract_variants("Orange Crush Black Cherry Soda, Dark Chocolate", exclude="Orange Crush")
    assert found == {"flavor": {"black cherry", "dark chocolate"}}


# -- identity_match ----------------------------------------------------------------------------------------
COFFEE = sku("Folgers Classic Roast Ground Coffee, 16 oz Canister", brand="Folgers", gtin="0" + UPC)


def test_same_product_page_matches() -> None:
    result = identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee 16 Ounce"))
    assert result.matched
    assert result.checks["brand"] is True and result.checks["size"] is True
    assert result.checks["gtin"] is None and result.checks["pack_count"] is None
    assert result.matched_brand == "Folgers" and result.matched_size == "16 Ounce"
    assert result.confidence == pytest.approx(0.7)  # 0.6 + 0.1 × one confirmed (size)


def test_metric_size_equivalent_matches() -> None:
    assert identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee (454 g)")).matched


def test_different_size_is_rejected() -> None:
    result = identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee, 12 oz"))
    assert not result.matched and result.checks["size"] is False
    assert "near-variant" in result.reason and "12 oz" in result.reason


def test_multipack_vs_single_is_rejected_both_ways() -> None:
    six = identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee 16 oz (Pack of 6)"))
    assert not six.matched and six.checks["pack_count"] is False and six.matched_pack == "6"
    sku_six = sku("Coca-Cola Classic 12 fl oz cans, 6-pack", brand="Coca-Cola")
    single = identity_match(sku_six, page("Coca-Cola Classic 12 fl oz can"))
    assert not single.matched and single.checks["pack_count"] is False


def test_different_flavour_is_rejected() -> None:
    vanilla = sku("Chobani Greek Yogurt Vanilla 32 oz", brand="Chobani")
    result = identity_match(vanilla, page("Chobani Greek Yogurt Strawberry 32 oz"))
    assert not result.matched and result.checks["variant"] is False
    assert identity_match(vanilla, page("Chobani Vanilla Greek Yogurt, 32 oz Tub")).matched


GRANOLA = sku("Acme Crunch Granola 16 oz", brand="Acme")


@pytest.mark.parametrize(
    ("product", "title", "word"),
    [
        (sku("Coca-Cola Classic 12 fl oz can", brand="Coca-Cola"), "Coca-Cola Cherry 12 fl oz can", "cherry"),
        (GRANOLA, "Acme Crunch Granola Chocolate 16 oz", "chocolate"),
        (GRANOLA, "Acme Crunch Granola Gluten Free 16 oz", "gluten free"),
        (GRANOLA, "Acme Crunch Granola, Gluten-Free, 1 lb", "gluten free"),
        (GRANOLA, "Acme Organic Crunch Granola 16 oz", "organic"),
        (sku("Acme Ceramic Mug 12 oz", brand="Acme"), "Acme Ceramic Mug 12 oz, Blue", "blue"),
        (sku("Acme Dish Soap 16 fl oz", brand="Acme"), "Acme Dish Soap Lavender 16 fl oz", "lavender"),
    ],
)
def test_page_stating_a_variant_the_sku_does_not_is_a_near_variant(
    product: SKU, title: str, word: str
) -> None:
    result = identity_match(product, page(title))
    assert not result.matched and result.checks["variant"] is False
    assert result.reason == f"near-variant: page states variant {word!r} the SKU does not"
    assert result.checks["brand"] is True and result.checks["size"] is True  # everything else agrees


def test_unstated_variant_is_confirmed_only_by_gtin_or_mpn() -> None:
    coke = sku("Coca-Cola Classic 12 fl oz can", brand="Coca-Cola", gtin=UPC, mpn="CC-CLS-12")
    by_gtin = identity_match(coke, page("Coca-Cola Cherry 12 fl oz can", gtin="0" + UPC))
    assert by_gtin.matched and by_gtin.reason == "GTIN matches"
    by_mpn = identity_match(coke, page("Coca-Cola Cherry 12 fl oz can", text="Item model: CC-CLS-12"))
    assert by_mpn.matched and by_mpn.reason.startswith("MPN matches (page states variant 'cherry'")
    # a variant the SKU itself states that differs is still rejected before the MPN (rule 3)
    cherry = sku("Coca-Cola Cherry 12 fl oz can", brand="Coca-Cola", mpn="CC-CLS-12")
    vanilla = identity_match(cherry, page("Coca-Cola Vanilla 12 fl oz can", text="Item model: CC-CLS-12"))
    assert not vanilla.matched and vanilla.reason == "near-variant: variant 'vanilla'"


def test_unstated_variant_rule_keeps_the_other_rules() -> None:
    assert identity_match(GRANOLA, page("Acme Crunch Granola 16 oz")).matched
    assert identity_match(GRANOLA, page("Acme Crunch Granola, 1 lb Bag")).matched  # 16 oz == 1 lb
    assert identity_match(
        GRANOLA, page("Acme Crunch Granola 16 oz", text="Also in chocolate.")
    ).matched  # body
    twin = identity_match(GRANOLA, page("Acme Crunch Granola 16 oz, Twin Pack"))
    assert not twin.matched and twin.reason == "near-variant: pack count 2 vs 1"
    twelve = sku("Acme Sparkling Water 12 fl oz, 12-pack", brand="Acme")
    assert not identity_match(twelve, page("Acme Sparkling Water 12 fl oz, 24-pack")).matched
    # the SKU's variant from its specs counts as stated
    flavored = sku("Acme Crunch Granola 16 oz", brand="Acme", specs={"Flavor": "Chocolate"})
    assert identity_match(flavored, page("Acme Crunch Granola Chocolate 16 oz")).matched
    # the brand is blanked before variant words are read: "Orange" in a brand is no variant
    assert identity_match(
        sku("Orange Crush Soda 12 fl oz", brand="Orange Crush"), page("Orange Crush Soda 12 fl oz")
    ).matched


def test_gtin_match_confirms_despite_title_noise_and_upc_ean_forms() -> None:
    result = identity_match(COFFEE, page("Coffee canister", text="Item details. UPC: 036000291452"))
    assert result.matched and result.checks["gtin"] is True and result.confidence == pytest.approx(0.99)
    via_metadata = identity_match(COFFEE, page("Some title", gtin="00036000291452"))
    assert via_metadata.matched and "GTIN" in via_metadata.reason


def test_conflicting_gtin_rejects_even_with_matching_title() -> None:
    other = "036000291469"
    assert valid_gtin(other)
    result = identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee 16 oz", gtin=other))
    assert not result.matched and result.checks["gtin"] is False and "conflicting GTIN" in result.reason


def test_gtin_with_check_digit_error_is_ignored_not_confirming() -> None:
    bad = sku("Folgers Classic Roast Ground Coffee, 16 oz", brand="Folgers", gtin="036000291453")
    result = identity_match(bad, page("Folgers Coffee", gtin="036000291453"))
    assert result.checks["gtin"] is None  # an invalid code can neither confirm nor conflict
    assert not result.matched  # falls back to the brand/size rule: size not confirmed


def test_unlabelled_number_in_body_only_confirms() -> None:
    # a related product's barcode in the body is not this page's GTIN: no conflict
    result = identity_match(
        COFFEE, page("Folgers Classic Roast Ground Coffee 16 oz", text="Customers also bought 036000291469")
    )
    assert result.checks["gtin"] is None and result.matched


def test_mpn_match_overrides_title_noise() -> None:
    toner = sku("Xerox Toner Cartridge for WorkCentre 4250", brand="Xerox", mpn="106R01409")
    noisy = page(
        "BEST PRICE!!! High-Yield Laser Cartridge Black - 25K pages", text="Model: 106R01409 compatible"
    )
    result = identity_match(toner, noisy)
    assert result.matched and result.checks["mpn"] is True and result.reason.startswith("MPN matches")
    assert "'black' the SKU does not; MPN wins" in result.reason  # an unstated colour: the MPN confirms
    assert identity_match(toner, page("High-Yield Laser Cartridge")).matched is False  # nothing confirms


def test_conflicting_mpn_or_brand_rejects() -> None:
    toner = sku("Xerox Toner Cartridge", brand="Xerox", mpn="106R01409")
    assert not identity_match(toner, page("Xerox Toner Cartridge", mpn="106R01410")).matched
    coffee_other_brand = identity_match(
        COFFEE, page("Classic Roast Ground Coffee 16 oz", brand="Maxwell House")
    )
    assert not coffee_other_brand.matched and coffee_other_brand.checks["brand"] is False


def test_missing_brand_cannot_confirm() -> None:
    result = identity_match(COFFEE, page("Classic Roast Ground Coffee 16 oz"))
    assert not result.matched and result.reason.startswith("cannot confirm brand")


def test_page_without_title_uses_first_text_line() -> None:
    doc = Document(
        source="syndicated",
        source_type="hq",
        source_ref="feed#1",
        text="Folgers Classic Roast Ground Coffee 12 oz\nOther sizes: 16 oz, 24 oz",
    )
    result = identity_match(COFFEE, doc)
    assert not result.matched and result.checks["size"] is False


# -- properties ----------------------------------------------------------------------------------------
_UNITS = {
    "oz": 28.349523125,
    "lb": 453.59237,
    "g": 1.0,
    "kg": 1000.0,
    "ml": 1.0,
    "L": 1000.0,
    "fl oz": 29.5735295625,
}


@given(st.integers(min_value=1, max_value=9999), st.sampled_from(sorted(_UNITS)))
def test_extract_sizes_reads_any_amount(amount: int, unit: str) -> None:
    sizes = extract_sizes(f"Brand Product {amount} {unit} bag")
    assert len(sizes) == 1
    assert sizes[0].amount == pytest.approx(amount * _UNITS[unit], rel=1e-6)


@given(
    st.integers(min_value=1, max_value=999),
    st.sampled_from(["Pack of {n}", "{n}-Pack", "{n} pk", "{n} Count", "{n} ct", "Case of {n}", "{n}/Case"]),
)
def test_extract_pack_count_reads_any_count(n: int, template: str) -> None:
    assert extract_pack_count("Acme Sparkling Water, 12 fl oz, " + template.format(n=n)) == n


@given(
    st.integers(min_value=1, max_value=500),
    st.integers(min_value=1, max_value=500),
    st.sampled_from(["oz", "g", "ml"]),
)
def test_size_decides_identity(mine: int, theirs: int, unit: str) -> None:
    product = sku(f"Acme Roasted Almonds {mine} {unit}", brand="Acme")
    result = identity_match(product, page(f"Acme Roasted Almonds {theirs} {unit}"))
    close = abs(mine - theirs) <= max(0.5, 0.02 * max(mine, theirs))
    assert result.matched is close
    assert result.checks["size"] is close


# -- end to end: the near-variant page never feeds a value --------------------------------------------------
CHOCOLATE_PAGE = """<!doctype html>
<html><head><title>Acme Crunch Granola, Chocolate, 16 oz</title>
<link rel="canonical" href="https://www.acme.com/products/crunch-granola-chocolate-16-oz"></head>
<body><h1>Acme Crunch Granola, Chocolate, 16 oz</h1>
<table><tr><td>Flavor</td><td>Chocolate</td></tr><tr><td>Country of Origin</td><td>Canada</td></tr>
<tr><td>Storage</td><td>Shelf stable</td></tr></table>
<p>Rich chocolate granola clusters.</p></body></html>
"""


def test_enrich_never_writes_from_a_page_of_another_variant(tmp_path: Path) -> None:
    from groundtrace.catalog.pipeline import EnrichConfig, run_enrich

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "acme_chocolate.html").write_text(CHOCOLATE_PAGE, encoding="utf-8")
    skus = tmp_path / "skus.jsonl"
    skus.write_text(
        json.dumps(
            {"sku_id": "X1", "title": "Acme Crunch Granola 16 oz", "brand": "Acme", "category": "grocery"}
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    summary = run_enrich(skus, out, EnrichConfig(corpus=corpus))
    assert summary.skus_failed == 0, summary.issues
    rows = {r["attribute"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    for attribute in ("flavor", "country_of_origin", "storage"):  # all three only on the chocolate page
        row = rows[attribute]
        assert row["candidate"]["status"] == "identity_mismatch", row
        assert row["candidate"]["value"] is None and row["decision"]["action"] != "WRITE"
    for row in rows.values():  # no value of any attribute rests on the chocolate page
        assert all("chocolate" not in ev["source_ref"] for ev in row["candidate"]["evidence"]), row
