"""Enrich SKUs in memory: ``enrich(skus, config) -> iterator of AttributeResult`` (no files needed).

The same Scout → Judge → write policy path as ``catalog enrich``
(:func:`~groundtrace.catalog.pipeline.step.process_sku` over
:func:`~groundtrace.catalog.pipeline.factory.build_components`), one SKU at a time, in input order: for
each SKU with a template, one :class:`~groundtrace.catalog.model.AttributeResult` per template attribute
(template order); a SKU without a template yields nothing. ``skus`` holds
:class:`~groundtrace.catalog.model.SKU` objects or dicts in their shape (validated; an invalid one raises
``ValueError`` naming its position). An LLM failure raises (``LLMError``) — in memory there is no file to
resume, so the caller decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from groundtrace.catalog.model import SKU, AttributeResult
from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku
from groundtrace.core.files.validation import validation_message


def _sku(item: SKU | Mapping[str, Any], index: int) -> SKU:
    if isinstance(item, SKU):
        return item
    try:
        return SKU.model_validate(item)
    except ValidationError as exc:
        raise ValueError(f"SKU #{index + 1}: {validation_message(exc, model=SKU)}") from None


def enrich(
    skus: Iterable[SKU | Mapping[str, Any]], config: EnrichConfig | None = None
) -> Iterator[AttributeResult]:
    """AttributeResults of ``skus`` under ``config`` (default: offline, built-in templates and policy)."""
    components = build_components(config or EnrichConfig())
    for index, item in enumerate(skus):
        yield from process_sku(_sku(item, index), components).results


def enrich_list(
    skus: Iterable[SKU | Mapping[str, Any]], config: EnrichConfig | None = None
) -> list[AttributeResult]:
    """:func:`enrich` as a list."""
    return list(enrich(skus, config))
