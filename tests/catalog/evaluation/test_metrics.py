"""Evaluation metrics on a hand-computed scenario, matching rules, invariants and the CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.evaluation.matching import equal_for, value_matches
from groundtrace.catalog.evaluation.metrics import METRICS
from groundtrace.catalog.evaluation.report import print_report
from groundtrace.catalog.evaluation.scoring import evaluate
from groundtrace.catalog.model import (
    Action,
    AttributeResult,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    Decision,
    GoldLabel,
    Verdict,
    VerdictLabel,
)
from groundtrace.cli import app

runner = CliRunner()


def result(
    sku: str, category: str, attribute: str, value: str | list[str] | None, verdict: str, action: str
) -> AttributeResult:
    status = CandidateStatus.EXTRACTED if value is not None else CandidateStatus.NOT_FOUND
    return AttributeResult(
        sku_id=sku,
        category=category,
        attribute=attribute,
        candidate=Candidate(
            sku_id=sku,
            attribute=attribute,
            value=value,
            status=status,
            confidence=0.9 if value is not None else 0.0,
        ),
        verdict=Verdict(sku_id=sku, attribute=attribute, verdict=VerdictLabel(verdict)),
        decision=Decision(sku_id=sku, attribute=attribute, action=Action(action), reason="test"),
    )


def gold(
    sku: str,
    attribute: str,
    value: str | list[str] | None = None,
    *,
    alternatives: tuple[str, ...] = (),
    na: bool = False,
) -> GoldLabel:
    return GoldLabel(
        sku_id=sku, attribute=attribute, value=value, alternatives=list(alternatives), not_applicable=na
    )


# The scenario (pair number: result → gold; verdict, action):
#  1 s1/brand       "Acme"           → "ACME"                    correct   PASS        WRITE
#  2 s1/flavor      "vanilla"        → "chocolate"               wrong     PASS        WRITE  (false accept)
#  3 s1/allergens   [milk, soybeans] → [soybeans, milk]          correct   UNVERIFIED  REVIEW (false reject)
#  4 s1/organic     abstain          → n/a                       abstain ok PASS       BLOCK
#  5 s2/brand       "Bolt"           → "Bolt Foods" alt ["Bolt"] correct   FAIL        BLOCK  (false reject)
#  6 s2/net_content "12 oz"          → n/a                       wrong     UNCERTAIN   REVIEW
#  7 s2/flavor      abstain          → "mint"                    miss      PASS        BLOCK
#  8 s3/voltage     "120"            → (no gold)                 unjudged  PASS        WRITE
#  9 s3/color       (no result)      → "black"                   missing result (category of s3: electronics)
# 10 s4/brand       (no result)      → n/a                       missing result, category unknown
RESULTS = [
    result("s1", "grocery", "brand", "Acme", "PASS", "WRITE"),
    result("s1", "grocery", "flavor", "vanilla", "PASS", "WRITE"),
    result("s1", "grocery", "allergens", ["milk", "soybeans"], "UNVERIFIED", "REVIEW"),
    result("s1", "grocery", "organic", None, "PASS", "BLOCK"),
    result("s2", "grocery", "brand", "Bolt", "FAIL", "BLOCK"),
    result("s2", "grocery", "net_content", "12 oz", "UNCERTAIN", "REVIEW"),
    result("s2", "grocery", "flavor", None, "PASS", "BLOCK"),
    result("s3", "electronics", "voltage", "120", "PASS", "WRITE"),
]
GOLD = [
    gold("s1", "brand", "ACME"),
    gold("s1", "flavor", "chocolate"),
    gold("s1", "allergens", ["soybeans", "milk"]),
    gold("s1", "organic", na=True),
    gold("s2", "brand", "Bolt Foods", alternatives=("Bolt",)),
    gold("s2", "net_content", na=True),
    gold("s2", "flavor", "mint"),
    gold("s3", "color", "black"),
    gold("s4", "brand", na=True),
]


@pytest.fixture(scope="module")
def report():
    return evaluate(RESULTS, GOLD)


def metric(group, name: str) -> tuple[int, int]:
    value = group.metrics[name]
    return value.numerator, value.denominator


def test_overall_hand_computed(report) -> None:
    o = report.overall
    assert o.pairs == 10
    assert metric(o, "accuracy") == (3, 5)  # extracted with gold: 1,2,3,5,6; correct 1,3,5
    assert o.metrics["accuracy"].value == pytest.approx(0.6)
    assert metric(o, "coverage") == (6, 10)  # extracted: 1,2,3,5,6,8
    assert metric(o, "coverage_gold") == (4, 6)  # gold values 1,2,3,5,7,9; extracted 1,2,3,5
    assert metric(o, "abstention_accuracy") == (2, 3)  # n/a gold 4,6,10; not extracted 4,10
    assert metric(o, "judge_supported_rate") == (4, 6)  # PASS 1,2,8 + UNVERIFIED 3
    assert metric(o, "write_share") == (3, 6)  # 1,2,8
    assert metric(o, "block_share") == (1, 6)  # 5
    assert metric(o, "review_share") == (2, 6)  # 3,6
    assert metric(o, "publish_coverage") == (3, 10)
    assert metric(o, "pass_precision") == (1, 2)  # PASS with gold: 1 (right), 2 (wrong); 8 is unjudged
    assert metric(o, "judge_agreement") == (2, 5)  # agree: 1 (PASS, right), 6 (UNCERTAIN, wrong)
    assert metric(o, "false_reject_share") == (2, 3)  # disagreements 2 (FA), 3 and 5 (FR)
    assert metric(o, "false_accept_share") == (1, 3)


def test_mixes_and_counts(report) -> None:
    o = report.overall
    assert o.verdicts_extracted == {"PASS": 3, "UNVERIFIED": 1, "FAIL": 1, "UNCERTAIN": 1}
    assert o.verdicts_all["PASS"] == 5
    assert o.actions == {"WRITE": 3, "BLOCK": 3, "REVIEW": 2}
    assert report.counts == {
        "results": 8,
        "gold": 9,
        "pairs": 10,
        "gold_value": 6,
        "gold_na": 3,
        "gold_none": 1,
        "extracted": 6,
        "missing_results": 2,
        "unjudged_extracted": 1,
    }
    assert report.comparator == "groundtrace.core.evidence.normalize.values_equal (untyped)"


def test_per_category_and_attribute(report) -> None:
    assert set(report.per_category) == {"grocery", "electronics", "(unknown)"}
    grocery = report.per_category["grocery"]
    assert (
        grocery.pairs == 7 and metric(grocery, "accuracy") == (3, 5) and metric(grocery, "coverage") == (5, 7)
    )
    electronics = report.per_category["electronics"]
    assert electronics.pairs == 2 and electronics.metrics["accuracy"].value is None  # nothing judged
    assert metric(electronics, "coverage_gold") == (0, 1)
    assert metric(report.per_category["(unknown)"], "abstention_accuracy") == (1, 1)
    brand = report.per_attribute["brand"]
    assert brand.pairs == 3 and metric(brand, "accuracy") == (2, 2) and metric(brand, "coverage") == (2, 3)


def test_category_mapping_and_results_scope() -> None:
    mapped = evaluate(RESULTS, GOLD, categories={"s4": "grocery"})
    assert "(unknown)" not in mapped.per_category and mapped.per_category["grocery"].pairs == 8
    scoped = evaluate(RESULTS, GOLD, scope="results")
    assert metric(scoped.overall, "coverage") == (6, 8)
    assert metric(scoped.overall, "publish_coverage") == (3, 8)
    assert metric(scoped.overall, "abstention_accuracy") == (1, 2)  # n/a gold 4, 6


def test_duplicates_are_reported_first_kept() -> None:
    dup = evaluate(
        RESULTS + [result("s1", "grocery", "brand", "Wrong", "PASS", "WRITE")],
        GOLD + [gold("s1", "brand", "Other")],
    )
    assert metric(dup.overall, "accuracy") == (3, 5)
    assert any("duplicate result" in i for i in dup.issues) and any("duplicate gold" in i for i in dup.issues)


@pytest.mark.parametrize(
    ("predicted", "label", "expected"),
    [
        ("Acme", gold("x", "a", "acme"), True),
        ("Bolt", gold("x", "a", "Bolt Foods", alternatives=("Bolt",)), True),
        ("Bolt Inc", gold("x", "a", "Bolt Foods", alternatives=("Bolt",)), False),
        (["milk"], gold("x", "a", ["milk", "eggs"]), False),  # set equality: missing eggs
        (["milk", "eggs", "fish"], gold("x", "a", ["milk", "eggs"]), False),  # extra fish
        (["eggs", "milk"], gold("x", "a", ["milk", "eggs"]), True),
        (["Gluten Free"], gold("x", "a", ["gluten_free"]), True),
        (["Bolt", "bolt"], gold("x", "a", "Bolt"), True),  # a list for a single value: every item must match
        (["Bolt", "Acme"], gold("x", "a", "Bolt"), False),
        ([], gold("x", "a", "Bolt"), False),
    ],
)
def test_value_matches(predicted, label, expected) -> None:
    assert value_matches(predicted, label, equal_for(None)) is expected


def test_equal_for_untyped_and_typed() -> None:
    untyped = equal_for(None)
    assert untyped("Yes", "true") and not untyped("yes", "false")  # both boolean words
    assert untyped("60Hz", "60 Hz") and untyped("16 oz", "1 lb")  # quantities
    assert not untyped("12 oz", "16 oz")
    assert not untyped("contains milk", "true")  # a phrase is not a boolean word
    number = equal_for(
        AttributeSpec(slug="battery_capacity", name="Battery capacity", type="number", unit="mAh")
    )
    assert number("1000 mAh", "1015 mAh") and not number("1000 mAh", "1030 mAh")  # 2 % of 1030 is 20.6
    flag = equal_for(AttributeSpec(slug="organic", name="Organic", type="bool"))
    assert flag("Yes", "true")


def test_templates_select_the_kind() -> None:
    from groundtrace.catalog.templates import load_templates

    rows = [result("e1", "electronics", "battery_capacity", "2000", "PASS", "WRITE")]
    labels = [gold("e1", "battery_capacity", "2,000 mAh")]
    # untyped: a bare number never equals a quantity with a unit; with the template, 2000 is read in mAh
    assert evaluate(rows, labels).overall.metrics["accuracy"].value == 0.0
    typed = evaluate(rows, labels, templates=load_templates())
    assert typed.overall.metrics["accuracy"].value == 1.0 and "template kinds" in typed.comparator


def test_custom_comparator_overrides() -> None:
    strict = evaluate(RESULTS, GOLD, equal=lambda a, b: a == b)
    assert strict.comparator == "custom"
    assert strict.overall.metrics["accuracy"].numerator == 2  # "Acme" != "ACME" now; 3 and 5 still match


def test_every_metric_has_a_formula() -> None:
    for name in METRICS.names():
        assert METRICS.get(name).formula and repr(METRICS.get(name)) == name


_VERDICTS = ["PASS", "FAIL", "UNVERIFIED", "UNCERTAIN"]
_ACTIONS = ["WRITE", "BLOCK", "REVIEW"]


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=10_000))
def test_metric_invariants(seed: int) -> None:
    rng = random.Random(seed)
    values = ["a", "b", "c"]
    results, labels = [], []
    for i in range(rng.randint(0, 25)):
        sku, attribute = f"s{i % 5}", f"attr{i}"
        if rng.random() < 0.8:
            value = rng.choice([None, *values])
            results.append(
                result(
                    sku, rng.choice(["g", "e"]), attribute, value, rng.choice(_VERDICTS), rng.choice(_ACTIONS)
                )
            )
        kind = rng.random()
        if kind < 0.5:
            labels.append(gold(sku, attribute, rng.choice(values)))
        elif kind < 0.75:
            labels.append(gold(sku, attribute, na=True))
    report = evaluate(results, labels)
    o = report.overall
    for value in o.metrics.values():
        assert 0 <= value.numerator <= value.denominator
        assert value.value is None or 0.0 <= value.value <= 1.0
    assert o.metrics["coverage"].numerator == report.counts.get("extracted", 0)
    assert o.metrics["publish_coverage"].numerator <= o.metrics["coverage"].numerator
    shares = (
        o.metrics["write_share"].numerator
        + o.metrics["block_share"].numerator
        + o.metrics["review_share"].numerator
    )
    assert shares == o.metrics["write_share"].denominator
    fr, fa = o.metrics["false_reject_share"], o.metrics["false_accept_share"]
    assert fr.denominator == fa.denominator and fr.numerator + fa.numerator == fr.denominator
    assert (
        sum(g.pairs for g in report.per_category.values())
        == o.pairs
        == sum(g.pairs for g in report.per_attribute.values())
    )


def test_to_dict_and_print(report) -> None:
    data = report.to_dict()
    assert json.loads(json.dumps(data))["overall"]["metrics"]["accuracy"]["value"] == pytest.approx(0.6)
    from rich.console import Console

    console = Console(record=True, width=200)
    print_report(report, console)
    text = console.export_text()
    assert "60.0% (3/5)" in text and "per category" in text and "per attribute" in text


def test_cli_evaluate(tmp_path: Path) -> None:
    results_path, gold_path, out = (
        tmp_path / "results.jsonl",
        tmp_path / "gold.jsonl",
        tmp_path / "report.json",
    )
    results_path.write_text(
        "\n".join(r.model_dump_json() for r in RESULTS) + "\n{not json}\n", encoding="utf-8"
    )
    gold_path.write_text("\n".join(g.model_dump_json() for g in GOLD) + "\n", encoding="utf-8")
    cli = runner.invoke(
        app,
        ["catalog", "evaluate", "--results", str(results_path), "--gold", str(gold_path), "--json", str(out)],
    )
    assert cli.exit_code == 0, cli.output
    assert f"{results_path}:9: error: invalid JSON" in cli.output
    data = json.loads(out.read_text())
    assert data["counts"]["pairs"] == 10 and data["overall"]["metrics"]["coverage"]["numerator"] == 6


def _oracle(records, shift: int = 0) -> list[AttributeResult]:
    """Results that copy the gold (the last accepted surface form); ``shift`` takes the value of the
    ``shift``-th next gold label of the same attribute instead (a wrong-but-plausible system)."""
    labels = [(r.sku, g) for r in records for g in r.gold]
    by_attribute: dict[str, list[GoldLabel]] = {}
    for _sku, g in labels:
        if not g.not_applicable:
            by_attribute.setdefault(g.attribute, []).append(g)
    out = []
    for sku, g in labels:
        source = g
        if shift and not g.not_applicable:
            pool = by_attribute[g.attribute]
            source = pool[(pool.index(g) + shift) % len(pool)]
        value = (
            None if g.not_applicable else (source.alternatives[-1] if source.alternatives else source.value)
        )
        out.append(result(sku.sku_id, sku.category, g.attribute, value, "PASS", "WRITE"))
    return out


@pytest.mark.slow
def test_oracle_on_real_gold_scores_perfectly_and_a_shifted_one_does_not() -> None:
    from groundtrace.catalog.importers import import_file
    from tests.conftest import shared_path

    # AE-110K: explicit n/a gold (OA-Mine's annotation is partial: it has no n/a to abstain on)
    _report, records = import_file("ae-110k", shared_path("catalog", "ae_110k", "validation.jsonl"))
    labels = [g for r in records for g in r.gold]
    perfect = evaluate(_oracle(records), labels).overall.metrics
    assert perfect["accuracy"].value == 1.0 and perfect["abstention_accuracy"].value == 1.0
    assert perfect["coverage_gold"].value == 1.0
    shifted = evaluate(_oracle(records, shift=1), labels).overall.metrics
    assert shifted["accuracy"].denominator == perfect["accuracy"].denominator
    assert shifted["accuracy"].value < 0.5  # neighbours rarely share a brand, size or flavour


# -- gold wording normalised per template type (audit): right values count, wrong values stay wrong ----------
_GROCERY_SPECS = {
    "net_content": AttributeSpec(
        slug="net_content",
        name="Net content",
        type="number",
        recommended_values=["oz", "lb", "g", "kg", "fl oz", "mL", "count"],
    ),
    "pack_count": AttributeSpec(slug="pack_count", name="Pack count", type="number"),
    "caffeine": AttributeSpec(
        slug="caffeine_content",
        name="Caffeine content",
        type="enum",
        allowed_values=["caffeinated", "decaffeinated", "half_caff", "caffeine_free"],
    ),
    "flavor": AttributeSpec(
        slug="flavor",
        name="Flavor",
        type="string",
        recommended_values=["vanilla", "coconut", "lemon", "cherry", "pecan", "blackberry"],
    ),
    "item_form": AttributeSpec(
        slug="item_form",
        name="Item form",
        type="string",
        recommended_values=["whole bean", "ground", "tea bags", "k-cups"],
    ),
    "width": AttributeSpec(slug="width", name="Width", type="number", unit="in"),
    "capacity": AttributeSpec(slug="capacity", name="Capacity", type="number", unit="L"),
}


@pytest.mark.parametrize(
    ("attr", "predicted", "gold_text", "expected"),
    [
        # number+unit: the quantity is parsed out of the gold wording (OA-Mine gold strings)
        ("net_content", "12 oz", "12 oz Bag", True),
        ("net_content", "2.2 lb", "Large 2.2 Pound Bag", True),
        ("net_content", "3.6 oz", "3.6 OZ (102g)", True),
        ("net_content", "20 oz", "1 bag (20 oz.)", True),
        ("net_content", "36 count", "36", True),  # a bare gold number is a count
        ("net_content", "16 count", "16 capsules", True),
        ("net_content", "16 oz", "12 oz Bag", False),  # wrong value stays wrong
        ("net_content", "1 lb", "1 bag (20 oz.)", False),  # the "1" is a bag count, not a pound
        ("net_content", "36 oz", "36", False),  # a bare number is a count, not ounces
        ("net_content", "12 count", "12 oz", False),
        ("width", "16.25 in", '16-1/4"', True),  # mixed fraction
        ("width", "8 in", '6-7/8"', False),  # "7/8" is no 8 inches
        ("width", "230 in", "208-230", False),  # a range is not its upper end
        ("capacity", "9.464 L", "2-1/2 gallon", True),  # 2.5 gal = 9.464 L
        ("capacity", "7.571 L", "2-1/2 gallon", False),  # 2 gal is not 2 1/2 gal
        # pack counts
        ("pack_count", "3", "Pack of 3", True),
        ("pack_count", "2", "2-pack", True),
        ("pack_count", "1", "1 Pack", True),
        ("pack_count", "3", "Pack of 6", False),
        ("pack_count", "3", "8/Pack", False),
        ("pack_count", "12", "Case of 12 (6 pack)", False),  # two different counts: undecidable, wrong
        # enums: through the vocabulary and its synonyms, same set on both sides
        ("caffeine", "decaffeinated", "Decaf", True),
        ("caffeine", "caffeine_free", "Caffeine-Free", True),
        ("caffeine", "decaffeinated", "Half Caff", False),
        # strings: case/plural, whole vocabulary value, contiguous tokens covering >= 50 %
        ("item_form", "tea bags", "Teabags", True),
        ("item_form", "whole bean", "Whole Bean Coffee", True),  # 2 of 3 tokens
        ("item_form", "whole bean", "Ground", False),
        ("flavor", "cherry", "Sour Cherries", True),  # plural, 1 of 2
        ("flavor", "coconut", "Coconut Mocha", True),
        ("flavor", "lemon", "Sicilian Lemon & Honeysuckle", False),  # 1 of 3 tokens
        ("flavor", "coconut", "Pie Flavors (Blackberry, Pecan, Coconut Cream)", False),
        ("flavor", "mocha coconut", "Coconut Mocha", False),  # order matters
        ("flavor", "vanilla", "Chocolate", False),
    ],
)
def test_gold_wording_is_normalised_per_type(
    attr: str, predicted: str, gold_text: str, expected: bool
) -> None:
    label = gold("x", _GROCERY_SPECS[attr].slug, gold_text)
    assert value_matches(predicted, label, equal_for(_GROCERY_SPECS[attr])) is expected


def test_alternatives_accept_any_surface_form_but_not_a_wrong_value() -> None:
    label = gold("x", "pack_count", "8/Pack", alternatives=("3 Pack/Carton",))
    equal = equal_for(_GROCERY_SPECS["pack_count"])
    assert value_matches("3", label, equal) and not value_matches(
        "8", label, equal
    )  # "8/Pack" names no count
    assert not value_matches("4", label, equal)


def test_quantity_mentions_and_pack_count_parsers() -> None:
    from groundtrace.catalog.evaluation.matching import pack_count, quantity_mentions

    assert quantity_mentions("Large 2.2 Pound Bag") == ["2.2 Pound"]
    assert quantity_mentions("24 Bag, 0.02 Pound") == ["24 count", "0.02 Pound"]
    assert quantity_mentions('6-7/8"') == ['6 7/8 "'] and quantity_mentions("208-230v") == []
    assert [pack_count(t) for t in ("Pack of 3", "2-pack", "12 ct", "7", "no count", "6 pk of 12 ct")] == [
        3,
        2,
        12,
        7,
        None,
        None,
    ]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(list(_GROCERY_SPECS)),
    st.sampled_from(
        [
            "12 oz",
            "12 oz Bag",
            "Pack of 3",
            "3",
            "Decaf",
            "tea bags",
            "Teabags",
            "Coconut Mocha",
            "coconut",
            "36",
            "36 count",
            '16-1/4"',
            "16.25 in",
            "2-1/2 gallon",
            "9.464 L",
            "",
            "-",
        ]
    ),
    st.sampled_from(
        [
            "12 oz",
            "12 oz Bag",
            "Pack of 3",
            "3",
            "Decaf",
            "tea bags",
            "Teabags",
            "Coconut Mocha",
            "coconut",
            "36",
            "36 count",
            '16-1/4"',
            "16.25 in",
            "2-1/2 gallon",
            "9.464 L",
            "",
            "-",
        ]
    ),
)
def test_typed_comparison_is_symmetric_and_reflexive(attr: str, a: str, b: str) -> None:
    equal = equal_for(_GROCERY_SPECS[attr])
    assert equal(a, b) == equal(b, a)
    assert equal(a, a)


def test_cli_evaluate_shows_markup_in_catalog_data_as_text(tmp_path: Path) -> None:
    """Category / attribute names and issues are catalog data: rich markup in them is printed verbatim,
    never interpreted (an unbalanced closing tag used to crash the printer and lose the --json report)."""
    hostile = "Grocery > [/bold] [link=http://evil.example]click[/link]"
    rows = [r.model_copy(update={"category": hostile}) for r in RESULTS]
    results_path, gold_path, out = (
        tmp_path / "results.jsonl",
        tmp_path / "gold.jsonl",
        tmp_path / "report.json",
    )
    results_path.write_text(
        "\n".join(r.model_dump_json() for r in rows) + "\n[/red] not json\n", encoding="utf-8"
    )
    gold_path.write_text("\n".join(g.model_dump_json() for g in GOLD) + "\n", encoding="utf-8")
    cli = runner.invoke(
        app,
        ["catalog", "evaluate", "--results", str(results_path), "--gold", str(gold_path), "--json", str(out)],
    )
    assert cli.exit_code == 0, cli.output
    assert hostile in cli.output  # shown as typed, tags and all
    assert hostile in json.loads(out.read_text())["per_category"]


def test_multi_valued_gold_gets_set_precision_recall_f1_besides_exact_match() -> None:
    """A correct extra allergen stated in the text makes the exact match wrong but keeps set recall 1."""
    results = [
        result("m1", "grocery", "allergens", ["milk", "soybeans", "eggs"], "PASS", "WRITE"),
        result("m2", "grocery", "allergens", ["milk"], "PASS", "WRITE"),
        result("m3", "grocery", "allergens", None, "PASS", "BLOCK"),
        result("m4", "grocery", "brand", "Acme", "PASS", "WRITE"),  # single-valued: no set counts
    ]
    labels = [
        gold("m1", "allergens", ["milk", "soybeans"]),
        gold("m2", "allergens", ["milk", "wheat"]),
        gold("m3", "allergens", ["peanuts"]),
        gold("m4", "brand", "Acme"),
    ]
    m = evaluate(results, labels).overall.metrics
    assert (m["accuracy"].numerator, m["accuracy"].denominator) == (1, 3)  # only the brand is an exact match
    assert (m["set_precision"].numerator, m["set_precision"].denominator) == (3, 4)  # 2/3 + 1/1
    assert (m["set_recall"].numerator, m["set_recall"].denominator) == (3, 5)  # 2/2 + 1/2 + 0/1 (missed)
    assert (m["set_f1"].numerator, m["set_f1"].denominator) == (6, 9)  # 2·3 / (4 + 5)
    assert evaluate(results[3:], labels[3:]).overall.metrics["set_f1"].value is None
