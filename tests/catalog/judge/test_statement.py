"""The rule judge's own statement check (no extractor): cue + normalised value in one sentence, negation,
hedging, units — and that it catches an extractor that misreads."""

from __future__ import annotations

from typing import Any

import pytest

from groundtrace.catalog.judge.rules import RuleJudge
from groundtrace.catalog.judge.statement import sentence_statement, statement
from groundtrace.catalog.model import (
    SKU,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    Document,
    Evidence,
    FailureType,
    VerdictLabel,
)
from groundtrace.catalog.scout.agent import ScoutResult
from groundtrace.catalog.scout.engine import EngineOutput, Finding
from groundtrace.catalog.templates import load_templates

GROCERY = load_templates().get("grocery")
OUNCES = AttributeSpec(slug="net_weight", name="Net weight", type="number", unit="oz")


@pytest.mark.parametrize(
    ("attr", "item", "sentence", "expected"),
    [
        ("allergens", "milk", "Contains: milk, almonds.", "stated"),
        ("allergens", "tree_nuts", "Contains: milk, almonds.", "stated"),  # synonym "almonds"
        ("allergens", "peanuts", "Contains no peanuts.", "negated"),
        ("allergens", "peanuts", "Made free of peanuts and contains oats.", "negated"),
        ("allergens", "peanuts", "May contain peanuts.", "hedged"),
        (
            "allergens",
            "tree_nuts",
            "Made in a facility that also processes tree nuts; contains oats.",
            "hedged",
        ),
        ("allergens", "tree_nuts", "Crunchy granola with almonds.", "no_cue"),
        ("allergens", "eggs", "Contains: milk, almonds.", "absent"),
        ("brand", "Acme", "Brand: Acme", "stated"),
        ("organic", "true", "USDA Organic granola.", "stated"),
        ("organic", "true", "This granola is not organic.", "negated"),
        ("organic", "true", "Organic: no", "negated"),
        ("organic", "false", "Organic: no", "stated"),
        ("organic", "true", "Crunchy oat clusters.", "absent"),
        ("net_content", "16 oz", "Net wt 16 oz (454 g).", "stated"),
        ("net_content", "16 oz", "Net weight 454 g.", "stated"),  # 16 oz = 453.6 g, within 2 %
        ("net_content", "16 oz", "Net wt 16 lb.", "absent"),
        ("net_content", "16 oz", "Granola, Vanilla, 16 oz", "no_cue"),
    ],
)
def test_sentence_statement(attr: str, item: str, sentence: str, expected: str) -> None:
    assert sentence_statement(item, sentence, GROCERY.attribute(attr)) == expected


def test_number_needs_the_template_units_dimension() -> None:
    assert sentence_statement("16 oz", "Net weight: 16 oz", OUNCES) == "stated"
    assert sentence_statement("16", "Net weight: 16", OUNCES) == "absent"  # a bare number is no "16 oz"
    assert sentence_statement("16 oz", "Net weight: 16 fl oz", OUNCES) == "absent"  # volume, not mass


def test_statement_reads_only_the_sentences_holding_the_quote() -> None:
    doc = Document(
        source="catalog",
        source_type="catalog",
        source_ref="d",
        text="Contains: milk. Our other bar contains peanuts as an option.",
    )
    spec = GROCERY.attribute("allergens")
    assert statement("milk", "Contains: milk", doc, spec) == "stated"
    assert statement("peanuts", "Contains: milk", doc, spec) == "absent"  # stated elsewhere, not in the quote
    assert statement("milk", "text that is not in the document", doc, spec) == "absent"


class _Misreader:
    """An extractor that claims ``value`` with top quality over the whole Document (a misreading)."""

    name = "misreader"

    def __init__(self, value: str) -> None:
        self.value = value

    def extract(
        self, sku: SKU, attributes: list[AttributeSpec], documents: list[Document], **_: Any
    ) -> EngineOutput:
        out = EngineOutput()
        for doc in documents:
            ev = Evidence(
                source=doc.source,
                source_type=doc.source_type,
                source_ref=doc.source_ref,
                quote=doc.text,
                span=(0, len(doc.text)),
            )
            out.findings.extend(
                Finding(attribute=a.slug, value=self.value, evidence=ev, quality=1.0, explicit=True)
                for a in attributes
            )
        return out


def _verdict(attr: str, value: Any, text: str, quote: str) -> tuple[VerdictLabel, FailureType | None]:
    sku = SKU(sku_id="S1", title="Acme Granola 16 oz", category="grocery", brand="Acme", description=text)
    doc = Document(source="catalog", source_type="catalog", source_ref="catalog:description", text=text)
    cand = Candidate(
        sku_id="S1",
        attribute=attr,
        value=value,
        confidence=0.9,
        status=CandidateStatus.EXTRACTED,
        evidence=[Evidence(source="catalog", source_type="catalog", source_ref=doc.source_ref, quote=quote)],
    )
    scout = ScoutResult(
        sku_id="S1", category="grocery", template="grocery", candidates={attr: cand}, documents=[doc]
    )
    first = value[0] if isinstance(value, list) else value
    v = RuleJudge(extractor=_Misreader(first)).judge(sku, scout, GROCERY)[attr]  # type: ignore[arg-type]
    return v.verdict, v.failure_type


@pytest.mark.parametrize(
    ("attr", "value", "text", "expected"),
    [
        # the extractor's misreadings, caught by the statement check although the extractor "confirms" them
        ("allergens", ["peanuts"], "Contains no peanuts.", (VerdictLabel.FAIL, FailureType.CONTRADICTION)),
        ("organic", "true", "This granola is not organic.", (VerdictLabel.FAIL, FailureType.CONTRADICTION)),
        ("allergens", ["peanuts"], "May contain peanuts.", (VerdictLabel.UNVERIFIED, None)),
        ("allergens", ["tree_nuts"], "Crunchy granola with almonds.", (VerdictLabel.UNVERIFIED, None)),
        ("net_content", "16 oz", "Granola, Vanilla, 16 oz", (VerdictLabel.UNVERIFIED, None)),
        # a correct reading still passes
        # issue 9 item 2: the quoted list names almonds (tree nuts), which the value leaves out
        (
            "allergens",
            ["milk"],
            "Contains: milk, almonds.",
            (VerdictLabel.FAIL, FailureType.PARTIAL_EXTRACTION),
        ),
        ("net_content", "16 oz", "Net wt 16 oz (454 g).", (VerdictLabel.PASS, None)),
    ],
)
def test_rule_judge_catches_extractor_misreadings(
    attr: str, value: Any, text: str, expected: tuple[VerdictLabel, FailureType | None]
) -> None:
    assert _verdict(attr, value, text, text) == expected
