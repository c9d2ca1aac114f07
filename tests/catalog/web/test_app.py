"""The review application through Starlette's TestClient: login, sessions, CSRF, rate limit, headers,
escaping, and decisions written to the store (the browser tests drive the same app in chromium)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.app import create_app
from groundtrace.catalog.web.auth import LoginLimiter
from tests.catalog.web.conftest import PASSWORD, item_id

SECRET = "s" * 40


def _token(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF field in the page"
    return match.group(1)


def _client(store: CatalogStore, limiter: LoginLimiter | None = None) -> TestClient:
    return TestClient(create_app(store, SECRET, limiter=limiter), follow_redirects=False)


def _login(client: TestClient, password: str = PASSWORD, name: str = "ana") -> int:
    token = _token(client.get("/login").text)
    response = client.post("/login", data={"csrf_token": token, "username": name, "password": password})
    return response.status_code


def test_pages_need_a_session_and_writes_get_401(review_store: CatalogStore) -> None:
    client = _client(review_store)
    for path in ("/", f"/items/{item_id(review_store, 'G1')}"):
        response = client.get(path)
        assert (response.status_code, response.headers["location"]) == (303, "/login")
    response = client.post(f"/items/{item_id(review_store, 'G1')}/decide", data={"decision": "approve"})
    assert response.status_code == 401
    assert review_store.review_items()[0]["status"] == "open"


def test_login_then_decide_writes_the_store_and_the_item_leaves_the_queue(
    review_store_on_each_backend: CatalogStore,
) -> None:
    review_store = review_store_on_each_backend
    client = _client(review_store)
    assert _login(client, "wrong password") == 401
    assert _login(client) == 303
    page = client.get("/")
    assert page.status_code == 200 and 'id="queue-count">4<' in page.text
    g1 = item_id(review_store, "G1")
    item = client.get(f"/items/{g1}")
    token = _token(item.text)
    response = client.post(
        f"/items/{g1}/decide",
        data={"csrf_token": token, "decision": "edit", "value": "vegan, gluten_free", "comment": "pack"},
    )
    assert response.status_code == 303 and response.headers["location"].startswith("/items/")
    (pv,) = review_store.table("published_values")
    assert (pv["sku_id"], pv["value"], pv["status"], pv["set_by"]) == (
        "G1",
        ["vegan", "gluten_free"],
        "approved",
        "reviewer:ana",
    )
    audit = review_store.table("audit_log")[-1]
    assert (audit["actor"], audit["action"], audit["reason"], audit["review_id"]) == (
        "reviewer:ana",
        "approve",
        "pack",
        g1,
    )
    assert audit["at"] is not None
    assert 'id="queue-count">3<' in client.get("/").text


def test_a_post_without_the_csrf_token_is_refused(review_store: CatalogStore) -> None:
    client = _client(review_store)
    assert _login(client) == 303
    g2 = item_id(review_store, "G2")
    for data in ({"decision": "approve"}, {"decision": "approve", "csrf_token": "forged" * 8}):
        assert client.post(f"/items/{g2}/decide", data=data).status_code == 403
    assert all(i["status"] == "open" for i in review_store.review_items(None))
    # the login form needs its token too
    fresh = _client(review_store)
    response = fresh.post("/login", data={"username": "ana", "password": PASSWORD})
    assert response.status_code == 403


def test_failed_logins_are_rate_limited(review_store: CatalogStore) -> None:
    now = [0.0]
    client = _client(review_store, LoginLimiter(max_failures=3, window=60, clock=lambda: now[0]))
    assert [_login(client, "bad password") for _ in range(3)] == [401, 401, 401]
    assert _login(client) == 429  # even the right password, until the window passes
    now[0] = 61.0
    assert _login(client) == 303


def test_untrusted_text_is_escaped_and_unsafe_links_dropped(review_store: CatalogStore) -> None:
    client = _client(review_store)
    _login(client)
    html = client.get(f"/items/{item_id(review_store, 'X1')}").text
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in html
    assert "<b>not bold</b>" not in html and "&lt;b&gt;not bold&lt;/b&gt;" in html
    assert "javascript:" not in html
    web = client.get(f"/items/{item_id(review_store, 'E1')}").text
    assert '<a href="https://retail.example/e1" rel="noopener noreferrer"' in web


def test_security_headers_and_no_inline_script(review_store: CatalogStore) -> None:
    client = _client(review_store)
    response = client.get("/login")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert re.search(r"<script>(?!\s*</script>)", response.text) is None  # only <script src=...>
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", {"G1", "G2", "E1", "X1"}),
        ("?category=electronics", {"E1"}),
        ("?attribute=flavor", {"G2", "X1"}),
        ("?verdict=UNVERIFIED", {"G2"}),
        ("?safety=yes", {"G1"}),
        ("?source_type=retailer", {"E1"}),
        ("?category=grocery&verdict=UNCERTAIN", {"G1", "X1"}),
    ],
)
def test_queue_filters(review_store: CatalogStore, query: str, expected: set[str]) -> None:
    client = _client(review_store)
    _login(client)
    html = client.get("/" + query).text
    assert set(re.findall(r'class="item-link" href="[^"]+">([^<]+)<', html)) == expected
