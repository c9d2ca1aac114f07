"""The review page on a real enrichment: the demo catalog enriched into a store keeps the text of every
source a REVIEW item quotes (a web page included), and the item page highlights the quote inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.catalog.demo_catalog import write_demo_catalog
from groundtrace.catalog.pipeline import EnrichConfig
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.store.runner import StoreRunOptions, enrich_to_store
from groundtrace.catalog.web.queue import item_context


@pytest.mark.slow  # a whole demo enrichment
def test_review_items_keep_their_web_source_text_and_the_quote_is_found_in_it(tmp_path: Path) -> None:
    paths = write_demo_catalog(tmp_path / "demo")
    store = CatalogStore(f"sqlite:///{tmp_path / 'store.db'}")
    enrich_to_store(paths.skus, store, EnrichConfig(feed=paths.feed, corpus=paths.corpus), StoreRunOptions())
    items = store.review_items()
    assert items, "the demo routes some candidates to REVIEW"
    web = [i for i in items if any(e["source"] == "web" for e in i["evidence"])]
    assert web, "the demo has a REVIEW item with web evidence"
    for item in items:
        assert set(item["source_texts"]) == {e["source_ref"] for e in item["evidence"]}
        for ev in item_context(store, item["id"])["evidence"]:
            assert ev.in_source and ev.score == 1.0
            assert ev.match.casefold().strip(".") in ev.quote.casefold()
            assert len(ev.before + ev.after) > 0  # shown in context, not alone
    page = item_context(store, web[0]["id"])["evidence"][0]
    assert page.url and page.url.startswith("https://")
    store.close()
