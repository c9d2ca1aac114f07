"""Issue 24 item 2: the ingredient -> allergen map (catalog/data/allergens.json) and its detector.

Expected values are written by hand from Regulation (EU) 1169/2011 Annex II (the group an ingredient
belongs to, its exemptions) — not read back from the detector.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groundtrace.catalog.scout.ingredients import (
    allergen_mentions,
    contained,
    covers,
    ingredient_list_mentions,
    load_map,
)

ROOT = Path(__file__).resolve().parents[3]


def _values(text: str) -> set[str]:
    return set(contained(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the list: every item is a wheat source, soy sauce also soy
        ("enriched flour, soy sauce, panko breadcrumbs, pretzels", {"wheat", "gluten", "soybeans"}),
        ("wheat flour, sesame seeds", {"wheat", "gluten", "sesame"}),
        # not gluten: rice, buckwheat, oats sold as gluten-free, a qualified non-wheat flour
        ("rice flour, buckwheat groats, gluten-free oats, chickpea flour, tapioca starch", set()),
        # barley, rye and oats are gluten cereals but not wheat
        ("Rolled oats, pearl barley, rye flakes", {"gluten"}),
        ("spelt, durum semolina, bulgur, couscous, seitan", {"wheat", "gluten"}),
        # plurals and case
        ("ALMONDS, Cashews, walnut pieces, EGGS, Anchovies", {"tree_nuts", "eggs", "fish"}),
        # look-alikes that are no allergen source
        ("coconut, nutmeg, butternut squash, water chestnuts, eggplant, cocoa butter, shea butter", set()),
        ("peanut butter, almond milk, coconut milk, oat milk", {"peanuts", "tree_nuts", "gluten"}),
        # compound ingredients: parentheses and brackets are transparent
        (
            "chocolate chips (sugar, chocolate liquor, milkfat, soy lecithin [emulsifier]), salt",
            {"milk", "soybeans"},
        ),
        # Annex II exemptions: refined soybean oil, wheat glucose syrup, maltodextrin
        ("soybean oil, wheat glucose syrup, maltodextrin, dextrose", set()),
        # negations
        ("Wheat-free. No milk. Free from peanuts. Non-dairy creamer (corn syrup)", set()),
        (
            "shrimp, squid rings, mussels, mustard seed, celeriac, tahini, lupin flour, sodium metabisulfite",
            {
                "crustacean_shellfish",
                "molluscs",
                "mustard",
                "celery",
                "sesame",
                "lupin",
                "sulphites",
            },
        ),
    ],
)
def test_contained(text: str, expected: set[str]) -> None:
    assert _values(text) == expected


def test_may_contain_is_a_trace_not_an_ingredient() -> None:
    text = (
        "Sugar, oats. May contain traces of milk and hazelnuts. Made in a facility that also processes wheat."
    )
    mentions = allergen_mentions(text)
    assert {(m.term, m.trace) for m in mentions} == {
        ("oats", False),
        ("milk", True),
        ("hazelnuts", True),
        ("wheat", True),
    }
    assert _values(text) == {"gluten"}


def test_gluten_free_item_gives_no_gluten_but_keeps_other_allergens() -> None:
    assert _values("gluten-free pretzels, gluten-free soy sauce (water, soybeans, salt)") == {"soybeans"}


def test_bare_flour_is_wheat_only_unqualified_or_with_a_wheat_qualifier() -> None:
    assert _values("Flour (niacin, iron), sugar") == {"wheat", "gluten"}
    assert _values("unbleached all-purpose flour") == {"wheat", "gluten"}
    assert _values("black chickpea gram flour, cassava flour") == set()


def test_covers_wheat_or_gluten_for_a_wheat_source_but_only_gluten_for_barley() -> None:
    wheat = next(m for m in allergen_mentions("wheat flour"))
    barley = next(m for m in allergen_mentions("barley"))
    assert covers(["wheat"], wheat) and covers(["gluten"], wheat)
    assert covers(["gluten"], barley) and not covers(["wheat"], barley)


def test_ingredient_list_mentions_only_read_the_list_line() -> None:
    text = "Crunchy oat clusters with cheese.\nIngredients: rice, almonds, milk powder.\nServe chilled."
    found = ingredient_list_mentions(text)
    assert {text[m.span[0] : m.span[1]] for m in found} == {"almonds", "milk powder"}


def test_map_carries_provenance_licence_and_all_14_annex_groups() -> None:
    amap = load_map()
    assert len(amap.groups) == 14
    sources = amap.data["sources"]
    off = next(s for s in sources if "Open Food Facts" in s["name"])
    assert off["licence"].startswith("ODbL") and len(off["commit"]) == 40
    assert "1169/2011" in sources[0]["name"]
    assert {g["value"] for g in amap.groups.values()} == {
        "gluten",
        "crustacean_shellfish",
        "eggs",
        "fish",
        "peanuts",
        "soybeans",
        "milk",
        "tree_nuts",
        "celery",
        "mustard",
        "sesame",
        "sulphites",
        "lupin",
        "molluscs",
    }


def test_committed_map_is_what_the_script_builds(tmp_path: Path) -> None:
    out = tmp_path / "allergens.json"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_allergen_map.py"), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    built = json.loads(out.read_text(encoding="utf-8"))
    committed = json.loads((ROOT / "src/groundtrace/catalog/data/allergens.json").read_text(encoding="utf-8"))
    assert {**built, "generated": ""} == {**committed, "generated": ""}


def test_build_reads_allergen_properties_of_an_off_ingredients_taxonomy(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_allergen_map import build
    finally:
        sys.path.pop(0)
    taxonomy = tmp_path / "ingredients.txt"
    taxonomy.write_text(
        "en: farro wheat, emmer grains\nallergens:en: en:gluten\n\n"
        "< en:farro wheat\nen: pearled farro wheat\n\n"
        "en: quark cheese\nallergens:en: en:milk\n\n"
        "en: carrot\n",
        encoding="utf-8",
    )
    data = build(ingredients=taxonomy)
    assert data["terms"]["emmer grains"] == ["cereals_gluten"]
    assert data["terms"]["pearled farro wheat"] == ["cereals_gluten"]  # inherited from its parent
    assert data["terms"]["quark cheese"] == ["milk"]
    assert "carrot" not in data["terms"]
