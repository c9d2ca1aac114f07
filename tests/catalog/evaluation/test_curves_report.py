"""Precision/coverage curves over θ, coverage at the target precision, the error table, and the Markdown /
HTML reports of `catalog evaluate` (hand-computed scenario; hostile catalog text stays text)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from groundtrace.catalog.evaluation.curves import (
    MAX_POINTS,
    CurvePoint,
    at_precision,
    thin,
    threshold_curve,
)
from groundtrace.catalog.evaluation.errors import error_kind
from groundtrace.catalog.evaluation.metrics import PairOutcome
from groundtrace.catalog.evaluation.plots import curves_svg, plot_label
from groundtrace.catalog.evaluation.render import markdown, md_text, policy_thresholds, to_html
from groundtrace.catalog.evaluation.scoring import evaluate
from groundtrace.catalog.model import (
    Action,
    AttributeResult,
    Candidate,
    CandidateStatus,
    Decision,
    Evidence,
    GoldLabel,
    Verdict,
    VerdictLabel,
)
from groundtrace.cli import app

HOSTILE = "<script>alert(1)</script> | *x* [y](javascript:z) $x^2$"


def result(
    sku: str, attribute: str, value: str | None, conf: float, action: str = "WRITE"
) -> AttributeResult:
    status = CandidateStatus.EXTRACTED if value is not None else CandidateStatus.NOT_FOUND
    evidence = (
        [Evidence(source="catalog", source_type="catalog", source_ref="catalog:title", quote=f"t {value}")]
        if value
        else []
    )
    return AttributeResult(
        sku_id=sku,
        category="grocery",
        attribute=attribute,
        candidate=Candidate(
            sku_id=sku, attribute=attribute, value=value, status=status, confidence=conf, evidence=evidence
        ),
        verdict=Verdict(sku_id=sku, attribute=attribute, verdict=VerdictLabel.PASS),
        decision=Decision(sku_id=sku, attribute=attribute, action=Action(action), reason="test"),
    )


# pair: confidence, outcome (gold values: a, b, c, f → 4)
#  a brand   0.9  correct               WRITE
#  b brand   0.8  correct               WRITE
#  c flavor  0.8  wrong                 BLOCK   (tied with b)
#  d flavor  0.6  value on n/a gold     WRITE
#  e color   0.5  no gold (unjudged)    WRITE
#  f color   —    missed, value in text
#  g brand   —    n/a gold, abstained
RESULTS = [
    result("a", "brand", "Acme", 0.9),
    result("b", "brand", "Bolt", 0.8),
    result("c", "flavor", HOSTILE, 0.8, "BLOCK"),
    result("d", "flavor", "mint", 0.6),
    result("e", "color", "red", 0.5),
    result("f", "color", None, 0.0, "BLOCK"),
    result("g", "brand", None, 0.0, "BLOCK"),
]
GOLD = [
    GoldLabel(sku_id="a", attribute="brand", value="Acme", in_text=True),
    GoldLabel(sku_id="b", attribute="brand", value="Bolt", in_text=True),
    GoldLabel(sku_id="c", attribute="flavor", value="vanilla", in_text=True),
    GoldLabel(sku_id="d", attribute="flavor", not_applicable=True),
    GoldLabel(sku_id="f", attribute="color", value="black", in_text=True),
    GoldLabel(sku_id="g", attribute="brand", not_applicable=True),
]


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return evaluate(RESULTS, GOLD, target_precision=0.95)


def _row(p: CurvePoint) -> tuple[float, int, int, int, int]:
    return (p.theta, p.kept, p.judged, p.correct, p.covered)


def test_curve_is_hand_computed_with_ties_kept_together(report) -> None:  # type: ignore[no-untyped-def]
    curve = report.thresholds.curve
    assert [_row(p) for p in curve] == [
        (0.9, 1, 1, 1, 1),
        (0.8, 3, 3, 2, 3),  # b and c share θ = 0.8
        (0.6, 4, 4, 2, 3),  # d: a value on n/a gold is judged wrong, covers no gold value
        (0.5, 5, 4, 2, 3),  # e: no gold, kept but not judged
    ]
    assert curve[0].precision == 1.0 and curve[0].coverage == 0.25
    assert curve[1].precision == pytest.approx(2 / 3) and curve[1].coverage == 0.75
    assert {p.gold_values for p in curve} == {4}
    written = report.thresholds.curve_written  # c is BLOCKed
    assert [_row(p) for p in written] == [
        (0.9, 1, 1, 1, 1),
        (0.8, 2, 2, 2, 2),
        (0.6, 3, 3, 2, 2),
        (0.5, 4, 3, 2, 2),
    ]


def test_coverage_at_precision_is_the_widest_point_reaching_the_target(report) -> None:  # type: ignore[no-untyped-def]
    th = report.thresholds
    assert th.overall.point.theta == 0.9 and th.overall.coverage == 0.25
    assert th.overall_written.point.theta == 0.8 and th.overall_written.coverage == 0.5
    assert at_precision(th.curve, 0.6).point.theta == 0.8
    assert at_precision(th.curve, 0.6).coverage == 0.75
    flavor = th.per_attribute["flavor"]
    assert flavor.point is None and flavor.best_precision == 0.0 and flavor.coverage == 0.0


def test_error_table_counts_and_examples(report) -> None:  # type: ignore[no-untyped-def]
    errors = report.errors
    assert errors.counts == {
        "wrong_value": 1,
        "value_on_na": 1,
        "missed_in_text": 1,
        "abstained_correctly": 1,
        "correct": 2,
        "unjudged": 1,
    }
    assert errors.per_attribute["brand"] == {"abstained_correctly": 1, "correct": 2}
    wrong = errors.examples["wrong_value"][0]
    assert (wrong.sku_id, wrong.predicted, wrong.gold, wrong.action) == ("c", HOSTILE, "vanilla", "BLOCK")
    assert wrong.quote == f"t {HOSTILE}" and "correct" not in errors.examples
    missed = PairOutcome("x", "a", "c", True, False, "value", None, None, None, in_text=False)
    assert error_kind(missed) == "missed_not_in_text"


def test_examples_are_spread_over_attributes() -> None:
    results = [result(f"s{i}", "brand", "Wrong", 0.9) for i in range(10)]
    results.append(result("t0", "flavor", "Wrong", 0.9))
    gold = [GoldLabel(sku_id=r.sku_id, attribute=r.attribute, value="Right") for r in results]
    examples = evaluate(results, gold).errors.examples["wrong_value"]
    assert len(examples) == 8 and [e.attribute for e in examples][:2] == ["brand", "flavor"]


def test_markdown_report_escapes_catalog_text_and_says_what_to_do(report) -> None:  # type: ignore[no-untyped-def]
    text = markdown(report, "r.svg")
    assert "**Coverage at 95% precision: 25.0 %**" in text
    assert "set `threshold: 0.900`" in text and "![precision and coverage over the threshold](r.svg)" in text
    assert (
        "  brand: {threshold: 0.8}  # 100.0 % of 2 gold values" in text
        and "  flavor: {threshold: 1.0}  # never reaches 95%" in text
    )
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert md_text(HOSTILE) in text and "\\| \\*x\\* \\[y\\]\\(javascript:z\\)" in md_text(HOSTILE)
    assert "| missed, value present in text | 1 |" in text


def test_policy_snippet_lists_only_slugs() -> None:
    results = [result("a", "Brand <b>", "Acme", 0.9), result("b", "brand", "Acme", 0.9)]
    gold = [GoldLabel(sku_id=r.sku_id, attribute=r.attribute, value="Acme") for r in results]
    assert [slug for slug, _t, _n in policy_thresholds(evaluate(results, gold))] == ["brand"]


@pytest.mark.slow  # matplotlib import and an SVG render
def test_html_report_is_escaped_and_holds_the_plot(report) -> None:  # type: ignore[no-untyped-def]
    svg = curves_svg(report.thresholds)
    page = to_html(report, svg)
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<svg" in page and "Coverage at 95 % precision: 25.0 %" in page
    assert "never" in page and "missed, value present in text" in page


def test_plot_labels_are_literal_text() -> None:
    assert plot_label("$x^2$") == r"\$x^2\$" and plot_label("_hidden") == " _hidden"
    assert plot_label("a\x00b\nc") == "abc"


def test_thin_keeps_real_points_and_the_bound() -> None:
    points = [CurvePoint(theta=1 - i / 1000, kept=i + 1, judged=i + 1, correct=i, covered=i, gold_values=1000)
              for i in range(1000)]  # fmt: skip
    thinned = thin(points)
    assert len(thinned) <= MAX_POINTS and set(map(id, thinned)) <= set(map(id, points))
    assert thinned[-1] is points[-1]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.3, 0.5, 0.7, 0.9]), st.sampled_from(["value", "na", "none"]), st.booleans()
        ),
        max_size=30,
    )
)
def test_curve_invariants(rows: list[tuple[float, str, bool]]) -> None:
    outcomes = []
    for i, (conf, gold, ok) in enumerate(rows):
        correct = None if gold == "none" else (ok and gold == "value")
        outcomes.append(
            PairOutcome(f"s{i}", "a", "c", True, True, gold, correct, "PASS", "WRITE", confidence=conf)  # type: ignore[arg-type]
        )
    curve = threshold_curve(outcomes)
    assert [p.theta for p in curve] == sorted({c for c, _g, _o in rows}, reverse=True)
    assert all(a.covered <= b.covered and a.kept < b.kept for a, b in itertools.pairwise(curve))
    for target in (0.5, 0.9):
        h = at_precision(curve, target)
        assert h.point is None or (h.point.precision or 0) >= target
        assert (
            all(p.covered <= h.point.covered for p in curve if (p.precision or 0) >= target)
            if h.point
            else True
        )


@pytest.mark.slow  # renders the plot through the CLI
def test_cli_writes_html_and_markdown(tmp_path: Path) -> None:
    results_path, gold_path = tmp_path / "results.jsonl", tmp_path / "gold.jsonl"
    results_path.write_text("".join(r.model_dump_json() + "\n" for r in RESULTS), encoding="utf-8")
    gold_path.write_text("".join(g.model_dump_json() + "\n" for g in GOLD), encoding="utf-8")
    md, page, js = tmp_path / "out" / "report.md", tmp_path / "report.html", tmp_path / "r.json"
    cli = CliRunner().invoke(
        app,
        ["catalog", "evaluate", "--results", str(results_path), "--gold", str(gold_path),
         "--markdown", str(md), "--html", str(page), "--json", str(js), "--target-precision", "0.6"],
    )  # fmt: skip
    assert cli.exit_code == 0, cli.output
    assert "coverage at 60% precision: 75.0 % of gold values (3/4) at θ = 0.800" in cli.output
    assert (tmp_path / "out" / "report.svg").read_text().lstrip().startswith("<?xml")
    assert "](report.svg)" in md.read_text() and "<svg" in page.read_text()
    assert json.loads(js.read_text())["thresholds"]["overall"]["point"]["theta"] == 0.8
    bad = CliRunner().invoke(
        app,
        ["catalog", "evaluate", "--db", "sqlite:///x.db", "--gold", str(gold_path), "--markdown", str(md)],
    )
    assert bad.exit_code == 2 and "--results only" in bad.output
