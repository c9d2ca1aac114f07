"""Evaluation templates built from a dataset's *train* split (OA-Mine, AE-110K have no category schema).

Contract: ``templates_from_gold(skus, gold, max_vocab=15)`` → one :class:`CategoryTemplate` per SKU
category, whose attributes are the gold attributes annotated in that category's SKUs (first-seen order),
``type: string``, ``recommended_values`` = the distinct observed gold values when there are at most
``max_vocab`` of them (else empty, ``examples`` = the first 10). Only the *train* split may be used, so
the templates never see the validation values they are scored on.
"""

from __future__ import annotations

from collections.abc import Iterable

from groundtrace.catalog.model import SKU, AttributeSpec, CategoryTemplate, GoldLabel


def templates_from_gold(
    skus: Iterable[SKU], gold: Iterable[GoldLabel], max_vocab: int = 15
) -> list[CategoryTemplate]:
    """One string-typed template per category of ``skus`` from the attributes its ``gold`` labels name."""
    category_of = {sku.sku_id: sku.category for sku in skus}
    values: dict[str, dict[str, list[str]]] = {}
    for label in gold:
        category = category_of.get(label.sku_id)
        if not category:
            continue
        seen = values.setdefault(category, {}).setdefault(label.attribute, [])
        items = label.value if isinstance(label.value, list) else [label.value] if label.value else []
        for item in items:
            if item and any(ch.isalnum() for ch in item) and item not in seen:  # never "-" as vocabulary
                seen.append(item)
    templates = []
    for category, attrs in values.items():
        specs = [
            AttributeSpec(
                slug=slug,
                name=slug.replace("_", " ").title(),
                definition=f"{slug.replace('_', ' ')} as annotated in the train split",
                type="string",
                recommended_values=vals if len(vals) <= max_vocab else [],
                examples=vals[:10],
            )
            for slug, vals in attrs.items()
        ]
        templates.append(
            CategoryTemplate(
                category=category, attributes=specs, description="built from the train split's gold labels"
            )
        )
    return templates
