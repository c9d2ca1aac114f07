"""CSRF protection: a synchronizer token kept in the (signed) session.

The first page a browser gets stores ``secrets.token_urlsafe(32)`` in its session; every form carries it
in a hidden ``csrf_token`` field and every POST is refused (403) unless the field equals the session's
token (``hmac.compare_digest``). The session cookie is signed (Starlette's SessionMiddleware,
itsdangerous) and ``SameSite=Strict``, so another site can neither read nor forge the token. This is the
OWASP synchronizer-token pattern; it needs no extra package (starlette-csrf implements the cookie
double-submit variant for JSON APIs, and a form page already has a session to keep the token in).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import MutableMapping
from typing import Any

SESSION_KEY = "csrf"
FIELD = "csrf_token"


def csrf_token(session: MutableMapping[str, Any]) -> str:
    """The session's token (created on first use)."""
    token = session.get(SESSION_KEY)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        session[SESSION_KEY] = token
    return token


def csrf_ok(session: MutableMapping[str, Any], submitted: object) -> bool:
    """True when ``submitted`` equals the session's token (constant-time comparison)."""
    token = session.get(SESSION_KEY)
    if not isinstance(token, str) or not isinstance(submitted, str) or not submitted:
        return False
    return hmac.compare_digest(token.encode(), submitted.encode())
