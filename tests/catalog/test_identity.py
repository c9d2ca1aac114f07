"""Identity matching: GTIN validation and the near-variant rules of the seed."""

from __future__ import annotations

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
    return Document(source="web", source_type="retailer", source_ref="https://shop.example/p", text=text,
                    title=title, metadata=metadata)


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


@given(st.integers(min_value=0, max_value=10**11 - 1), st.integers(min_value=0, max_value=11),
       st.integers(min_value=1, max_value=9))
def test_changing_one_digit_invalidates(n: int, position: int, delta: int) -> None:
    # weights 1 and 3 are coprime with 10, so any single-digit change moves the sum mod 10
    body = str(n).zfill(11)
    code = body + gtin_check_digit(body)
    changed = code[:position] + str((int(code[position]) + delta) % 10) + code[position + 1:]
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
    [("Pack of 4", 4), ("6-pack", 6), ("6 Pack", 6), ("12 ct", 12), ("24-Count", 24), ("24/Case", 24),
     ("12/Carton", 12), ("6 x 330 ml", 6), ("Twin Pack", 2), ("single pack", 1), ("Single Serve Pods", None),
     ("Ground Coffee 12 oz", None), ("case of 24 cans", 24)],
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
    result = identity_match(COFFEE, page("Folgers Classic Roast Ground Coffee 16 oz",
                                         text="Customers also bought 036000291469"))
    assert result.checks["gtin"] is None and result.matched


def test_mpn_match_overrides_title_noise() -> None:
    toner = sku("Xerox Toner Cartridge for WorkCentre 4250", brand="Xerox", mpn="106R01409")
    noisy = page("BEST PRICE!!! High-Yield Laser Cartridge Black - 25K pages", text="Model: 106R01409 compatible")
    result = identity_match(toner, noisy)
    assert result.matched and result.checks["mpn"] is True and result.reason == "MPN matches"
    assert identity_match(toner, page("High-Yield Laser Cartridge")).matched is False  # nothing confirms


def test_conflicting_mpn_or_brand_rejects() -> None:
    toner = sku("Xerox Toner Cartridge", brand="Xerox", mpn="106R01409")
    assert not identity_match(toner, page("Xerox Toner Cartridge", mpn="106R01410")).matched
    coffee_other_brand = identity_match(COFFEE, page("Classic Roast Ground Coffee 16 oz", brand="Maxwell House"))
    assert not coffee_other_brand.matched and coffee_other_brand.checks["brand"] is False


def test_missing_brand_cannot_confirm() -> None:
    result = identity_match(COFFEE, page("Classic Roast Ground Coffee 16 oz"))
    assert not result.matched and result.reason.startswith("cannot confirm brand")


def test_page_without_title_uses_first_text_line() -> None:
    doc = Document(source="syndicated", source_type="hq", source_ref="feed#1",
                   text="Folgers Classic Roast Ground Coffee 12 oz\nOther sizes: 16 oz, 24 oz")
    result = identity_match(COFFEE, doc)
    assert not result.matched and result.checks["size"] is False


# -- properties ----------------------------------------------------------------------------------------
_UNITS = {"oz": 28.349523125, "lb": 453.59237, "g": 1.0, "kg": 1000.0, "ml": 1.0, "L": 1000.0,
          "fl oz": 29.5735295625}


@given(st.integers(min_value=1, max_value=9999), st.sampled_from(sorted(_UNITS)))
def test_extract_sizes_reads_any_amount(amount: int, unit: str) -> None:
    sizes = extract_sizes(f"Brand Product {amount} {unit} bag")
    assert len(sizes) == 1
    assert sizes[0].amount == pytest.approx(amount * _UNITS[unit], rel=1e-6)


@given(st.integers(min_value=1, max_value=999),
       st.sampled_from(["Pack of {n}", "{n}-Pack", "{n} pk", "{n} Count", "{n} ct", "Case of {n}", "{n}/Case"]))
def test_extract_pack_count_reads_any_count(n: int, template: str) -> None:
    assert extract_pack_count("Acme Sparkling Water, 12 fl oz, " + template.format(n=n)) == n


@given(st.integers(min_value=1, max_value=500), st.integers(min_value=1, max_value=500),
       st.sampled_from(["oz", "g", "ml"]))
def test_size_decides_identity(mine: int, theirs: int, unit: str) -> None:
    product = sku(f"Acme Roasted Almonds {mine} {unit}", brand="Acme")
    result = identity_match(product, page(f"Acme Roasted Almonds {theirs} {unit}"))
    close = abs(mine - theirs) <= max(0.5, 0.02 * max(mine, theirs))
    assert result.matched is close
    assert result.checks["size"] is close
