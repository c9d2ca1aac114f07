"""The review page's FastAPI application: :func:`create_app` (served by ``groundtrace catalog serve``).

Routes (every page but ``/login`` and ``/static`` needs a logged-in reviewer: a GET without a session is
redirected to ``/login`` (303), a POST gets 401; every POST needs the session's CSRF token, else 403):

* ``GET /`` — the open REVIEW items with filters and counts (:mod:`.queue`);
* ``GET /items/{id}`` — one item: SKU, candidate value, the Judge's verdict and reasons, evidence
  highlighted inside its source text, approve / reject / edit forms;
* ``POST /items/{id}/decide`` — ``decision`` = approve | reject | edit (``value``), ``comment``: written
  with ``CatalogStore.decide_review`` (published value + audit row with the reviewer and time), then the
  next open item of the same filters;
* ``GET|POST /login``, ``POST /logout``.

Sessions are server-side (:mod:`groundtrace.catalog.store.access`): login stores a new session in the
store and the signed cookie carries only its id (and the CSRF token); every page looks the id up, and
logout deletes it — the same cookie replayed afterwards is treated as no session (303 to /login, 401 for
a POST). Login: at most ``LoginLimiter.max_failures`` failures per client address and per account in the
window, kept in the store (429 with ``Retry-After``); a success resets no counter; the argon2 check runs
on a worker thread. Decisions: exactly once (``CatalogStore.decide_review``); the loser of a race gets
409 and nothing is published for it; an edited value must fit the attribute's template (:mod:`.validate`,
422 with the reason).

Headers on every response: a Content-Security-Policy without inline scripts or styles (the keyboard
shortcuts are ``/static/review.js``), ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``,
``Referrer-Policy: no-referrer``. Templates are autoescaped; no untrusted text is marked safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.concurrency import run_in_threadpool
from starlette.middleware.sessions import SessionMiddleware

from groundtrace.catalog.model import AttributeSpec
from groundtrace.catalog.store import CatalogStore, ReviewConflict, StoreError
from groundtrace.catalog.store.access import end_session, open_session, session_reviewer
from groundtrace.catalog.store.clean import clean_text
from groundtrace.catalog.templates import TemplateSet, load_templates
from groundtrace.catalog.web.auth import LoginLimiter, verify_password
from groundtrace.catalog.web.csrf import FIELD, csrf_ok, csrf_token
from groundtrace.catalog.web.queue import FACETS, Filters, item_context, queue_view
from groundtrace.catalog.web.validate import check_edit

HERE = Path(__file__).resolve().parent
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_FIELD = 10_000  # characters of a submitted value or comment


def _filters(data: Any) -> Filters:
    return Filters(**{name: str(data.get(name) or "")[:300] for name in FACETS})


@dataclass
class ReviewState:
    """What every route needs (``app.state.review``)."""

    store: CatalogStore
    limiter: LoginLimiter
    templates: TemplateSet
    pages: Jinja2Templates


router = APIRouter()


def _state(request: Request) -> ReviewState:
    return request.app.state.review


SESSION_KEY = "sid"  # the cookie's server-side session id


def _reviewer(request: Request) -> str | None:
    """The reviewer of the cookie's live server-side session while the account exists and is active."""
    store = _state(request).store
    name = session_reviewer(store, request.session.get(SESSION_KEY))
    if name is not None and store.reviewer_hash(name) is not None:
        return name
    return None


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.update(csrf=csrf_token(request.session), field=FIELD, reviewer=_reviewer(request))
    return _state(request).pages.TemplateResponse(request, name, context, status_code=status)


def _spec(templates: TemplateSet, category: str, attribute: str) -> AttributeSpec | None:
    """The template spec of an item's attribute (None when its category or attribute has none)."""
    template = templates.for_category(category)
    if template is None:
        return None
    try:
        return template.attribute(attribute)
    except KeyError:
        return None


def _to_login() -> RedirectResponse:
    return RedirectResponse("/login", status_code=303)


def _next_open(state: ReviewState, filters: Filters, after: int) -> int | None:
    """The next open item of the filtered queue after ``after`` (wrapping to the first), or None."""
    ids = [i["id"] for i in queue_view(state.store, filters, state.templates).items if i["id"] != after]
    later = [i for i in ids if i > after]
    return (later or ids or [None])[0]


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request) -> Response:
    return _render(request, "login.html", error="")


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request) -> Response:
    state = _state(request)
    form = await request.form()
    if not csrf_ok(request.session, form.get(FIELD)):
        return _render(request, "login.html", 403, error="The form expired; please try again.")
    name = clean_text(str(form.get("username") or ""))[:200]
    password = str(form.get("password") or "")[:1000]
    # request.client is the socket peer unless `catalog serve --forwarded-allow-ips` trusts a proxy
    keys = (f"ip:{request.client.host if request.client else '?'}", f"user:{name}")
    wait = await run_in_threadpool(state.limiter.retry_after, *keys)
    if wait is not None:
        response = _render(request, "login.html", 429, error="Too many failed logins; wait a few minutes.")
        response.headers["Retry-After"] = str(max(1, math.ceil(wait)))
        return response
    stored = await run_in_threadpool(state.store.reviewer_hash, name)
    if not await run_in_threadpool(verify_password, stored, password):  # argon2 off the event loop
        await run_in_threadpool(state.limiter.failed, *keys)
        return _render(request, "login.html", 401, error="Unknown name or wrong password.")
    # no counter is reset: a success must not clear this address's failures against other accounts
    old = request.session.get(SESSION_KEY)
    if old:
        await run_in_threadpool(end_session, state.store, old)
    request.session.clear()  # a fresh session (and CSRF token) after login
    request.session[SESSION_KEY] = await run_in_threadpool(open_session, state.store, name)
    return RedirectResponse("/", status_code=303)


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await request.form()
    if not csrf_ok(request.session, form.get(FIELD)):
        return Response("invalid CSRF token", status_code=403)
    await run_in_threadpool(end_session, _state(request).store, request.session.get(SESSION_KEY))
    request.session.clear()
    return _to_login()


@router.get("/", response_class=HTMLResponse)
async def queue(request: Request) -> Response:
    if _reviewer(request) is None:
        return _to_login()
    state = _state(request)
    filters = _filters(request.query_params)
    view = queue_view(state.store, filters, state.templates)
    return _render(request, "queue.html", view=view, filters=filters, query=urlencode(filters.as_query()))


@router.get("/items/{item_id}", response_class=HTMLResponse)
async def item(request: Request, item_id: int) -> Response:
    if _reviewer(request) is None:
        return _to_login()
    state = _state(request)
    context = item_context(state.store, item_id)
    if context is None:
        return _render(request, "message.html", 404, message=f"There is no review item {item_id}.")
    filters = _filters(request.query_params)
    return _render(
        request,
        "item.html",
        **context,
        filters=filters,
        query=urlencode(filters.as_query()),
        next_id=_next_open(state, filters, item_id),
        spec=_spec(state.templates, context["item"]["category"], context["item"]["attribute"]),
    )


@router.post("/items/{item_id}/decide")
async def decide(request: Request, item_id: int) -> Response:
    name = _reviewer(request)
    if name is None:
        return Response("login required", status_code=401)
    form = await request.form()
    if not csrf_ok(request.session, form.get(FIELD)):
        return Response("invalid CSRF token", status_code=403)
    state = _state(request)
    decision = str(form.get("decision") or "")
    if decision not in ("approve", "reject", "edit"):
        return _render(request, "message.html", 400, message="Unknown decision.")
    value = None
    if decision == "edit":
        current = item_context(state.store, item_id)
        if current is None:
            return _render(request, "message.html", 404, message=f"There is no review item {item_id}.")
        checked = check_edit(
            str(form.get("value") or "")[:MAX_FIELD],
            _spec(state.templates, current["item"]["category"], current["item"]["attribute"]),
            isinstance(current["item"]["value"], list),
        )
        if checked.error is not None:
            return _render(request, "message.html", 422, message=f"Edit refused: {checked.error}")
        value = checked.value
    comment = str(form.get("comment") or "")[:MAX_FIELD]
    try:
        await run_in_threadpool(
            lambda: state.store.decide_review(
                item_id, reviewer=name, decision=decision, value=value, comment=comment
            )
        )
    except ReviewConflict as exc:
        return _render(request, "message.html", 409, message=str(exc))
    except StoreError as exc:
        return _render(request, "message.html", 404, message=str(exc))
    filters = _filters(form)
    query = urlencode(filters.as_query())
    nxt = _next_open(state, filters, item_id)
    target = f"/items/{nxt}" if nxt is not None else "/"
    return RedirectResponse(f"{target}?{query}" if query else target, status_code=303)


async def _security_headers(request: Request, call_next: Any) -> Response:
    response = await call_next(request)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def server_options(host: str, port: int, forwarded_allow_ips: str = "") -> dict[str, Any]:
    """uvicorn options of ``catalog serve``. Proxy headers (``X-Forwarded-For`` / ``-Proto``) are trusted
    only from the addresses of ``forwarded_allow_ips`` (comma-separated IPs / networks, ``*`` = any):
    empty (the default) turns uvicorn's proxy-header handling off, so the client address the login limit
    counts is always the socket peer. (uvicorn's own default trusts them from 127.0.0.1 — any local
    process, or a client behind a local proxy that passes the header through, could pick its address.)"""
    allowed = ",".join(part.strip() for part in forwarded_allow_ips.split(",") if part.strip())
    return {
        "host": host,
        "port": port,
        "log_level": "warning",
        "proxy_headers": bool(allowed),
        "forwarded_allow_ips": allowed or None,
    }


def create_app(
    store: CatalogStore,
    secret: str,
    *,
    limiter: LoginLimiter | None = None,
    templates: TemplateSet | None = None,
    https_only: bool = False,
) -> FastAPI:
    """The review application over ``store``; ``secret`` signs the session cookie."""
    app = FastAPI(title="groundtrace review", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret,
        session_cookie="gt_review",
        max_age=8 * 3600,
        same_site="strict",
        https_only=https_only,
    )
    app.middleware("http")(_security_headers)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.state.review = ReviewState(
        store=store,
        limiter=(limiter or LoginLimiter()).bind(store),
        templates=templates or load_templates(),
        pages=Jinja2Templates(directory=str(HERE / "templates")),  # autoescape on for .html
    )
    app.include_router(router)
    return app
