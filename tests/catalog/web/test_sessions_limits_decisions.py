"""Issue 24 (review page): server-side sessions ended by logout, login limits per address and per account
kept in the store, argon2 off the event loop, proxy headers trusted only when configured, decisions
applied exactly once on SQLite and PostgreSQL, and edits checked against the attribute's template."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from groundtrace.catalog.store import CatalogStore, ReviewConflict
from groundtrace.catalog.web import app as app_module
from groundtrace.catalog.web.app import create_app, server_options
from groundtrace.catalog.web.auth import LoginLimiter
from tests.catalog.web.conftest import PASSWORD, _ana_hash, item_id

SECRET = "s" * 40


def _token(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF field in the page"
    return match.group(1)


def _client(app: Any, address: str = "testclient") -> TestClient:
    return TestClient(app, follow_redirects=False, client=(address, 50000))


def _login(client: TestClient, name: str = "ana", password: str = PASSWORD) -> httpx.Response:
    token = _token(client.get("/login").text)
    return client.post("/login", data={"csrf_token": token, "username": name, "password": password})


# -- a. logout ends the session on the server ---------------------------------------------------------------
def test_a_cookie_replayed_after_logout_reads_and_decides_nothing(review_store: CatalogStore) -> None:
    client = _client(create_app(review_store, SECRET))
    assert _login(client).status_code == 303
    saved = dict(client.cookies)  # what an attacker (or a shared computer) kept
    g1 = item_id(review_store, "G1")
    token = _token(client.get(f"/items/{g1}").text)
    assert client.post("/logout", data={"csrf_token": token}).status_code == 303

    replay = _client(create_app(review_store, SECRET))
    replay.cookies.update(saved)
    for path in ("/", f"/items/{g1}"):
        response = replay.get(path)
        assert (response.status_code, response.headers["location"]) == (303, "/login")
    decided = replay.post(f"/items/{g1}/decide", data={"csrf_token": token, "decision": "approve"})
    assert decided.status_code == 401
    assert review_store.review_items(None)[0]["status"] == "open"
    assert review_store.table("audit_log") == [] and review_store.table("published_values") == []
    assert review_store.table("review_sessions") == []  # logout deleted the server-side session


def test_sessions_live_in_the_store_and_a_second_server_process_sees_them(review_store: CatalogStore) -> None:
    """Two apps over one store (two workers): a login on one is valid on the other; logout on the other
    ends it for both. The store keeps only the sha256 of the session id."""
    first, second = create_app(review_store, SECRET), create_app(review_store, SECRET)
    a = _client(first)
    assert _login(a).status_code == 303
    (row,) = review_store.table("review_sessions")
    assert row["reviewer"] == "ana" and len(row["id_hash"]) == 64
    b = _client(second)
    b.cookies.update(dict(a.cookies))
    page = b.get("/")
    assert page.status_code == 200
    assert b.post("/logout", data={"csrf_token": _token(page.text)}).status_code == 303
    assert a.get("/").status_code == 303


# -- c. login limits per address and per account, in the store, a success resets nothing -------------------
def test_a_success_does_not_reset_the_address_counter_and_429_has_retry_after(
    review_store: CatalogStore,
) -> None:
    now = [1000.0]
    limiter = LoginLimiter(max_failures=3, window=60, clock=lambda: now[0])
    client = _client(create_app(review_store, SECRET, limiter=limiter), "10.0.0.7")
    assert _login(client, "bob", "guess-one").status_code == 401
    now[0] = 1010.0
    assert _login(client, "carol", "guess-two").status_code == 401
    assert _login(client).status_code == 303  # ana's real password: a success from the same address
    now[0] = 1020.0
    assert _login(client, "dave", "guess-three").status_code == 401  # 3rd failure of 10.0.0.7
    blocked = _login(client)
    assert blocked.status_code == 429
    # free once the first failure (t=1000) leaves the 60 s window: 1000 + 60 - 1020 = 40 s
    assert blocked.headers["Retry-After"] == "40"
    now[0] = 1061.0  # the first failure left the window: 2 of 3 remain
    assert _login(client).status_code == 303


def test_failures_count_per_account_across_addresses_and_across_server_processes(
    review_store: CatalogStore,
) -> None:
    """X-Forwarded-For is not involved: each failure comes from a different socket address, through one
    of two apps (two workers) sharing the store; ana's account is locked after 3."""
    now = [0.0]
    apps = [
        create_app(
            review_store, SECRET, limiter=LoginLimiter(max_failures=3, window=300, clock=lambda: now[0])
        )
        for _ in range(2)
    ]
    for n in range(3):
        client = _client(apps[n % 2], f"192.0.2.{n + 1}")
        assert _login(client, "ana", f"wrong password {n}").status_code == 401
    fresh = _client(apps[1], "198.51.100.9")
    response = _login(fresh)
    assert response.status_code == 429 and response.headers["Retry-After"] == "300"
    keys = sorted({r["key"] for r in review_store.table("login_failures")})
    assert keys == ["ip:192.0.2.1", "ip:192.0.2.2", "ip:192.0.2.3", "user:ana"]


# -- d. argon2 off the event loop ---------------------------------------------------------------------------
def test_the_password_is_verified_on_a_worker_thread(
    review_store: CatalogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bool, str]] = []
    real = app_module.verify_password

    def spy(stored: str | None, password: str) -> bool:
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        seen.append((on_loop, threading.current_thread().name))
        return real(stored, password)

    monkeypatch.setattr(app_module, "verify_password", spy)
    client = _client(create_app(review_store, SECRET))
    assert _login(client, "ana", "wrong password").status_code == 401
    assert _login(client).status_code == 303
    assert len(seen) == 2 and all(not on_loop for on_loop, _ in seen), seen


# -- b. forwarded headers only when configured --------------------------------------------------------------
def test_server_options_trust_proxy_headers_only_when_configured() -> None:
    assert server_options("127.0.0.1", 8000) == {
        "host": "127.0.0.1",
        "port": 8000,
        "log_level": "warning",
        "proxy_headers": False,
        "forwarded_allow_ips": None,
    }
    options = server_options("127.0.0.1", 8000, " 10.0.0.1, 10.1.0.0/16 ")
    assert (options["proxy_headers"], options["forwarded_allow_ips"]) == (True, "10.0.0.1,10.1.0.0/16")


@pytest.fixture
def live(review_store: CatalogStore) -> Iterator[str]:
    """The app under uvicorn with ``catalog serve``'s default options, on 127.0.0.1."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    limiter = LoginLimiter(max_failures=3, window=300)
    app = create_app(review_store, SECRET, limiter=limiter)
    srv = uvicorn.Server(uvicorn.Config(app, **server_options("127.0.0.1", port)))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30  # a start-up guard, not a speed check
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the review server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


def test_x_forwarded_for_from_loopback_is_ignored_by_default(live: str, review_store: CatalogStore) -> None:
    with httpx.Client(base_url=live, follow_redirects=False) as client:
        codes = []
        for n in range(4):
            token = _token(client.get("/login").text)
            response = client.post(
                "/login",
                data={"csrf_token": token, "username": f"user{n}", "password": "guess guess"},
                headers={"X-Forwarded-For": f"203.0.113.{n + 1}"},
            )
            codes.append(response.status_code)
    assert codes == [401, 401, 401, 429]
    assert {r["key"] for r in review_store.table("login_failures") if r["key"].startswith("ip:")} == {
        "ip:127.0.0.1"
    }


# -- e. a decision applied exactly once ----------------------------------------------------------------------
def test_two_concurrent_deciders_apply_each_item_exactly_once(
    review_store_on_each_backend: CatalogStore,
) -> None:
    """Two stores (two connection pools, as two server processes) decide the same 4 items at the same
    time, ana approving and bob rejecting; for every item exactly one wins, the other gets ReviewConflict,
    and the queue, the audit trail and the published values agree on the winner."""
    store = review_store_on_each_backend
    other = CatalogStore(store.url)
    ids = [i["id"] for i in store.review_items()]
    outcomes: dict[str, list[tuple[int, str]]] = {"ana": [], "bob": []}
    barriers = [threading.Barrier(2) for _ in ids]

    def decide(who: str, target: CatalogStore, decision: str) -> None:
        for barrier, item in zip(barriers, ids, strict=True):
            barrier.wait(timeout=60)
            try:
                target.decide_review(item, reviewer=who, decision=decision, comment=who)
                outcomes[who].append((item, "won"))
            except ReviewConflict:
                outcomes[who].append((item, "conflict"))

    threads = [
        threading.Thread(target=decide, args=("ana", store, "approve")),
        threading.Thread(target=decide, args=("bob", other, "reject")),
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    other.close()
    winners = {item: who for who, rows in outcomes.items() for item, result in rows if result == "won"}
    losers = [(item, who) for who, rows in outcomes.items() for item, result in rows if result == "conflict"]
    assert sorted(winners) == sorted(ids) and len(losers) == len(ids)
    queue = {i["id"]: i for i in store.review_items(None)}
    audit = store.table("audit_log")
    assert sorted(a["review_id"] for a in audit) == sorted(ids)  # one audit row per item
    published = {(p["sku_id"], p["attribute"]): p for p in store.table("published_values")}
    for item, who in winners.items():
        row = queue[item]
        assert (row["reviewer"], row["status"]) == (who, "approved" if who == "ana" else "rejected")
        (entry,) = [a for a in audit if a["review_id"] == item]
        assert entry["actor"] == f"reviewer:{who}"
        pv = published.get((row["sku_id"], row["attribute"]))
        if who == "ana":
            assert pv is not None and pv["set_by"] == "reviewer:ana" and pv["value"] == row["value"]
        else:
            assert pv is None  # a rejected item publishes nothing


def test_the_second_reviewer_gets_409_and_nothing_is_published_for_them(review_store: CatalogStore) -> None:
    review_store.set_reviewer("bob", _ana_hash())
    app = create_app(review_store, SECRET)
    ana, bob = _client(app), _client(app)
    assert _login(ana).status_code == 303 and _login(bob, "bob").status_code == 303
    g2 = item_id(review_store, "G2")
    ana_token, bob_token = _token(ana.get(f"/items/{g2}").text), _token(bob.get(f"/items/{g2}").text)
    assert (
        ana.post(f"/items/{g2}/decide", data={"csrf_token": ana_token, "decision": "reject"}).status_code
        == 303
    )
    lost = bob.post(f"/items/{g2}/decide", data={"csrf_token": bob_token, "decision": "approve"})
    assert lost.status_code == 409 and "already rejected by ana" in lost.text
    assert review_store.table("published_values") == []
    assert [a["actor"] for a in review_store.table("audit_log")] == ["reviewer:ana"]


# -- f. an edit must fit the attribute's template -----------------------------------------------------------
def test_an_edit_outside_the_allowed_values_is_refused_with_the_reason_escaped(
    review_store: CatalogStore,
) -> None:
    client = _client(create_app(review_store, SECRET))
    _login(client)
    g1 = item_id(review_store, "G1")  # grocery dietary_labels: enum, multi-valued
    page = client.get(f"/items/{g1}").text
    token = _token(page)
    assert (
        "dietary_labels: enum, comma-separated; allowed: vegan, vegetarian, gluten_free" in page
    )  # the hint
    refused = client.post(
        f"/items/{g1}/decide",
        data={"csrf_token": token, "decision": "edit", "value": "<script>alert(1)</script>, vegan"},
    )
    assert refused.status_code == 422
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in refused.text and "<script>alert(1)" not in refused.text
    assert "is not an allowed value" in refused.text and "gluten_free" in refused.text
    assert review_store.review_items(None)[0]["status"] == "open"
    assert review_store.table("published_values") == [] and review_store.table("audit_log") == []
    accepted = client.post(
        f"/items/{g1}/decide", data={"csrf_token": token, "decision": "edit", "value": "Vegan, Gluten-Free"}
    )
    assert accepted.status_code == 303
    (pv,) = review_store.table("published_values")
    assert pv["value"] == ["vegan", "gluten_free"]  # stored as the template's own entries


def test_edit_checks_follow_the_attribute_type() -> None:
    from groundtrace.catalog.templates import load_templates
    from groundtrace.catalog.web.validate import check_edit

    grocery = load_templates().for_category("grocery")
    assert grocery is not None
    organic, net, flavor = (grocery.attribute(s) for s in ("organic", "net_content", "flavor"))
    assert check_edit("Yes", organic, False).value == "true"
    assert check_edit("maybe", organic, False).error == "organic: 'maybe' is not true or false"
    assert check_edit("abc", net, False).error == "net_content: 'abc' is not a number"
    assert check_edit("dark, roast", flavor, False).value == "dark, roast"  # single-valued string
    assert (
        check_edit("van\x00illa", flavor, False).error == "flavor: 'van\\x00illa' contains control characters"
    )
    assert check_edit("   ", flavor, False).error == "An edit needs the corrected value."
