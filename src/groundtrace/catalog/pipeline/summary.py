"""What a run reports: :class:`EnrichSummary` (counts and mixes), :func:`tally` (adds one SKU's results)
and :func:`summary_lines` (the human-readable lines ``catalog enrich`` prints)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from groundtrace.catalog.model import AttributeResult, CandidateStatus
from groundtrace.core.llm.base import Usage


class EnrichSummary(BaseModel):
    """Counts and mixes of one run (this run's SKUs plus those already in the file)."""

    skus_read: int = 0
    skus_done_before: int = 0
    skus_processed: int = 0
    skus_failed: int = 0
    failed_skus: list[str] = Field(
        default_factory=list, description="SKUs whose processing failed (nothing written; retried on resume)."
    )
    no_template: int = 0
    lines_written: int = 0
    truncated_bytes: int = 0
    results_total: int = 0
    verdicts: dict[str, int] = Field(default_factory=dict, description="Verdict counts over every result.")
    verdicts_extracted: dict[str, int] = Field(
        default_factory=dict,
        description="Verdict counts over results with an extracted value (abstentions left out: the Judge "
        "passes a reasonable not_found/ambiguous, which says nothing about the values).",
    )
    failure_types: dict[str, int] = Field(default_factory=dict)
    actions: dict[str, int] = Field(default_factory=dict)
    statuses: dict[str, int] = Field(default_factory=dict)
    issues: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    llm_usage: Usage | None = Field(
        default=None,
        description="This run's LLM ledger (calls, tokens, cache hits, retries, cost); "
        "None when no LLM is configured.",
    )
    llm_unpriced_models: list[str] = Field(
        default_factory=list, description="Models without a price rule: the cost above is unknown, not free."
    )

    def shares(self) -> dict[str, float]:
        """WRITE / BLOCK / REVIEW shares over every result line."""
        total = sum(self.actions.values())
        return {a: (self.actions.get(a, 0) / total if total else 0.0) for a in ("WRITE", "BLOCK", "REVIEW")}


def tally(summary: EnrichSummary, results: list[AttributeResult]) -> None:
    """Add ``results`` to the summary's counts (in place: one SKU at a time, so no copies per SKU)."""
    verdicts, extracted, failures = summary.verdicts, summary.verdicts_extracted, summary.failure_types
    actions, statuses = summary.actions, summary.statuses
    for r in results:
        verdict, status = r.verdict.verdict.value, r.candidate.status.value  # Enum.value is a slow property
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        if status == CandidateStatus.EXTRACTED.value:
            extracted[verdict] = extracted.get(verdict, 0) + 1
        if r.verdict.failure_type is not None:
            failure = r.verdict.failure_type.value
            failures[failure] = failures.get(failure, 0) + 1
        action = r.decision.action.value
        actions[action] = actions.get(action, 0) + 1
        statuses[status] = statuses.get(status, 0) + 1
    summary.results_total += len(results)


def summary_lines(summary: EnrichSummary) -> list[str]:
    """Human-readable summary (verdict mix, WRITE/BLOCK/REVIEW shares)."""
    n_extracted = sum(summary.verdicts_extracted.values())
    mix = ", ".join(f"{k} {v} ({v / n_extracted:.1%})" for k, v in sorted(summary.verdicts_extracted.items()))
    abstained = summary.results_total - n_extracted
    kinds = ", ".join(
        f"{k} {v}" for k, v in sorted(summary.statuses.items()) if k != CandidateStatus.EXTRACTED.value
    )
    fails = ", ".join(f"{k} {v}" for k, v in sorted(summary.failure_types.items())) or "-"
    shares = summary.shares()
    return [
        (
            f"SKUs: {summary.skus_read} read, {summary.skus_done_before} already done, "
            f"{summary.skus_processed} processed ({summary.no_template} without template), "
            f"{summary.skus_failed} failed; {summary.lines_written} lines written, "
            f"{summary.results_total} in file"
        ),
        (
            f"verdicts of the {n_extracted} extracted values: {mix or '-'}; "
            f"{abstained} abstentions{f' ({kinds})' if kinds else ''}"
        ),
        f"failure types: {fails}",
        "actions: "
        + ", ".join(
            f"{a} {summary.actions.get(a, 0)} ({shares[a]:.1%})" for a in ("WRITE", "BLOCK", "REVIEW")
        ),
        f"LLM calls: {summary.llm_calls}; issues: {len(summary.issues)}",
        *(
            [_usage_line(summary.llm_usage, summary.llm_unpriced_models)]
            if summary.llm_usage is not None
            else []
        ),
    ]


def _usage_line(u: Usage, unpriced: list[str]) -> str:
    cost = (
        f"cost unknown ({', '.join(unpriced)} not in the price table)" if unpriced else f"${u.cost_usd:.6f}"
    )
    return (
        f"LLM usage: {u.calls} requests, {u.prompt_tokens}+{u.completion_tokens} tokens, "
        f"{u.cache_hits} cache hits, {u.retries} retries, {u.reasks} re-asks, {cost}"
    )
