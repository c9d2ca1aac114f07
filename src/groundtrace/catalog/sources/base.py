"""Contracts for evidence sources and search providers, and their registries.

* An :class:`EvidenceSource` turns a SKU into the :class:`~groundtrace.catalog.model.Document` objects a
  Scout may quote from (catalog fields, a syndicated feed record, OCR text of an image ...).
* A :class:`SearchProvider` answers ``search(query, k) -> list[SearchHit]`` and ``fetch(url) -> Document``
  (the page text the Scout will quote from). ``fetch`` returns ``None`` when the page cannot be had.

Both are registered by name (``EVIDENCE_SOURCES``, ``SEARCH_PROVIDERS``) so third parties can add their
own through the ``groundtrace.plugins`` entry points without editing this package.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.model import SKU, Document, SourceType
from groundtrace.core.registry import Registry


class SourceError(RuntimeError):
    """An evidence source or search provider could not do its job (missing binary, bad file, HTTP error)."""


class EvidenceSource(ABC):
    """Own evidence of a SKU: ``documents(sku) -> list[Document]`` (empty when it has nothing)."""

    name: str = "source"

    @abstractmethod
    def documents(self, sku: SKU) -> list[Document]:
        """Every Document this source holds for ``sku``; never raises for a SKU it simply lacks."""


class SearchHit(BaseModel):
    """One search result. ``source_type`` is ``None`` when the URL is blocked (blog, forum, UGC)."""

    model_config = ConfigDict(extra="forbid")

    url: str
    title: str = ""
    snippet: str = ""
    source_type: SourceType | None = None
    score: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)


class SearchProvider(ABC):
    """Web search: ``search(query, k)`` ranked hits and ``fetch(url)`` the page as a Document."""

    name: str = "search"

    @abstractmethod
    def search(self, query: str, k: int = 10) -> list[SearchHit]:
        """At most ``k`` hits, best first."""

    @abstractmethod
    def fetch(self, url: str) -> Document | None:
        """The page behind ``url`` as a web Document (``None`` when unavailable)."""


EVIDENCE_SOURCES: Registry[Any] = Registry("evidence source", base=EvidenceSource)
SEARCH_PROVIDERS: Registry[Any] = Registry("search provider", base=SearchProvider)
