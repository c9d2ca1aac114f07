"""Category templates: built-in YAMLs, validation errors naming the file, routing, WDC generation, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.importers.wdc_pave import templates_from_wdc
from groundtrace.catalog.model import AttributeSpec, CategoryTemplate
from groundtrace.catalog.templates import (
    TemplateError,
    TemplateSet,
    category_key,
    dump_template,
    load_template_file,
    load_templates,
    split_category_path,
)
from groundtrace.cli import app
from tests.conftest import FIXTURES, shared_path

runner = CliRunner()
WDC_DESCRIPTIONS = FIXTURES / "catalog" / "wdc_descriptions_sample.csv"


@pytest.fixture(scope="module")
def builtin() -> TemplateSet:
    return load_templates()


def test_builtin_templates_cover_the_seed_and_dataset_categories(builtin: TemplateSet) -> None:
    assert builtin.categories() == [
        "alcohol",
        "apparel",
        "electronics",
        "grocery",
        "health_household",
        "home",
        "jewelry",
        "musical_instruments",
        "office",
        "sports_outdoors",
    ]


@pytest.mark.parametrize(
    ("folder", "file"),
    [("oa_mine", "validation.jsonl"), ("ae_110k", "validation.jsonl"), ("wdc_pave", "train_large.jsonl")],
)
def test_every_category_of_the_public_datasets_routes_to_a_builtin_template(
    builtin: TemplateSet, folder: str, file: str
) -> None:
    import json

    path = shared_path("catalog", folder, file)
    categories = {json.loads(line)["category"] for line in path.read_text(encoding="utf-8").splitlines()}
    assert categories and {c for c in categories if builtin.for_category(c) is None} == set()


def test_grocery_safety_attributes(builtin: TemplateSet) -> None:
    grocery = builtin.get("grocery")
    allergens = grocery.attribute("allergens")
    assert allergens.type == "enum" and allergens.multi_valued and allergens.safety_critical
    assert {"milk", "eggs", "peanuts", "tree_nuts", "soybeans", "wheat", "fish", "sesame"} <= set(
        allergens.allowed_values
    )
    diet = grocery.attribute("dietary_labels")
    assert (
        diet.safety_critical
        and diet.multi_valued
        and {"vegan", "vegetarian", "gluten_free"} <= set(diet.allowed_values)
    )
    assert grocery.attribute("organic").type == "bool"
    assert grocery.attribute("net_content").type == "number"
    # only allergens and dietary labels are safety-critical in grocery
    assert {a.slug for a in grocery.attributes if a.safety_critical} == {"allergens", "dietary_labels"}


def test_other_builtin_attributes(builtin: TemplateSet) -> None:
    assert "nimh" in builtin.get("electronics").attribute("battery_type").allowed_values
    assert builtin.get("electronics").attribute("frequency").unit == "Hz"
    assert builtin.get("alcohol").attribute("abv").unit == "percent"
    assert builtin.get("home").attribute("material").image_friendly


@pytest.mark.parametrize(
    ("category", "expected", "how"),
    [
        ("grocery", "grocery", "exact"),
        ("GROCERY", "grocery", "alias"),
        ("Grocery & Gourmet Food", "grocery", "alias"),
        ("grocery and gourmet food", "grocery", "alias"),
        ("Grocery & Gourmet Food > Coffee", "grocery", "path"),
        ("Pantry > Breakfast Cereal", "grocery", "keyword"),
        ("Home & Kitchen > Coffee Makers", "home", "path"),
        ("Appliances > Coffee Makers", "home", "keyword"),  # "coffee makers" is longer than "coffee"
        ("Grocery > Wine", "alcohol", "path"),  # leaf first
        ("Computers And Accessories", "electronics", "alias"),
        ("Electronics / Batteries", "electronics", "path"),
        ("Jewelry", "jewelry", "alias"),
        ("Office Products", "office", "alias"),
        ("Vitamin", "health_household", "keyword"),
        ("Laundry Detergent", "health_household", "keyword"),
        ("Shoes", "apparel", "keyword"),
        ("Lure", "sports_outdoors", "keyword"),
        ("Guitar", "musical_instruments", "keyword"),
        ("Grocery > Sea bass", "grocery", "path"),  # no "bass" keyword: a fish is no guitar
        ("Grocery > Rice paper", "grocery", "path"),  # nor "paper" (office)
        ("Pet Supplies", None, "none"),
        ("", None, "none"),
    ],
)
def test_routing(builtin: TemplateSet, category: str, expected: str | None, how: str) -> None:
    template, route = builtin.resolve(category)
    assert (template.category if template else None) == expected
    assert route == how
    assert builtin.for_category(category) is template


def test_split_and_key() -> None:
    assert split_category_path("A > B/C | D") == ["A", "B", "C", "D"]
    assert category_key("Home & Garden") == category_key("home and  garden") == "home and garden"


@given(st.text(max_size=40))
def test_routing_never_raises(text: str) -> None:
    result = load_templates_cached().for_category(text)
    assert result is None or isinstance(result, CategoryTemplate)


_CACHE: dict[str, TemplateSet] = {}


def load_templates_cached() -> TemplateSet:
    if "builtin" not in _CACHE:
        _CACHE["builtin"] = load_templates()
    return _CACHE["builtin"]


def test_dump_round_trips(builtin: TemplateSet, tmp_path: Path) -> None:
    for template in builtin:
        path = tmp_path / f"{template.category}.yaml"
        path.write_text(dump_template(template), encoding="utf-8")
        assert load_template_file(path) == template


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("category: x\nattributes: []\n", "no attributes"),
        ("category: x\nattributes:\n  - {slug: a, name: A, type: enum}\n", "no allowed_values"),
        ("category: x\nattributes:\n  - {slug: a, name: A}\n  - {slug: a, name: B}\n", "duplicate"),
        (
            "category: x\nattributes:\n  - {slug: Bad Slug, name: A}\n",
            ":3: attributes.0.slug: String should match",
        ),
        (
            "category: x\nattributes:\n  - {slug: a, name: A, tpye: enum}\n",
            ":3: attributes.0.tpye: unknown key (did you mean 'type'?)",
        ),
        (
            "category: x\nattributes:\n  - {slug: a, name: A, type: string, unit: g}\n",
            "units need type number",
        ),
        ("- just a list\n", ":1: expected a mapping, got a list"),
        ("category: [unclosed\n", ":2: invalid YAML"),
        ("category: x\ncategory: y\nattributes: []\n", ":2: duplicate key 'category' (first at line 1)"),
    ],
)
def test_invalid_templates_name_the_file(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(TemplateError) as info:
        load_templates(tmp_path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="no \\*.yaml"):
        load_templates(tmp_path)


def test_merged_set_prefers_added_names_over_aliases(builtin: TemplateSet) -> None:
    generated = TemplateSet(
        [
            CategoryTemplate(
                category="Home And Garden",
                aliases=["Home & Garden"],
                attributes=[AttributeSpec(slug="gauge", name="Gauge")],
            )
        ]
    )
    merged = builtin.merged(generated)
    assert merged.for_category("Home And Garden").category == "Home And Garden"
    assert merged.for_category("Home & Garden").category == "Home And Garden"
    assert merged.for_category("Home & Kitchen").category == "home"  # untouched built-in alias


def test_generate_from_wdc_fixture() -> None:
    templates, issues = templates_from_wdc(WDC_DESCRIPTIONS)
    by_name = {t.category: t for t in templates}
    assert set(by_name) == {"Computers And Accessories", "Home And Garden"}
    computers = by_name["Computers And Accessories"]
    # Part Number is an identifier (SKU.mpn), not a template attribute; Manufacturer maps to brand
    assert [a.slug for a in computers.attributes] == ["brand", "capacity"]
    capacity = computers.attribute("capacity")
    assert (
        capacity.type == "number" and capacity.unit == "GB"
    )  # 2TB, 40GB, 73-GB, 1TB: all data sizes → GB, 4 of 4
    assert "n/a" not in capacity.examples and capacity.examples[0] == "2TB"
    brand = computers.attribute("brand")
    assert brand.type == "string" and brand.recommended_values == ["HP", "Dell", "Seagate"]
    home = by_name["Home And Garden"]
    assert home.aliases == ["Home & Garden"]
    assert home.attribute("material").image_friendly and home.attribute("width").unit == "in"
    assert len(issues) == 1 and issues[0].line == 8 and "without Category" in issues[0].message


def test_generate_from_real_wdc_descriptions(tmp_path: Path) -> None:
    csv_path = shared_path("catalog", "wdc_pave", "descriptions.csv")
    result = runner.invoke(
        app, ["catalog", "templates", "generate", "--from-wdc", str(csv_path), "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    generated = load_templates(tmp_path)
    assert generated.categories() == [
        "Computers And Accessories",
        "Grocery And Gourmet Food",
        "Home And Garden",
        "Jewelry",
        "Office Products",
    ]
    grocery = generated.get("Grocery And Gourmet Food")
    assert {"brand", "flavor", "net_content", "pack_count"} <= {a.slug for a in grocery.attributes}
    assert all(a.definition for t in generated for a in t.attributes)
    # header comment + valid YAML
    text = (tmp_path / "jewelry.yaml").read_text(encoding="utf-8")
    assert text.startswith("# generated by") and yaml.safe_load(text)["category"] == "Jewelry"


def test_cli_list_and_show() -> None:
    result = runner.invoke(app, ["catalog", "templates", "list", "--json"])
    assert result.exit_code == 0
    assert "dietary_labels" in result.output
    shown = runner.invoke(app, ["catalog", "templates", "show", "Grocery & Gourmet Food > Coffee"])
    assert shown.exit_code == 0 and "-> grocery (path)" in shown.output
    missing = runner.invoke(app, ["catalog", "templates", "show", "Pet Supplies"])
    assert missing.exit_code == 1


def test_cli_coverage_names_categories_without_a_template(tmp_path: Path) -> None:
    from groundtrace.catalog.model import SKU

    skus = tmp_path / "skus.jsonl"
    rows = [
        SKU(sku_id=f"s{i}", title="t", category=c) for i, c in enumerate(["Coffee", "Coffee", "[b]Pets[/b]"])
    ]
    skus.write_text("".join(r.model_dump_json() + "\n" for r in rows), encoding="utf-8")
    shown = runner.invoke(app, ["catalog", "templates", "coverage", str(skus)])
    assert shown.exit_code == 1 and "1 without a template" in shown.output and "[b]Pets[/b]" in shown.output
    data = runner.invoke(app, ["catalog", "templates", "coverage", str(skus), "--json"])
    parsed = __import__("json").loads(data.output)
    assert parsed["skus_without_template"] == 1
    assert parsed["categories"][0] == {
        "category": "Coffee",
        "skus": 2,
        "template": "grocery",
        "how": "keyword",
    }


def test_cli_bad_template_dir_is_a_usage_error(tmp_path) -> None:
    for command in (["list"], ["show", "grocery"]):
        result = runner.invoke(app, ["catalog", "templates", *command, "--dir", str(tmp_path / "nope")])
        assert result.exit_code == 2, (command, result.output)
        assert "not a directory of templates" in result.output and "Traceback" not in result.output


def test_cli_generate_without_a_wdc_header_is_one_line(tmp_path) -> None:
    bad = tmp_path / "descriptions.csv"
    bad.write_text("foo;bar\n1;2\n", encoding="utf-8")
    result = runner.invoke(
        app, ["catalog", "templates", "generate", "--from-wdc", str(bad), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and f"error: {bad}:1: header lacks" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()
