"""The review queue as the page shows it: filters, counts, item context and evidence highlighting.

* Filters (all optional, combined with AND): ``category``, ``attribute``, ``verdict``, ``safety``
  (``yes``/``no``: the attribute is ``safety_critical`` in its category template) and ``source_type``
  (any evidence item of that source type). Counts per value of each facet are over the whole open queue;
  ``total`` is the filtered count. Filtering is done in Python over the open items (a queue holds what
  people can review, thousands at most).
* Highlighting: an evidence quote is located in its source text with the core verifier
  (:func:`groundtrace.core.evidence.quotes.locate_quote`): the page shows ``before``, the matched span and
  ``after`` (each cut to :data:`CONTEXT_CHARS` characters). The source text is the one the review item
  keeps (``review_queue.source_texts``: every Document its evidence quotes, feed rows, OCR text and web
  pages included, as the Scout saw it); items queued before that column existed fall back to the stored
  SKU record for catalog evidence (``catalog:title``, ``catalog:spec:<field>`` ...) and otherwise show the
  quote alone, marked so.
* Links: only ``http``/``https`` URLs with a host become links (:func:`safe_url`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from sqlalchemy import select

from groundtrace.catalog.model import SKU
from groundtrace.catalog.sources.catalog_record import catalog_documents
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store import schema as t
from groundtrace.catalog.templates import TemplateSet, load_templates
from groundtrace.core.evidence.quotes import locate_quote

FACETS = ("category", "attribute", "verdict", "safety", "source_type")
CONTEXT_CHARS = 400


@dataclass(frozen=True)
class Filters:
    """The queue's filters ('' = any)."""

    category: str = ""
    attribute: str = ""
    verdict: str = ""
    safety: str = ""
    source_type: str = ""

    def as_query(self) -> dict[str, str]:
        return {k: v for k, v in vars(self).items() if v}


@dataclass
class Highlight:
    """One evidence item on the item page: ``before + match + after`` is (part of) the source text."""

    source: str
    source_type: str
    source_ref: str
    quote: str
    url: str | None
    before: str = ""
    match: str = ""
    after: str = ""
    score: float | None = None
    in_source: bool = False  # the source text was available and the quote located in it


@dataclass
class QueueView:
    items: list[dict[str, Any]]
    total: int
    open_total: int
    counts: dict[str, list[tuple[str, int]]] = field(default_factory=dict)


def safe_url(url: object) -> str | None:
    """``url`` when it is an http(s) URL with a host, else None (no javascript:, data:, file: links)."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme.lower() in ("http", "https") and parts.netloc else None


def _facets(item: dict[str, Any], templates: TemplateSet) -> dict[str, list[str]]:
    template = templates.for_category(item["category"])
    safety = "no"
    if template is not None:
        try:
            safety = "yes" if template.attribute(item["attribute"]).safety_critical else "no"
        except KeyError:
            pass
    types = sorted({str(e.get("source_type")) for e in item["evidence"] if e.get("source_type")})
    return {
        "category": [item["category"]],
        "attribute": [item["attribute"]],
        "verdict": [item["verdict"]],
        "safety": [safety],
        "source_type": types or ["none"],
    }


def queue_view(store: CatalogStore, filters: Filters, templates: TemplateSet | None = None) -> QueueView:
    """The open items matching ``filters`` (oldest first), with facet counts over the whole open queue."""
    templates = templates or load_templates()
    items = store.review_items("open")
    counters: dict[str, Counter[str]] = {f: Counter() for f in FACETS}
    kept = []
    for item in items:
        facets = _facets(item, templates)
        item["facets"] = facets
        for name, values in facets.items():
            counters[name].update(values)
        wanted = filters.as_query()
        if all(value in facets[name] for name, value in wanted.items()):
            kept.append(item)
    counts = {name: sorted(c.items()) for name, c in counters.items()}
    return QueueView(items=kept, total=len(kept), open_total=len(items), counts=counts)


def highlight(evidence: dict[str, Any], sku: SKU | None, texts: dict[str, str] | None = None) -> Highlight:
    """Locate one evidence item in its source text: ``texts[source_ref]`` (the review item's stored
    source texts), else the catalog field of ``sku`` (module docstring)."""
    quote = str(evidence.get("quote") or "")
    out = Highlight(
        source=str(evidence.get("source") or ""),
        source_type=str(evidence.get("source_type") or ""),
        source_ref=str(evidence.get("source_ref") or ""),
        quote=quote,
        url=safe_url(evidence.get("url")),
        match=quote,
    )
    text = (texts or {}).get(out.source_ref)
    if text is None and sku is not None and out.source == "catalog":
        text = next((d.text for d in catalog_documents(sku) if d.source_ref == out.source_ref), None)
    if text is None or not quote:
        return out
    found = locate_quote(quote, text)
    out.score = found.score
    if found.score <= 0 or found.end <= found.start:
        return out
    start, end = found.start, found.end
    lead = max(0, start - CONTEXT_CHARS)
    tail = min(len(text), end + CONTEXT_CHARS)
    out.before = ("…" if lead else "") + text[lead:start]
    out.match = text[start:end]
    out.after = text[end:tail] + ("…" if tail < len(text) else "")
    out.in_source = True
    return out


def item_context(store: CatalogStore, item_id: int) -> dict[str, Any] | None:
    """Everything the item page shows: the review item, its SKU record, the Judge's verdict row, the
    candidate row and the highlighted evidence; None when there is no such item."""
    rq = t.review_queue
    with store.engine.connect() as conn:
        item = conn.execute(select(rq).where(rq.c.id == item_id)).mappings().first()
        if item is None:
            return None
        key = (item["run_id"], item["sku_id"], item["attribute"])
        sku_row = conn.execute(select(t.skus).where(t.skus.c.sku_id == item["sku_id"])).mappings().first()
        verdict = _row(conn, t.verdicts, key)
        candidate = _row(conn, t.candidates, key)
        run = conn.execute(select(t.runs.c.name).where(t.runs.c.id == item["run_id"])).first()
    sku = None
    if sku_row is not None:
        try:
            sku = SKU.model_validate(sku_row["record"])
        except ValidationError:
            sku = None
    return {
        "item": dict(item),
        "sku": sku,
        "verdict": verdict,
        "candidate": candidate,
        "run": run[0] if run else "",
        "evidence": [highlight(e, sku, item["source_texts"]) for e in item["evidence"]],
        "sku_url": safe_url(sku.url) if sku else None,
    }


def _row(conn: Any, table: Any, key: tuple[int, str, str]) -> dict[str, Any] | None:
    run_id, sku_id, attribute = key
    row = (
        conn.execute(
            select(table).where(
                table.c.run_id == run_id, table.c.sku_id == sku_id, table.c.attribute == attribute
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else dict(row)


def parse_value(text: str, multi: bool) -> str | list[str] | None:
    """An edited value from the form: comma-separated items for a list value, else the stripped text;
    None when empty."""
    text = text.strip()
    if not text:
        return None
    if multi:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        return parts or None
    return text
