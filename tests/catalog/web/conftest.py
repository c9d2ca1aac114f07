"""A catalog store with four open REVIEW items for the review-page tests (SQLite in the test's tmp dir):

* ``G1`` grocery ``dietary_labels`` = [vegan] — catalog evidence (description), UNCERTAIN, safety-critical;
* ``G2`` grocery ``flavor`` = vanilla — catalog spec evidence, UNVERIFIED;
* ``E1`` electronics ``color`` = black — web evidence with an http URL, UNCERTAIN;
* ``X1`` grocery ``flavor`` = cocoa — its description (and so the quote) carries ``<script>`` and
  ``<img onerror>`` payloads, and its evidence URL is ``javascript:``.

Reviewer ``ana`` has password :data:`PASSWORD`. ``review_store`` is SQLite; ``review_store_on_each_backend``
runs a test on SQLite and PostgreSQL (skipped without a server, a failure in CI).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

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
from groundtrace.catalog.web.auth import hash_password
from tests.catalog.store.conftest import pg_database, store_url  # noqa: F401 - fixtures used here

PASSWORD = "correct horse battery"
PAYLOAD = "Cocoa <script>alert('xss')</script><img src=x onerror=alert(1)> flavour"


def _result(
    sku: SKU, attribute: str, value: str | list[str], evidence: Evidence, verdict: VerdictLabel
) -> AttributeResult:
    return AttributeResult(
        sku_id=sku.sku_id,
        category=sku.category,
        attribute=attribute,
        candidate=Candidate(
            sku_id=sku.sku_id,
            attribute=attribute,
            value=value,
            evidence=[evidence],
            confidence=0.7,
            status=CandidateStatus.EXTRACTED,
            engine="lexicon",
        ),
        verdict=Verdict(
            sku_id=sku.sku_id,
            attribute=attribute,
            verdict=verdict,
            reasoning=f"judge reasoning for {sku.sku_id} <b>not bold</b>",
            quote_verified=True,
            judge="rule",
        ),
        decision=Decision(
            sku_id=sku.sku_id,
            attribute=attribute,
            action=Action.REVIEW,
            reason=f"verdict {verdict.value} is not PASS",
            policy="default",
        ),
    )


def _catalog(ref: str, quote: str, span: tuple[int, int] | None = None) -> Evidence:
    return Evidence(source="catalog", source_type="catalog", source_ref=ref, quote=quote, span=span)


def build_review_store(url: str) -> CatalogStore:
    store = CatalogStore(url)
    g1 = SKU(sku_id="G1", title="Oat crunch bar", category="grocery", description="Vegan. Made with oats.")
    g2 = SKU(sku_id="G2", title="Yoghurt", category="grocery", specs={"Flavor": "Vanilla"})
    e1 = SKU(sku_id="E1", title="USB cable", category="electronics", url="https://shop.example/e1")
    x1 = SKU(sku_id="X1", title="Hostile bar", category="grocery", description=PAYLOAD)
    web = Evidence(
        source="web",
        source_type="retailer",
        source_ref="https://retail.example/e1",
        quote="Color: Black",
        url="https://retail.example/e1",
    )
    hostile = Evidence(
        source="catalog",
        source_type="catalog",
        source_ref="catalog:description",
        quote=PAYLOAD,
        url="javascript:alert(2)",
    )
    U, V = VerdictLabel.UNCERTAIN, VerdictLabel.UNVERIFIED
    outcomes = [
        SkuOutcome(
            g1, [_result(g1, "dietary_labels", ["vegan"], _catalog("catalog:description", "Vegan."), U)]
        ),
        SkuOutcome(g2, [_result(g2, "flavor", "vanilla", _catalog("catalog:spec:Flavor", "Vanilla"), V)]),
        SkuOutcome(e1, [_result(e1, "color", "black", web, U)]),
        SkuOutcome(x1, [_result(x1, "flavor", "cocoa", hostile, U)]),
    ]
    run = store.start_run({"test": "review"}, name="nightly")
    store.record_batch(run, outcomes)
    store.set_reviewer("ana", _ana_hash())
    return store


@functools.cache
def _ana_hash() -> str:
    """The reviewer's argon2id hash, computed once per session (argon2 costs ~0.2 s CPU by design; every
    store here gets the same real hash, so every login still verifies it)."""
    return hash_password(PASSWORD)


@pytest.fixture
def review_store(tmp_path: Path) -> CatalogStore:
    store = build_review_store(f"sqlite:///{tmp_path / 'review.db'}")
    yield store
    store.close()


@pytest.fixture
def review_store_on_each_backend(store_url: str) -> CatalogStore:  # noqa: F811 - the imported fixture
    """The same store on SQLite and on PostgreSQL (the store suite's ``store_url``)."""
    store = build_review_store(store_url)
    yield store
    store.close()


def item_id(store: CatalogStore, sku_id: str) -> int:
    return next(i["id"] for i in store.review_items(None) if i["sku_id"] == sku_id)
