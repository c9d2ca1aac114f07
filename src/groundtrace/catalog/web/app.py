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

Headers on every response: a Content-Security-Policy without inline scripts or styles (the keyboard
shortcuts are ``/static/review.js``), ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``,
``Referrer-Policy: no-referrer``. Templates are autoescaped; no untrusted text is marked safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.sessions import SessionMiddleware

from groundtrace.catalog.store import CatalogStore, StoreError
from groundtrace.catalog.templates import TemplateSet, load_templates
from groundtrace.catalog.web.auth import LoginLimiter, verify_password
from groundtrace.catalog.web.csrf import FIELD, csrf_ok, csrf_token
from groundtrace.catalog.web.queue import FACETS, Filters, item_context, parse_value, queue_view

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


def _reviewer(request: Request) -> str | None:
    """The session's reviewer while the account exists and is active."""
    name = request.session.get("reviewer")
    if isinstance(name, str) and _state(request).store.reviewer_hash(name) is not None:
        return name
    return None


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    context.update(csrf=csrf_token(request.session), field=FIELD, reviewer=_reviewer(request))
    return _state(request).pages.TemplateResponse(request, name, context, status_code=status)


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
    name = str(form.get("username") or "")[:200]
    password = str(form.get("password") or "")[:1000]
    keys = (f"ip:{request.client.host if request.client else '?'}", f"user:{name}")
    if state.limiter.blocked(*keys):
        return _render(request, "login.html", 429, error="Too many failed logins; wait a few minutes.")
    if not verify_password(state.store.reviewer_hash(name), password):
        state.limiter.failed(*keys)
        return _render(request, "login.html", 401, error="Unknown name or wrong password.")
    state.limiter.succeeded(*keys)
    request.session.clear()  # a fresh session (and CSRF token) after login
    request.session["reviewer"] = name
    return RedirectResponse("/", status_code=303)


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await request.form()
    if not csrf_ok(request.session, form.get(FIELD)):
        return Response("invalid CSRF token", status_code=403)
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
        multi = bool(current and isinstance(current["item"]["value"], list))
        value = parse_value(str(form.get("value") or "")[:MAX_FIELD], multi)
        if value is None:
            return _render(request, "message.html", 400, message="An edit needs the corrected value.")
    comment = str(form.get("comment") or "")[:MAX_FIELD]
    try:
        state.store.decide_review(item_id, reviewer=name, decision=decision, value=value, comment=comment)
    except StoreError as exc:
        return _render(request, "message.html", 409, message=str(exc))
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
        limiter=limiter or LoginLimiter(),
        templates=templates or load_templates(),
        pages=Jinja2Templates(directory=str(HERE / "templates")),  # autoescape on for .html
    )
    app.include_router(router)
    return app
