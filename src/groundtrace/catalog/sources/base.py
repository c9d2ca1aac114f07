"""Contracts for evidence sources and search providers, and their registries.

* An :class:`EvidenceSource` turns a SKU into the :class:`~groundtrace.catalog.model.Document` objects a
  Scout may quote from (catalog fields, a syndicated feed record, OCR text of an image ...).
* A :class:`SearchProvider` answers ``search(query, k) -> list[SearchHit]`` and ``fetch(url) -> Document``
  (the page text the Scout will quote from). ``fetch`` returns ``None`` when the page cannot be had.

Both are registered by name (``EVIDENCE_SOURCES``: ``catalog``, ``syndicated``, ``image_ocr``,
``image_vlm``; ``SEARCH_PROVIDERS``: ``local``, ``searxng``; lazily, so naming them imports nothing heavy)
so third parties can add their own through the ``groundtrace.plugins`` entry points without editing this
package. The enrich pipeline builds a source with :meth:`EvidenceSource.from_context` from a
:class:`SourceContext` (the run's feed file, image folder, vision client and the source's own options);
the default is ``cls(**context.options)``, so a third-party source with a no-argument constructor needs
nothing more than its ``documents`` method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.model import SKU, Document, SourceType
from groundtrace.core.registry import Registry


class SourceError(RuntimeError):
    """An evidence source or search provider could not do its job (missing binary, bad file, HTTP error)."""


@dataclass
class SourceContext:
    """What an enrich run offers an evidence source to be built from (:meth:`EvidenceSource.from_context`)."""

    feed: Path | None = None  # --feed: syndicated feed file
    images: Path | None = None  # --images: base folder of SKU image paths
    vlm: Any = None  # --vlm: a configured LLM client that describes images
    options: dict[str, Any] = field(default_factory=dict)  # keyword options for this source


class EvidenceSource(ABC):
    """Own evidence of a SKU: ``documents(sku) -> list[Document]`` (empty when it has nothing)."""

    name: str = "source"

    @classmethod
    def from_context(cls, context: SourceContext) -> EvidenceSource:
        """The source for an enrich run; the default is ``cls(**context.options)``."""
        return cls(**context.options)

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

_SOURCES = "groundtrace.catalog.sources"
EVIDENCE_SOURCES.register_lazy(
    "catalog",
    f"{_SOURCES}.catalog_record:CatalogRecordSource",
    description="The merchant record: title, description, brand, specs.",
)
EVIDENCE_SOURCES.register_lazy(
    "syndicated",
    f"{_SOURCES}.feed:SyndicatedFeedSource",
    aliases=("feed",),
    description="Partner feed (CSV/JSONL) keyed by GTIN (needs --feed).",
)
EVIDENCE_SOURCES.register_lazy(
    "image_ocr",
    f"{_SOURCES}.image:TesseractOCRSource",
    aliases=("ocr", "tesseract"),
    description="OCR of SKU images (tesseract; needs --images).",
)
EVIDENCE_SOURCES.register_lazy(
    "image_vlm",
    f"{_SOURCES}.image:VLMImageSource",
    aliases=("vlm",),
    description="Images described by a vision LLM (needs --images and --vlm).",
)
SEARCH_PROVIDERS.register_lazy(
    "local",
    f"{_SOURCES}.web:LocalCorpusSearch",
    aliases=("corpus", "bm25"),
    description="BM25 over a local folder/JSONL of pages.",
)
SEARCH_PROVIDERS.register_lazy(
    "searxng",
    f"{_SOURCES}.web:SearxngSearch",
    aliases=("searx",),
    description="SearxNG-compatible JSON search API.",
)
