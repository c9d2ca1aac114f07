"""Evidence sources (catalog record, syndicated feed, images) and web search providers.

Registries: :data:`EVIDENCE_SOURCES` (``catalog``, ``syndicated``, ``image_ocr``, ``image_vlm``) and
:data:`SEARCH_PROVIDERS` (``local``, ``searxng``), defined with lazy built-in entries in ``sources.base``.
"""

from groundtrace.catalog.sources.base import (
    EVIDENCE_SOURCES,
    SEARCH_PROVIDERS,
    EvidenceSource,
    SearchHit,
    SearchProvider,
    SourceContext,
    SourceError,
)
from groundtrace.catalog.sources.catalog_record import CatalogRecordSource, catalog_documents
from groundtrace.catalog.sources.classify import SourcePolicy, classify_url, is_blocked, load_policy
from groundtrace.catalog.sources.feed import SyndicatedFeedSource
from groundtrace.catalog.sources.html_text import PageText, html_to_text
from groundtrace.catalog.sources.image import TesseractOCRSource, VLMImageSource, run_tesseract
from groundtrace.catalog.sources.web import (
    BM25Index,
    LocalCorpusSearch,
    SearxngSearch,
    fetch_page,
    make_search,
    page_document,
)

__all__ = [
    "EVIDENCE_SOURCES",
    "SEARCH_PROVIDERS",
    "BM25Index",
    "CatalogRecordSource",
    "EvidenceSource",
    "LocalCorpusSearch",
    "PageText",
    "SearchHit",
    "SearchProvider",
    "SearxngSearch",
    "SourceContext",
    "SourceError",
    "SourcePolicy",
    "SyndicatedFeedSource",
    "TesseractOCRSource",
    "VLMImageSource",
    "catalog_documents",
    "classify_url",
    "fetch_page",
    "html_to_text",
    "is_blocked",
    "load_policy",
    "make_search",
    "page_document",
    "run_tesseract",
]
