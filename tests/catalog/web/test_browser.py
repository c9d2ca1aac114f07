"""The review page in a real browser: Playwright driving Debian's chromium (``/usr/bin/chromium``,
headless; scripts/test.sh installs it when missing). The app runs in-process (uvicorn in a thread on
127.0.0.1, a free port). Screenshots go to ``test-artifacts/review-page/`` (gitignored).

Without playwright or chromium the tests skip with the reason, except in CI (``CI=true``), where that is
a failure."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groundtrace.catalog.store import CatalogStore
from groundtrace.catalog.web.app import create_app
from tests.catalog.web.conftest import PASSWORD, item_id

pytestmark = pytest.mark.slow  # a real browser

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "review-page"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in {"1", "true"}:
        pytest.fail(f"{reason}: CI runs the browser tests (scripts/test.sh installs chromium)")
    pytest.skip(reason)


@pytest.fixture
def server(review_store: CatalogStore) -> Iterator[str]:
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(review_store, "k" * 40), host="127.0.0.1", port=port, log_level="warning"
    )
    srv = uvicorn.Server(config)
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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium for the module: starting Playwright's driver and the browser was most of each
    test's cost. Every test still gets a new browser context (its own cookies and storage, ``page``)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright; it is in [dev])")
    if not CHROMIUM.is_file():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(server: str, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.dialogs = []  # every dialog a page opens (an executed payload would open one)
    tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
    tab.base = server
    yield tab
    context.close()


def _login(page: Any) -> None:
    page.goto(page.base + "/login")
    page.fill("input[name=username]", "ana")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(page.base + "/")


def _count(page: Any) -> int:
    return int(page.text_content("#queue-count"))


def test_login_filter_approve_edit_and_the_queue_shrinks(page: Any, review_store: CatalogStore) -> None:
    page.goto(page.base + "/")
    assert page.url == page.base + "/login"  # no session: redirected
    _login(page)
    assert _count(page) == 4
    page.screenshot(path=str(ARTIFACTS / "queue.png"), full_page=True)

    page.select_option("select[name=category]", "grocery")
    page.click("#filters button[type=submit]")
    assert "category=grocery" in page.url and _count(page) == 3

    page.click("a.item-link:text('G2')")
    assert page.text_content("#candidate-value").strip() == "vanilla"
    assert page.text_content("section.evidence blockquote") == "Flavor: Vanilla"  # the source text
    assert page.text_content("mark") == "Vanilla"  # the quote highlighted inside it
    page.screenshot(path=str(ARTIFACTS / "item.png"), full_page=True)
    with page.expect_navigation():
        page.keyboard.press("a")  # approve by keyboard: on to the next grocery item
    assert "category=grocery" in page.url and f"/items/{item_id(review_store, 'G2')}?" not in page.url
    g2 = next(i for i in review_store.review_items(None) if i["sku_id"] == "G2")
    assert (g2["status"], g2["reviewer"]) == ("approved", "ana")

    page.goto(f"{page.base}/items/{item_id(review_store, 'G1')}")
    page.fill("#edit-value", "vegan, gluten_free")
    page.fill("#comment", "checked the pack")
    with page.expect_navigation():
        page.click("#edit")
    published = {(r["sku_id"], r["attribute"]): r for r in review_store.table("published_values")}
    assert published["G2", "flavor"]["value"] == "vanilla"
    assert published["G1", "dietary_labels"]["value"] == ["vegan", "gluten_free"]
    assert published["G1", "dietary_labels"]["set_by"] == "reviewer:ana"
    assert [r["action"] for r in review_store.table("audit_log")] == ["approve", "approve"]

    page.goto(page.base + "/")
    assert _count(page) == 2
    page.screenshot(path=str(ARTIFACTS / "queue-after.png"), full_page=True)
    assert page.dialogs == []


def test_script_and_onerror_payloads_are_shown_as_text(page: Any, review_store: CatalogStore) -> None:
    _login(page)
    page.goto(f"{page.base}/items/{item_id(review_store, 'X1')}")
    page.wait_for_load_state("load")
    page.wait_for_timeout(300)  # let any (wrongly) injected script or image error run
    page.screenshot(path=str(ARTIFACTS / "hostile-item.png"), full_page=True)
    assert page.dialogs == []
    mark = page.text_content("section.evidence mark")
    assert "<script>alert('xss')</script>" in mark and "<img src=x onerror=alert(1)>" in mark
    assert page.locator("section.evidence script, section.evidence img").count() == 0
    assert page.locator("a[href^='javascript:']").count() == 0


def test_without_a_session_or_csrf_token_nothing_is_written(page: Any, review_store: CatalogStore) -> None:
    g1 = item_id(review_store, "G1")
    anonymous = page.request.post(f"{page.base}/items/{g1}/decide", form={"decision": "approve"})
    assert anonymous.status == 401
    _login(page)  # the page's cookies now hold a valid session
    forged = page.request.post(f"{page.base}/items/{g1}/decide", form={"decision": "approve"})
    assert forged.status == 403
    assert all(i["status"] == "open" for i in review_store.review_items(None))
    assert review_store.table("audit_log") == []


def test_a_cookie_replayed_after_logout_reads_and_decides_nothing(
    page: Any, review_store: CatalogStore
) -> None:
    """Issue 24: the browser logs in, keeps its cookies, logs out with the page's button, then puts the
    saved cookies back — the queue redirects to /login and a decision POST with the old token gets 401."""
    _login(page)
    saved = page.context.cookies()
    g1 = item_id(review_store, "G1")
    page.goto(f"{page.base}/items/{g1}")
    token = page.get_attribute("input[name=csrf_token]", "value")
    with page.expect_navigation():
        page.click("form[action='/logout'] button[type=submit]")
    assert page.url == page.base + "/login"
    page.context.clear_cookies()
    page.context.add_cookies(saved)
    page.goto(page.base + "/")
    assert page.url == page.base + "/login"  # the replayed session is gone on the server
    page.context.clear_cookies()
    page.context.add_cookies(saved)
    replay = page.request.post(
        f"{page.base}/items/{g1}/decide", form={"csrf_token": token, "decision": "approve"}
    )
    assert replay.status == 401
    assert all(i["status"] == "open" for i in review_store.review_items(None))
    assert review_store.table("audit_log") == [] and review_store.table("published_values") == []
    assert page.dialogs == []
