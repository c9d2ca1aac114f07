"""The merchant catalog record as evidence: one Document per field.

``catalog:title``, ``catalog:description``, ``catalog:brand`` and ``catalog:spec:<field>`` (text
``"<field>: <value>"`` so a quote can carry the field name). Empty fields yield no Document.
"""

from __future__ import annotations

from groundtrace.catalog.model import SKU, Document
from groundtrace.catalog.sources.base import EvidenceSource


def catalog_documents(sku: SKU) -> list[Document]:
    """The catalog Documents of ``sku`` in a stable order (title, description, brand, specs)."""
    docs: list[Document] = []

    def add(ref: str, text: str, field: str) -> None:
        if text and text.strip():
            docs.append(
                Document(
                    source="catalog",
                    source_type="catalog",
                    source_ref=ref,
                    text=text,
                    title=sku.title,
                    metadata={"field": field, "sku_id": sku.sku_id},
                )
            )

    add("catalog:title", sku.title, "title")
    add("catalog:description", sku.description, "description")
    if sku.brand:
        add("catalog:brand", f"Brand: {sku.brand}", "brand")
    for key, value in sku.specs.items():
        if value is not None and str(value).strip():
            add(f"catalog:spec:{key}", f"{key}: {value}", f"spec:{key}")
    return docs


class CatalogRecordSource(EvidenceSource):
    """Evidence tier 1 (highest priority): the SKU record itself."""

    name = "catalog"

    def documents(self, sku: SKU) -> list[Document]:
        return catalog_documents(sku)
