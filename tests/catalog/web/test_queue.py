"""The review page's pure parts: URL allow-list, edited values, evidence highlighting, filters and
counts, the login limiter, CSRF tokens and password hashing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groundtrace.catalog.model import SKU
from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.auth import LoginLimiter, hash_password, verify_password
from groundtrace.catalog.web.csrf import csrf_ok, csrf_token
from groundtrace.catalog.web.queue import Filters, highlight, parse_value, queue_view, safe_url


def test_only_http_links_with_a_host_are_kept() -> None:
    assert safe_url("https://a.example/x?q=1") == "https://a.example/x?q=1"
    assert safe_url(" HTTP://a.example ") == "HTTP://a.example"
    for bad in (
        "javascript:alert(1)",
        "JaVaScRiPt:x",
        "data:text/html,x",
        "file:///etc/passwd",
        "//a",
        "",
        None,
    ):
        assert safe_url(bad) is None


@given(st.text())
def test_safe_url_never_returns_another_scheme(text: str) -> None:
    out = safe_url(text)
    assert out is None or out.lower().startswith(("http://", "https://"))


def test_edited_values_follow_the_item_shape() -> None:
    assert parse_value(" vegan,  gluten_free ,", multi=True) == ["vegan", "gluten_free"]
    assert parse_value(" dark, roast ", multi=False) == "dark, roast"
    assert parse_value("  ", multi=False) is None and parse_value(" , ", multi=True) is None


def test_catalog_quotes_are_highlighted_inside_the_record_field() -> None:
    sku = SKU(sku_id="S", title="Bar", category="grocery", description="Crunchy. “Gluten-free” oats!")
    ev = {"source": "catalog", "source_type": "catalog", "source_ref": "catalog:description"}
    h = highlight({**ev, "quote": "gluten free oats"}, sku)  # found by the verifier despite case/punctuation
    assert h.in_source and (h.before, h.match, h.after) == ("Crunchy. “", "Gluten-free” oats", "!")
    missing = highlight({**ev, "quote": "contains peanuts"}, sku)
    assert not missing.in_source and missing.score is not None and missing.match == "contains peanuts"
    web = highlight({"source": "web", "source_type": "retailer", "source_ref": "u", "quote": "q"}, sku)
    assert not web.in_source and web.score is None  # the page text is not in the store


def test_counts_cover_the_open_queue_and_filters_narrow_the_list(review_store: CatalogStore) -> None:
    everything = queue_view(review_store, Filters())
    assert (everything.total, everything.open_total) == (4, 4)
    assert dict(everything.counts["safety"]) == {"yes": 1, "no": 3}
    view = queue_view(review_store, Filters(category="grocery", safety="no"))
    assert [i["sku_id"] for i in view.items] == ["G2", "X1"] and view.open_total == 4
    assert dict(view.counts["category"]) == {"grocery": 3, "electronics": 1}  # not narrowed


def test_login_limiter_counts_failures_in_a_sliding_window() -> None:
    now = [0.0]
    limiter = LoginLimiter(max_failures=2, window=10, clock=lambda: now[0])
    limiter.failed("ip:1", "user:a")
    now[0] = 5
    limiter.failed("ip:1", "user:b")
    assert limiter.blocked("ip:1") and not limiter.blocked("user:a")
    now[0] = 10.5  # the first failure left the window
    assert not limiter.blocked("ip:1")
    limiter.failed("ip:1")
    assert limiter.blocked("ip:1")
    limiter.succeeded("ip:1")
    assert not limiter.blocked("ip:1")


def test_csrf_token_is_per_session_and_checked_exactly() -> None:
    session: dict[str, str] = {}
    token = csrf_token(session)
    assert csrf_token(session) == token and len(token) >= 32
    assert csrf_ok(session, token)
    assert not csrf_ok(session, token[:-1]) and not csrf_ok(session, "") and not csrf_ok({}, token)
    assert csrf_token({}) != token


def test_passwords_are_argon2_hashes() -> None:
    hashed = hash_password("long enough")
    assert hashed.startswith("$argon2id$") and "long enough" not in hashed
    assert verify_password(hashed, "long enough")
    assert not verify_password(hashed, "long enougH") and not verify_password(None, "long enough")
    assert not verify_password("not a hash", "long enough")
