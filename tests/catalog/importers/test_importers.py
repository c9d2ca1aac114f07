"""Importers: fixtures with hand-checked expectations, malformed lines with file:line, real samples, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.importers import IMPORTERS, Importer, import_file, read_jsonl_models, slugify
from groundtrace.catalog.model import SKU, GoldLabel
from groundtrace.cli import app
from groundtrace.core.registry import UnknownNameError
from tests.conftest import FIXTURES, shared_path

runner = CliRunner()
FIX = FIXTURES / "catalog"


def gold_map(records) -> dict[tuple[str, str], GoldLabel]:
    return {(g.sku_id, g.attribute): g for r in records for g in r.gold}


def test_registry_names_aliases_and_suggestions() -> None:
    assert IMPORTERS.names() == ["ae-110k", "oa-mine", "openfoodfacts", "wdc-pave"]
    assert IMPORTERS.canonical("off") == "openfoodfacts"
    assert issubclass(IMPORTERS.get("wdc"), Importer)
    with pytest.raises(UnknownNameError, match="did you mean|Did you mean"):
        IMPORTERS.get("wdc-pav")


def test_slugify() -> None:
    assert slugify("Color(s)") == "color_s"
    assert slugify("Back / Side Material") == "back_side_material"
    assert slugify("Sleeve Length(cm)") == "sleeve_length_cm"


# -- WDC-PAVE ---------------------------------------------------------------------------------------------
def test_wdc_fixture() -> None:
    report, records = import_file("wdc-pave", FIX / "wdc_sample.jsonl")
    assert [r.sku.sku_id for r in records] == ["wdc:101", "wdc:102", "wdc:105"]
    juice = records[0].sku
    assert juice.gtin == "031200259240" and juice.mpn == "OCS25924"
    assert juice.brand is None  # the brand is the label being evaluated: never copied onto the record
    assert juice.category == "Grocery And Gourmet Food" and juice.url == "www.example-shop.com"
    gold = gold_map(records)
    assert gold[("wdc:101", "product_type")].value == "Juice"
    assert gold[("wdc:101", "product_type")].alternatives == ["juice"]
    assert gold[("wdc:101", "net_content")].value == "32 oz"  # Size/Weight → net_content
    assert gold[("wdc:101", "brand")].value == "Ocean Spray" and gold[("wdc:101", "brand")].in_text
    assert gold[("wdc:101", "packaging_type")].in_text is None  # n/a gold: nothing to find
    assert gold[("wdc:101", "pack_count")].value == "12/Carton"
    assert gold[("wdc:101", "packaging_type")].not_applicable
    # identifiers are SKU fields, never gold
    assert ("wdc:101", "gtin") not in gold and ("wdc:101", "mpn") not in gold
    # Manufacturer → brand gold; an invalid UPC is reported and not used
    assert gold[("wdc:102", "brand")].value == "Regency" and records[1].sku.gtin is None
    assert gold[("wdc:105", "color")].value == "Manila"  # Color(s) → color
    text = "\n".join(report.issues)
    path = str(FIX / "wdc_sample.jsonl")
    assert f"{path}:2: warning: Retail UPC '040036684183' fails the GTIN check digit" in text
    assert f"{path}:3: error: invalid JSON" in text
    assert f"{path}:4: error: missing field(s): input_title" in text
    assert f"{path}:7: error: duplicate sku_id 'wdc:101'" in text
    assert (report.skus, report.errors, report.warnings) == (3, 3, 1)
    # 101: brand, product_type, flavor, net_content, pack_count, packaging_type (n/a) = 6 (UPC/MPN excluded)
    # 102: brand, material, width, color (n/a) = 4;  105: brand, color, pack_count = 3  → 13 = 11 + 2 n/a
    assert (report.gold, report.gold_with_value, report.gold_not_applicable) == (13, 11, 2)


def test_limit_stops_early_and_drops_later_issues(tmp_path: Path) -> None:
    report, _ = import_file("wdc-pave", FIX / "wdc_sample.jsonl", tmp_path, limit=1)
    assert report.skus == 1 and report.errors == 0 and report.warnings == 0
    assert len((tmp_path / "skus.jsonl").read_text().splitlines()) == 1


def test_written_files_round_trip(tmp_path: Path) -> None:
    report, kept = import_file("wdc-pave", FIX / "wdc_sample.jsonl", tmp_path)
    assert kept == []  # written, not kept in memory
    skus, sku_issues = read_jsonl_models(tmp_path / "skus.jsonl", SKU)
    gold, gold_issues = read_jsonl_models(tmp_path / "gold.jsonl", GoldLabel)
    assert not sku_issues and not gold_issues
    assert len(skus) == report.skus and len(gold) == report.gold


def test_read_jsonl_models_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(
        '{"sku_id": "a", "attribute": "brand", "value": "X"}\n{"sku_id": "b"}\n\n', encoding="utf-8"
    )
    items, issues = read_jsonl_models(path, GoldLabel)
    assert len(items) == 1 and len(issues) == 1
    assert issues[0].line == 2 and "attribute" in issues[0].message


# -- ExtractGPT formats ---------------------------------------------------------------------------------
def test_oa_mine_fixture_partial_annotation_and_diet_mapping() -> None:
    report, records = import_file("oa-mine", FIX / "oa_mine_sample.jsonl")
    ids = [r.sku.sku_id for r in records]
    assert ids == [
        "oa-mine:oa_mine_sample:1",
        "oa-mine:oa_mine_sample:2",
        "oa-mine:oa_mine_sample:3",
        "oa-mine:oa_mine_sample:4",
        "oa-mine:oa_mine_sample:6",
    ]
    assert records[0].sku.title.startswith("Lavazza") and records[0].sku.brand is None
    gold = gold_map(records)
    # Coffee attributes in the file: Brand, Item form, Net content, Roast type. Line 4 lacks Roast type:
    # unknown (partial annotation), not n/a — no gold label at all
    assert ("oa-mine:oa_mine_sample:4", "roast_type") not in gold
    assert gold[("oa-mine:oa_mine_sample:4", "net_content")].value == "30.5 Ounce"
    assert gold[("oa-mine:oa_mine_sample:2", "pack_count")].value == "Pack of 6"
    # Specialty "Organic" adds organic=true; Diet "Vegan & Gluten Free" → enum list
    assert gold[("oa-mine:oa_mine_sample:2", "organic")].value == "true"
    assert gold[("oa-mine:oa_mine_sample:3", "dietary_labels")].value == ["gluten_free", "vegan"]
    # unmappable diet wording stays raw under 'diet'
    assert gold[("oa-mine:oa_mine_sample:6", "diet")].value == "Paleo & Carnivore"
    # Vitamin attributes: Brand, Diet, Item form, Net content; line 6 lacks Item form: unknown
    assert ("oa-mine:oa_mine_sample:6", "item_form") not in gold
    assert report.gold_not_applicable == sum(g.not_applicable for r in records for g in r.gold)
    assert report.counters == {"diet_unmapped": 1, "organic_from_specialty": 1}
    assert report.errors == 1 and "oa_mine_sample.jsonl:5: error: invalid JSON" in report.issues[0]


def test_ae_110k_fixture_alternatives_and_html() -> None:
    report, records = import_file("ae-110k", FIX / "ae_110k_sample.jsonl")
    assert len(records) == 2
    gold = gold_map(records)
    assert gold[("ae-110k:ae_110k_sample:1", "model_number")].value == "YA180"  # a gold target here
    assert gold[("ae-110k:ae_110k_sample:1", "brand")].value == "SEAPESCA"
    assert records[1].sku.title == "Taddlee Brand Men's Swimwear Briefs"
    description = gold[("ae-110k:ae_110k_sample:2", "description")]
    assert description.value == "Men's Swimwear" and description.alternatives == ["Men Briefs"]
    assert gold[("ae-110k:ae_110k_sample:2", "pattern")].not_applicable
    assert ("ae-110k:ae_110k_sample:1", "pattern") not in gold  # no implicit n/a for AE-110K
    assert report.counters == {"na_mixed": 1}
    assert "ae_110k_sample.jsonl:3: error: empty input" in report.issues[0]


# -- Open Food Facts ----------------------------------------------------------------------------------------
def test_openfoodfacts_fixture() -> None:
    report, records = import_file("openfoodfacts", FIX / "off_sample.tsv")
    by_id = {r.sku.sku_id: r for r in records}
    assert list(by_id) == ["off:0036000291452", "off:0036000291453", "off:3017620422003", "off:7610000000004"]
    cereal = by_id["off:0036000291452"].sku
    assert cereal.gtin == "0036000291452" and cereal.brand == "Acme"
    assert cereal.category == "Grocery > Breakfast cereals"
    assert cereal.specs == {"packaging": "box", "quantity": "350 g"}  # the record's net content
    assert cereal.description.startswith("Whole grain oats")
    assert by_id["off:7610000000004"].sku.category == "Alcohol > Red wines"
    assert by_id["off:0036000291453"].sku.gtin is None  # bad check digit: kept, gtin empty
    gold = gold_map(records)
    assert gold[("off:0036000291452", "allergens")].value == ["soybeans"]  # traces (nuts) are not allergens
    assert gold[("off:0036000291452", "dietary_labels")].value == ["gluten_free", "vegan", "vegetarian"]
    assert gold[("off:0036000291452", "organic")].value == "true"
    # net content is an input field of the record, so it is no gold (it would be a copy of the input)
    assert not any(g.attribute == "net_content" for r in records for g in r.gold)
    # unmappable allergen tag → allergen gold dropped; vegan label contradicted by analysis → dropped
    assert ("off:0036000291453", "allergens") not in gold
    assert gold[("off:0036000291453", "dietary_labels")].value == ["vegetarian"]
    assert gold[("off:3017620422003", "allergens")].value == ["milk", "tree_nuts"]
    assert ("off:3017620422003", "dietary_labels") not in gold  # positive-only gold
    assert gold[("off:7610000000004", "allergens")].value == ["sulphites"]
    text = "\n".join(report.issues)
    assert "off_sample.tsv:3: warning: code '0036000291453' fails the GTIN check digit" in text
    assert "off_sample.tsv:3: warning: allergen tag(s) ['de:molkenpulver']" in text
    assert "off_sample.tsv:3: warning: label(s) ['vegan'] contradicted" in text
    assert "off_sample.tsv:4: error: product 4006381333931: no product_name" in text
    assert "off_sample.tsv:5: error: 2 fields, header has 14" in text
    assert report.counters == {
        "allergens_dropped_unmapped": 1,
        "dietary_contradictions": 1,
        "invalid_gtin": 1,
    }


def test_openfoodfacts_header_check(tmp_path: Path) -> None:
    path = tmp_path / "x.tsv"
    path.write_text("code\tproduct_name\n1\tA\n", encoding="utf-8")
    report, records = import_file("openfoodfacts", path)
    assert (
        records == [] and report.errors == 1 and "x.tsv:1: error: header lacks column(s)" in report.issues[0]
    )


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        import_file("wdc-pave", tmp_path / "absent.jsonl")


# -- real samples ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fmt", "parts", "skus", "categories"),
    [
        ("wdc-pave", ("wdc_pave", "train_large.jsonl"), 1066, 5),
        ("oa-mine", ("oa_mine", "validation.jsonl"), 245, 10),
        ("ae-110k", ("ae_110k", "validation.jsonl"), 261, 10),
        ("openfoodfacts", ("openfoodfacts", "products.tsv"), 491, None),
    ],
)
def test_real_samples_import(fmt: str, parts: tuple[str, str], skus: int, categories: int | None) -> None:
    report, records = import_file(fmt, shared_path("catalog", *parts))
    assert report.skus == len(records) == skus
    if categories is not None:
        assert len(report.categories) == categories
    assert report.gold_with_value > 0
    assert all(g.sku_id == r.sku.sku_id for r in records for g in r.gold)


@pytest.mark.slow  # real samples: the whole WDC-PAVE file
def test_real_wdc_gold_shape() -> None:
    report, records = import_file("wdc-pave", shared_path("catalog", "wdc_pave", "train_large.jsonl"))
    first = records[0]
    assert first.sku.sku_id == "wdc:16828130" and first.sku.gtin == "095205742466" and first.sku.brand is None
    assert first.sku.mpn == "XER106R01409"
    gold = {g.attribute: g for g in first.gold}
    assert gold["page_yield"].value == "25K" and gold["pack_count"].not_applicable
    assert report.counters.get("invalid_upc", 0) == report.warnings  # the only warnings are bad UPCs


def test_real_openfoodfacts_gold() -> None:
    report, records = import_file("openfoodfacts", shared_path("catalog", "openfoodfacts", "products.tsv"))
    allergen_values = {v for r in records for g in r.gold if g.attribute == "allergens" for v in g.value}
    assert {"milk", "soybeans", "gluten", "eggs"} <= allergen_values
    assert report.attributes["organic"] > 0 and report.attributes["dietary_labels"] > 0
    assert report.errors == 500 - report.skus  # every skipped row was reported


def test_cli_import(tmp_path: Path) -> None:
    out = tmp_path / "wdc"
    result = runner.invoke(
        app,
        [
            "catalog",
            "import",
            "--format",
            "wdc-pave",
            str(FIX / "wdc_sample.jsonl"),
            "--out",
            str(out),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["skus"] == 3 and (out / "gold.jsonl").exists()
    bad = runner.invoke(
        app, ["catalog", "import", "--format", "wdcpave", str(FIX / "wdc_sample.jsonl"), "--out", str(out)]
    )
    assert bad.exit_code != 0 and "wdc-pave" in bad.output


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            _JSON_VALUES.map(json.dumps),
            st.dictionaries(
                st.sampled_from(["id", "input", "input_title", "category", "target_scores"]), _JSON_VALUES
            ).map(json.dumps),
        ),
        max_size=8,
    ),
    st.sampled_from(["wdc-pave", "oa-mine", "ae-110k"]),
)
def test_arbitrary_lines_never_crash(tmp_path: Path, lines: list[str], fmt: str) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(
        "\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines) + "\n", encoding="utf-8"
    )
    report, records = import_file(fmt, path)
    nonblank = sum(1 for line in path.read_text(encoding="utf-8").split("\n") if line.strip())
    # every non-blank line is either a SKU or at least one reported error (warnings come on kept lines)
    assert report.skus == len(records) and report.skus + report.errors >= nonblank
    assert all(issue.startswith(f"{path}:") for issue in report.issues)


def test_records_breaking_the_sku_bounds_are_reported_and_skipped(tmp_path: Path) -> None:
    """Found by the fuzz test above: an ``id`` that is an object (its text 250 characters) made the WDC
    importer raise pydantic's ValidationError and end the import. Such lines are now errors at file:line;
    the good line after them is still imported."""
    scores = {"Color": {"red": 1}}
    good = {"id": 7, "input_title": "Red mug", "category": "Mugs", "target_scores": scores}
    wdc = tmp_path / "wdc.jsonl"
    rows = [
        {"id": {"k" * 40: [None] * 30}, "input_title": "x", "category": "c", "target_scores": scores},
        {"id": "9" * 300, "input_title": "x", "category": "c", "target_scores": scores},
        {"id": True, "input_title": "x", "category": "c", "target_scores": scores},
        {"id": 8, "input_title": "t" * 5000, "category": "c", "target_scores": scores},
        good,
    ]
    wdc.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report, records = import_file("wdc-pave", wdc)
    assert [r.sku.sku_id for r in records] == ["wdc:7"]
    errors = [i for i in report.issues if ": error: " in i]
    assert [e.split(":")[1] for e in errors] == ["1", "2", "3", "4"]
    assert "id must be a non-empty string or integer" in errors[0]
    assert "sku_id" in errors[1] and "title" in errors[3]
    oa = tmp_path / "oa.jsonl"
    oa.write_text(
        json.dumps({"input": "t" * 5000, "category": "Tea", "target_scores": {}})
        + "\n"
        + json.dumps({"input": "Green tea", "category": "Tea", "target_scores": {}})
        + "\n",
        encoding="utf-8",
    )
    report, records = import_file("oa-mine", oa)
    assert [r.sku.title for r in records] == ["Green tea"]
    assert any(i.startswith(f"{oa}:1: error: invalid record (title") for i in report.issues)


# -- audit: punctuation-only gold is n/a; train-split templates ----------------------------------------------
def test_punctuation_only_gold_is_not_applicable() -> None:
    from collections import Counter

    from groundtrace.catalog.importers import gold_from_scores

    counters: Counter[str] = Counter()
    dash = gold_from_scores("s", "lens_height", {"-": 1}, "ae-110k:Lens Height", counters)
    assert dash is not None and dash.not_applicable and dash.value is None
    mixed = gold_from_scores("s", "lens_width", {"-": 1, "50mm": 1}, "ae-110k:Lens Width", counters)
    assert mixed is not None and mixed.value == "50mm" and mixed.alternatives == []
    assert counters == {"punctuation_as_na": 2, "na_mixed": 1}


def test_templates_from_gold_use_only_the_given_split() -> None:
    from groundtrace.catalog.importers.train_templates import templates_from_gold

    skus = [
        SKU(sku_id="a", title="t", category="Lure"),
        SKU(sku_id="b", title="t", category="Lure"),
        SKU(sku_id="c", title="t", category="Shoes"),
    ]
    gold = [
        GoldLabel(sku_id="a", attribute="color", value="Red"),
        GoldLabel(sku_id="b", attribute="color", value="-"),
        GoldLabel(sku_id="b", attribute="color", value="Blue"),
        GoldLabel(sku_id="b", attribute="weight", value="6g"),
        GoldLabel(sku_id="c", attribute="brand", not_applicable=True),
        GoldLabel(sku_id="zz", attribute="brand", value="Ghost"),
    ]  # SKU not in the split: ignored
    many = [GoldLabel(sku_id="c", attribute="size", value=str(n)) for n in range(20)]
    by_cat = {t.category: t for t in templates_from_gold(skus, gold + many, max_vocab=15)}
    assert set(by_cat) == {"Lure", "Shoes"}
    lure = by_cat["Lure"]
    assert [a.slug for a in lure.attributes] == ["color", "weight"]
    assert lure.attribute("color").recommended_values == ["Red", "Blue"]  # "-" is never vocabulary
    shoes = by_cat["Shoes"]
    assert shoes.attribute("brand").recommended_values == []  # n/a gold names the attribute, adds no value
    assert shoes.attribute("size").recommended_values == [] and len(shoes.attribute("size").examples) == 10


@pytest.mark.slow
def test_cli_templates_from_gold_on_real_oa_mine_train(tmp_path: Path) -> None:
    """Import the real OA-Mine train split, build templates from it, and load them for enrichment."""
    from groundtrace.catalog.templates import load_templates

    imported = runner.invoke(
        app,
        [
            "catalog",
            "import",
            "--format",
            "oa-mine",
            str(shared_path("catalog", "oa_mine", "train.jsonl")),
            "--out",
            str(tmp_path / "train"),
        ],
    )
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(
        app,
        [
            "catalog",
            "templates",
            "from-gold",
            "--skus",
            str(tmp_path / "train" / "skus.jsonl"),
            "--gold",
            str(tmp_path / "train" / "gold.jsonl"),
            "--out",
            str(tmp_path / "tpl"),
        ],
    )
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (tmp_path / "tpl").glob("*.yaml"))
    assert len(files) == result.output.count("attributes") >= 2
    categories = {
        json.loads(line)["category"] for line in (tmp_path / "train" / "skus.jsonl").read_text().splitlines()
    }
    loaded = load_templates(tmp_path / "tpl")
    for category in categories:
        template, _ = loaded.resolve(category)
        assert template is not None and template.category == category and template.attributes


def test_cli_templates_from_gold_without_matching_gold_fails(tmp_path: Path) -> None:
    skus = tmp_path / "skus.jsonl"
    skus.write_text(SKU(sku_id="a", title="t", category="Lure").model_dump_json() + "\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        GoldLabel(sku_id="other", attribute="color", value="Red").model_dump_json() + "\n", encoding="utf-8"
    )
    result = runner.invoke(
        app,
        [
            "catalog",
            "templates",
            "from-gold",
            "--skus",
            str(skus),
            "--gold",
            str(gold),
            "--out",
            str(tmp_path / "tpl"),
        ],
    )
    assert result.exit_code == 1 and "nothing to build" in result.output
    assert not (tmp_path / "tpl").exists()


# -- bytes that are not UTF-8: the line is reported with file:line, every other line is imported -------------
_BAD_LINE = b'{"input": "Caf\xe9 \xff\xfe beans", "category": "Coffee"}\n'  # Latin-1 é, then a UTF-16 BOM
_BAD_MESSAGE = "not valid UTF-8: invalid continuation byte (byte 0xe9 at byte offset 14 of the line)"


def _with_bad_line(source: Path, dest: Path, after: int, bad: bytes = _BAD_LINE) -> Path:
    lines = source.read_bytes().splitlines(keepends=True)
    dest.write_bytes(b"".join(lines[:after]) + bad + b"".join(lines[after:]))
    return dest


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("wdc-pave", "wdc_sample.jsonl"),
        ("oa-mine", "oa_mine_sample.jsonl"),
        ("ae-110k", "ae_110k_sample.jsonl"),
    ],
)
def test_jsonl_line_with_bad_bytes_is_reported_and_the_rest_imported(
    tmp_path: Path, fmt: str, name: str
) -> None:
    expected, expected_records = import_file(fmt, FIX / name)
    path = _with_bad_line(FIX / name, tmp_path / name, after=1)
    report, records = import_file(fmt, path)
    assert f"{path}:2: error: {_BAD_MESSAGE}" in report.issues
    assert report.errors == expected.errors + 1 and report.skus == expected.skus
    assert [r.sku.title for r in records] == [r.sku.title for r in expected_records]
    assert [len(r.gold) for r in records] == [
        len(r.gold) for r in expected_records
    ]  # OA-Mine implicit n/a too
    assert [r.line for r in records] == [r.line + (r.line > 1) for r in expected_records]


def test_openfoodfacts_row_with_bad_bytes_is_reported_and_the_rest_imported(tmp_path: Path) -> None:
    expected, expected_records = import_file("openfoodfacts", FIX / "off_sample.tsv")
    bad_row = b"4000000000000\tK\xe4se\t\t\t\t\t\t\t\t\t\t\t\t\n"  # Latin-1 ä in a 14-field row
    path = _with_bad_line(FIX / "off_sample.tsv", tmp_path / "off.tsv", after=2, bad=bad_row)
    report, records = import_file("openfoodfacts", path)
    assert [r.sku.sku_id for r in records] == [r.sku.sku_id for r in expected_records]
    assert report.issues[0] == (
        f"{path}:3: error: not valid UTF-8: invalid continuation byte "
        "(byte 0xe4 at byte offset 15 of the line)"
    )
    assert report.errors == expected.errors + 1
    # rows after the dropped line keep their own line numbers (the 2-field row moved from line 5 to 6)
    assert f"{path}:6: error: 2 fields, header has 14" in report.issues


def test_openfoodfacts_header_with_bad_bytes_reads_nothing_and_says_why(tmp_path: Path) -> None:
    lines = (FIX / "off_sample.tsv").read_bytes().splitlines(keepends=True)
    path = tmp_path / "off.tsv"
    path.write_bytes(b"\xff" + b"".join(lines))
    report, records = import_file("openfoodfacts", path)
    assert records == [] and [i.split(": error: ")[0] for i in report.issues] == [f"{path}:1", f"{path}:1"]
    assert "not valid UTF-8" in report.issues[0] and "no header" in report.issues[1]


def test_read_jsonl_models_reports_bad_bytes_and_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_bytes(
        b'{"sku_id": "a", "attribute": "brand", "value": "X"}\n'
        b'{"sku_id": "b", "attribute": "brand", "value": "\xff"}\n'
        b'{"sku_id": "c"}\n'
        b"not json\n"
        b'{"sku_id": "d", "attribute": "brand", "value": "Y"}\n'
    )
    items, issues = read_jsonl_models(path, GoldLabel)
    assert [g.sku_id for g in items] == ["a", "d"]
    assert [(i.line, i.message) for i in issues][:2] == [
        (2, "not valid UTF-8: invalid start byte (byte 0xff at byte offset 48 of the line)"),
        (3, "invalid GoldLabel: attribute: Field required"),
    ]
    # an error without a location has no stray separator (was "invalid GoldLabel:  Invalid JSON")
    assert issues[2].line == 4 and issues[2].message.startswith("invalid JSON: ")


def test_wdc_descriptions_row_with_bad_bytes_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    from groundtrace.catalog.importers.wdc_pave import templates_from_wdc

    source = FIX / "wdc_descriptions_sample.csv"
    expected, expected_issues = templates_from_wdc(source)
    path = _with_bad_line(source, tmp_path / "descriptions.csv", after=3, bad=b"Grocery;\xff;Brand;;;;\n")
    templates, issues = templates_from_wdc(path)
    assert [t.model_dump() for t in templates] == [t.model_dump() for t in expected]
    assert str(issues[0]) == (
        f"{path}:4: error: not valid UTF-8: invalid start byte (byte 0xff at byte offset 8 of the line)"
    )
    assert [str(i).split(": ", 1)[1] for i in issues[1:]] == [
        str(i).split(": ", 1)[1] for i in expected_issues
    ]
    # lines 2-3 are one record (a quoted field spans them): a bad line inside it drops that record, reported
    path = _with_bad_line(source, tmp_path / "descriptions.csv", after=2, bad=b"\xff\n")
    templates, issues = templates_from_wdc(path)
    assert "brand" not in {a.slug for t in templates for a in t.attributes}
    assert [str(i) for i in issues[:2]] == [
        f"{path}:2: error: record on lines 2-4 has a line that is not valid UTF-8; record skipped",
        f"{path}:3: error: not valid UTF-8: invalid start byte (byte 0xff at byte offset 0 of the line)",
    ]
    path.write_bytes(b"\xff" + source.read_bytes())  # the header itself: a clear error, not a wrong header
    with pytest.raises(ValueError, match=r"descriptions.csv:1: error: not valid UTF-8.*no header"):
        templates_from_wdc(path)


def test_cli_import_reports_the_bad_line_and_exits_zero(tmp_path: Path) -> None:
    path = _with_bad_line(FIX / "wdc_sample.jsonl", tmp_path / "wdc.jsonl", after=3)
    result = runner.invoke(
        app, ["catalog", "import", "--format", "wdc-pave", str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 0, result.output
    assert f"{path}:4: error: {_BAD_MESSAGE}" in result.output
    assert "wdc-pave: 3 SKUs" in result.output


def test_without_titles_drops_train_skus_that_share_a_title_with_the_evaluated_split(tmp_path: Path) -> None:
    from groundtrace.catalog.importers.train_templates import without_titles

    train = [SKU(sku_id="a", title="Folgers Classic Roast, 11.3 oz", category="Coffee"),
             SKU(sku_id="b", title="Peet's Major Dickason's", category="Coffee")]  # fmt: skip
    gold = [GoldLabel(sku_id="a", attribute="brand", value="Folgers"),
            GoldLabel(sku_id="b", attribute="brand", value="Peet's")]  # fmt: skip
    val = [SKU(sku_id="v", title="FOLGERS classic roast 11.3 oz.", category="Coffee")]
    kept, kept_gold, dropped = without_titles(train, gold, val)
    assert [s.sku_id for s in kept] == ["b"] and [g.sku_id for g in kept_gold] == ["b"] and dropped == 1
    for name, rows in (("skus", train), ("gold", gold), ("val", val)):
        (tmp_path / f"{name}.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    result = runner.invoke(
        app,
        ["catalog", "templates", "from-gold", "--skus", str(tmp_path / "skus.jsonl"), "--gold",
         str(tmp_path / "gold.jsonl"), "--out", str(tmp_path / "tpl"), "--exclude-titles-of",
         str(tmp_path / "val.jsonl")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "left out 1 of 2 SKUs" in result.output
    assert "Folgers" not in (tmp_path / "tpl" / "coffee.yaml").read_text()
