"""Scoring enrichment results against gold labels: join them into pair outcomes and summarise every
registered metric overall, per category and per attribute.

Metric definitions are in :mod:`groundtrace.catalog.evaluation.metrics`, value matching in
:mod:`groundtrace.catalog.evaluation.matching`, console tables in
:mod:`groundtrace.catalog.evaluation.report`.
"All pairs" is the union of result pairs and gold pairs (``scope="union"``; a gold pair with no result is a
miss, counted in ``missing_results``), or only the result pairs (``scope="results"``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from groundtrace.catalog.evaluation.curves import ThresholdReport, threshold_report
from groundtrace.catalog.evaluation.errors import ErrorTable, error_table
from groundtrace.catalog.evaluation.matching import Equal, equal_for, set_counts, value_matches
from groundtrace.catalog.evaluation.metrics import METRICS, GoldKind, MetricValue, PairOutcome, metric_order
from groundtrace.catalog.model import AttributeResult, CandidateStatus, GoldLabel
from groundtrace.catalog.templates import TemplateSet

UNKNOWN_CATEGORY = "(unknown)"


class GroupReport(BaseModel):
    """Metrics and mixes over one group of pairs."""

    pairs: int
    metrics: dict[str, MetricValue]
    verdicts_extracted: dict[str, int] = Field(
        default_factory=dict, description="Verdict counts on extracted."
    )
    verdicts_all: dict[str, int] = Field(default_factory=dict, description="Verdict counts on every result.")
    actions: dict[str, int] = Field(default_factory=dict, description="Action counts on every result.")


class EvaluationReport(BaseModel):
    """Output of :func:`evaluate`."""

    comparator: str
    scope: str
    counts: dict[str, int]
    overall: GroupReport
    per_category: dict[str, GroupReport]
    per_attribute: dict[str, GroupReport]
    issues: list[str] = Field(default_factory=list)
    thresholds: ThresholdReport | None = Field(
        default=None, description="Precision/coverage over θ and coverage at the target precision."
    )
    errors: ErrorTable | None = Field(default=None, description="Outcome kinds with examples.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return self.model_dump(mode="json")


def _extracted(result: AttributeResult) -> bool:
    candidate = result.candidate
    return candidate.status == CandidateStatus.EXTRACTED and candidate.value is not None


def _text(value: str | list[str] | None) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else ", ".join(str(v) for v in value)


def _shown(result: AttributeResult | None, label: GoldLabel | None, extracted: bool) -> dict[str, Any]:
    """The :class:`PairOutcome` fields the curve and the error table read (confidence, values, quote)."""
    out: dict[str, Any] = {}
    if label is not None:
        out["gold_value"] = _text(label.value)
        out["in_text"] = label.in_text
    if result is not None and extracted:
        out["confidence"] = result.candidate.confidence
        out["predicted"] = _text(result.candidate.value)
        if result.candidate.evidence:
            out["quote"] = result.candidate.evidence[0].quote[:300]
    return out


def build_outcomes(
    results: Iterable[AttributeResult],
    gold: Iterable[GoldLabel],
    *,
    equal: Callable[[str, str], Equal],
    categories: Mapping[str, str] | None = None,
    scope: Literal["union", "results"] = "union",
) -> tuple[list[PairOutcome], dict[str, int], list[str]]:
    """Join results and gold on (sku_id, attribute); first occurrence of a duplicate wins (reported).
    ``equal(category, attribute)`` gives the comparator of a pair."""
    issues: list[str] = []
    by_pair: dict[tuple[str, str], AttributeResult] = {}
    sku_category: dict[str, str] = dict(categories or {})
    for result in results:
        key = (result.sku_id, result.attribute)
        if key in by_pair:
            issues.append(f"duplicate result for {key}; first kept")
            continue
        by_pair[key] = result
        sku_category.setdefault(result.sku_id, result.category)
    gold_by_pair: dict[tuple[str, str], GoldLabel] = {}
    for label in gold:
        key = (label.sku_id, label.attribute)
        if key in gold_by_pair:
            issues.append(f"duplicate gold for {key}; first kept")
            continue
        gold_by_pair[key] = label
    keys = list(by_pair) + ([k for k in gold_by_pair if k not in by_pair] if scope == "union" else [])
    counts = Counter(results=len(by_pair), gold=len(gold_by_pair))
    outcomes: list[PairOutcome] = []
    for key in keys:
        result = by_pair.get(key)
        label = gold_by_pair.get(key)
        extracted = result is not None and _extracted(result)
        if label is None:
            kind: GoldKind = "none"
        elif label.not_applicable or label.value is None or label.value == []:
            kind = "na"
        else:
            kind = "value"
        category = result.category if result else sku_category.get(key[0], UNKNOWN_CATEGORY)
        correct: bool | None = None
        if extracted and kind == "value":
            assert result is not None and label is not None
            correct = value_matches(result.candidate.value or [], label, equal(category, key[1]))
        elif extracted and kind == "na":
            correct = False
        counts_set = None
        if kind == "value" and label is not None and isinstance(label.value, list):
            predicted = result.candidate.value if extracted and result is not None else None
            counts_set = set_counts(predicted, label, equal(category, key[1]))
        outcomes.append(
            PairOutcome(
                sku_id=key[0],
                attribute=key[1],
                category=category,
                has_result=result is not None,
                extracted=extracted,
                gold=kind,
                correct=correct,
                verdict=result.verdict.verdict.value if result else None,
                action=result.decision.action.value if result else None,
                set_counts=counts_set,
                **_shown(result, label, extracted),
            )
        )
        counts["pairs"] += 1
        counts[f"gold_{kind}"] += 1
        counts["extracted"] += extracted
        counts["missing_results"] += result is None
        counts["unjudged_extracted"] += extracted and kind == "none"
    return outcomes, dict(counts), issues


def summarise(outcomes: list[PairOutcome]) -> GroupReport:
    """Every registered metric and the verdict/action mixes over ``outcomes``."""
    return GroupReport(
        pairs=len(outcomes),
        metrics={name: METRICS.get(name).compute(outcomes) for name in metric_order()},
        verdicts_extracted=dict(
            Counter(o.verdict for o in outcomes if o.extracted and o.verdict).most_common()
        ),
        verdicts_all=dict(Counter(o.verdict for o in outcomes if o.verdict).most_common()),
        actions=dict(Counter(o.action for o in outcomes if o.action).most_common()),
    )


def evaluate(
    results: Iterable[AttributeResult],
    gold: Iterable[GoldLabel],
    *,
    equal: Equal | None = None,
    templates: TemplateSet | None = None,
    categories: Mapping[str, str] | None = None,
    scope: Literal["union", "results"] = "union",
    target_precision: float = 0.95,
) -> EvaluationReport:
    """Score ``results`` against ``gold`` overall, per category and per attribute (see module docstring),
    with the precision/coverage curves over θ and coverage at ``target_precision``
    (:mod:`.curves`) and the error table (:mod:`.errors`).

    ``equal`` overrides the comparator for every pair; by default each pair uses :func:`equal_for` with the
    attribute's spec from ``templates`` (routed by the pair's category), or the untyped comparator.
    ``categories`` (sku_id → category) names the category of SKUs that have gold but no result.
    """
    cache: dict[tuple[str, str], Equal] = {}

    def resolve(category: str, attribute: str) -> Equal:
        if equal is not None:
            return equal
        if (category, attribute) not in cache:
            template = templates.for_category(category) if templates is not None else None
            spec = next((a for a in template.attributes if a.slug == attribute), None) if template else None
            cache[(category, attribute)] = equal_for(spec)
        return cache[(category, attribute)]

    if equal is not None:
        comparator_name = "custom"
    elif templates is not None:
        comparator_name = "groundtrace.core.evidence.normalize.values_equal (template kinds)"
    else:
        comparator_name = "groundtrace.core.evidence.normalize.values_equal (untyped)"
    outcomes, counts, issues = build_outcomes(
        results, gold, equal=resolve, categories=categories, scope=scope
    )
    per_category: dict[str, list[PairOutcome]] = defaultdict(list)
    per_attribute: dict[str, list[PairOutcome]] = defaultdict(list)
    for o in outcomes:
        per_category[o.category].append(o)
        per_attribute[o.attribute].append(o)
    return EvaluationReport(
        comparator=comparator_name,
        scope=scope,
        counts=counts,
        overall=summarise(outcomes),
        per_category={k: summarise(v) for k, v in sorted(per_category.items())},
        per_attribute={k: summarise(v) for k, v in sorted(per_attribute.items())},
        issues=issues,
        thresholds=threshold_report(outcomes, target_precision),
        errors=error_table(outcomes),
    )
