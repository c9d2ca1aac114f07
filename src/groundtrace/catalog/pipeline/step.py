"""Stage 2 — the per-SKU step: :func:`process_sku` runs Scout → Judge → write policy for one SKU over
built :class:`~groundtrace.catalog.pipeline.factory.Components` and returns its
:class:`SkuOutcome`. Used by the JSONL batch runner, the catalog store runners and the in-memory
:func:`~groundtrace.catalog.enrichment.enrich`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from groundtrace.catalog.model import SKU, Action, AttributeResult
from groundtrace.catalog.pipeline.factory import Components


class SkuOutcome(NamedTuple):
    """One SKU's AttributeResults (template order), the LLM calls made, this SKU's issues, and the text of
    every source Document cited by a REVIEW result (source_ref → text), so a reviewer sees each quote in
    its source (the catalog store keeps them with the review item)."""

    results: list[AttributeResult]
    calls: int
    issues: list[str]
    review_sources: dict[str, str] | None = None


def process_sku(sku: SKU, comp: Components) -> SkuOutcome:
    """Scout → Judge → policy for one SKU. Raises what the Scout or Judge raise (``LLMError`` when an LLM
    call failed for good): the caller then writes nothing for this SKU."""
    scout = comp.scout.scout(sku)
    issues = [e for e in scout.errors if e not in comp.errors]
    if scout.template is None:
        return SkuOutcome([], 0, issues)
    template = comp.templates.get(scout.template)
    calls_before = comp.judge.calls  # the Judge's call ledger (judge.base.Judge)
    verdicts = comp.judge.judge(sku, scout, template)
    calls = scout.llm_calls + comp.judge.calls - calls_before
    results = []
    for spec in template.attributes:
        cand = scout.candidates[spec.slug]
        verdict = verdicts[spec.slug]
        decision = comp.policy.decide(cand, verdict, spec, template.category)
        results.append(
            AttributeResult(
                sku_id=sku.sku_id,
                category=sku.category,
                attribute=spec.slug,
                candidate=cand,
                verdict=verdict,
                decision=decision,
            )
        )
    return SkuOutcome(results, calls, issues, _review_sources(scout, results))


def _review_sources(scout: Any, results: list[AttributeResult]) -> dict[str, str]:
    """source_ref → Document text for the evidence of every REVIEW result."""
    out: dict[str, str] = {}
    for r in results:
        if r.decision.action != Action.REVIEW:
            continue
        for ev in r.candidate.evidence:
            doc = scout.document(ev.source_ref)
            if doc is not None:
                out[ev.source_ref] = doc.text
    return out
