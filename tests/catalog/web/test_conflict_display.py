"""The review page shows both sides of a conflict (issue 24 item 4): both values, sources and quotes,
HTML-escaped."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from groundtrace.catalog.model import (
    SKU,
    Action,
    AttributeResult,
    Candidate,
    CandidateStatus,
    Decision,
    Evidence,
    Verdict,
    VerdictLabel,
)
from groundtrace.catalog.store import CatalogStore, SkuOutcome
from groundtrace.catalog.web.app import create_app
from tests.catalog.web.conftest import PASSWORD, _ana_hash, item_id
from tests.catalog.web.test_app import _token

RED = "Color: Red <script>alert('feed')</script>"


def _conflict_store(tmp_path: Path) -> CatalogStore:
    store = CatalogStore(f"sqlite:///{tmp_path / 'conflict.db'}")
    sku = SKU(
        sku_id="C1",
        title="Linkwell Cable",
        category="electronics",
        gtin="012345678905",
        specs={"Color": "Black"},
    )
    catalog = Evidence(
        source="catalog", source_type="catalog", source_ref="catalog:spec:Color", quote="Black"
    )
    feed = Evidence(source="syndicated", source_type="hq", source_ref="feed.csv#00012345678905", quote=RED)
    note = (
        "conflict: the catalog record says 'black' (catalog:spec:Color); "
        "the GTIN-matched syndicated feed says 'red <script>' (feed.csv#00012345678905)"
    )
    result = AttributeResult(
        sku_id="C1",
        category="electronics",
        attribute="color",
        candidate=Candidate(
            sku_id="C1",
            attribute="color",
            evidence=[catalog, feed],
            status=CandidateStatus.CONFLICT,
            engine="lexicon",
            note=note,
        ),
        verdict=Verdict(sku_id="C1", attribute="color", verdict=VerdictLabel.PASS, quote_verified=True),
        decision=Decision(
            sku_id="C1", attribute="color", action=Action.REVIEW, reason=f"sources disagree: {note}"
        ),
    )
    run = store.start_run({"test": "conflict"}, name="nightly")
    store.record_batch(run, [SkuOutcome(sku, [result], review_sources={"feed.csv#00012345678905": RED})])
    store.set_reviewer("ana", _ana_hash())
    return store


def test_review_page_shows_both_sides_escaped(tmp_path: Path) -> None:
    store = _conflict_store(tmp_path)
    try:
        client = TestClient(create_app(store, "s" * 40), follow_redirects=False)
        token = _token(client.get("/login").text)
        client.post("/login", data={"csrf_token": token, "username": "ana", "password": PASSWORD})
        html = client.get(f"/items/{item_id(store, 'C1')}").text
        assert 'id="conflict"' in html and "Sources disagree (2 sides)" in html
        section = html[html.index('id="conflict"') : html.index("</section>", html.index('id="conflict"'))]
        assert "catalog:spec:Color" in section and "feed.csv#00012345678905" in section
        assert "&#39;black&#39;" in section and "&#39;red &lt;script&gt;&#39;" in section  # both values
        assert "<q>Black</q>" in section
        assert "<q>Color: Red &lt;script&gt;alert(&#39;feed&#39;)&lt;/script&gt;</q>" in section
        assert "<script>alert" not in html
    finally:
        store.close()
