"""One SKU through Scout -> Judge -> policy for the store runners (inline, processes, asyncio and Ray),
never raising: a failure becomes ``SkuOutcome.error``. Its own module so that the batch runner
(``runner``) and the Ray task (``ray_engine``) both import it and never each other.
"""

from __future__ import annotations

from typing import Any

from groundtrace.catalog.model import SKU
from groundtrace.catalog.pipeline import Components, process_sku
from groundtrace.catalog.store.store import SkuOutcome
from groundtrace.core.llm.base import Usage


def process_one(sku: SKU, comp: Components, measure_usage: bool = False) -> SkuOutcome:
    """Scout → Judge → policy for one SKU, never raising: a failure becomes ``SkuOutcome.error``."""
    before = usage_of(comp.llm_clients) if measure_usage else None
    try:
        done = process_sku(sku, comp)
        outcome = SkuOutcome(
            sku=sku,
            results=done.results,
            llm_calls=done.calls,
            issues=list(done.issues),
            review_sources=dict(done.review_sources or {}),
        )
    except Exception as exc:  # noqa: BLE001 - one SKU's failure is data for the report, not a crash
        outcome = SkuOutcome(sku=sku, error=f"{type(exc).__name__}: {exc}")
    if before is not None:
        outcome.usage = usage_minus(usage_of(comp.llm_clients), before)
    return outcome


def usage_of(clients: list[Any]) -> Usage:
    """The summed usage of the LLM clients so far."""
    total = Usage()
    for client in clients:
        total = total + client.usage()
    return total


def usage_minus(after: Usage, before: Usage) -> Usage:
    """Field-wise ``after - before``."""
    return Usage(**{name: getattr(after, name) - getattr(before, name) for name in Usage.model_fields})
