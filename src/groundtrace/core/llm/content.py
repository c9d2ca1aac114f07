"""Reading message content that is a string or a list of OpenAI content parts.

A chat message's ``content`` (see :class:`~groundtrace.core.llm.base.ChatMessage`) is either a string or a
list of parts ``{"type": "text", "text": ...}`` / ``{"type": "image_url", "image_url": {"url", "detail"?}}``.
These helpers take the plain wire dicts (what :func:`~groundtrace.core.llm.engine.normalise_messages`
returns) and never fail on a string, so string-only callers keep working unchanged.

Token estimate (:func:`content_tokens`): the text of every text part is counted with the given counter
(default :func:`groundtrace.core.evidence.tokens.count_tokens`); an image counts a fixed
:data:`IMAGE_TOKEN_ESTIMATE` = 765 tokens (OpenAI's price of a high-detail 1024×1024 image: 85 base + 4
tiles × 170), or :data:`IMAGE_TOKEN_ESTIMATE_LOW` = 85 with ``detail: "low"``. The image's real size is not
read: the estimate is for budgets, the server's reported usage is what the ledger records.

Cache key form (:func:`key_content`): a ``data:`` image URL is replaced by ``"data-sha256:<hex>"``, the
sha256 of the whole URL string (so the MIME type and every byte of the image are in the key, but a key
stays small); http(s) URLs stay as they are (the key does not see a change of the remote file).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from groundtrace.core.evidence.tokens import count_tokens

IMAGE_TOKEN_ESTIMATE = 765
IMAGE_TOKEN_ESTIMATE_LOW = 85
DATA_URL_KEY_PREFIX = "data-sha256:"


def _parts(content: Any) -> list[Mapping[str, Any]]:
    return [part for part in content if isinstance(part, Mapping)] if isinstance(content, list) else []


def content_text(content: str | list[Any]) -> str:
    """The text of ``content``: the string itself, or the text parts joined by newlines (images dropped)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in _parts(content) if p.get("type") == "text")


def content_images(content: str | list[Any]) -> list[Mapping[str, Any]]:
    """The ``image_url`` objects (``{"url", "detail"?}``) of ``content``, in order (none for a string)."""
    return [p.get("image_url") or {} for p in _parts(content) if p.get("type") == "image_url"]


def has_images(messages: Iterable[Mapping[str, Any]]) -> bool:
    """Whether any message carries an image part."""
    return any(content_images(m.get("content", "")) for m in messages)


def image_tokens(image: Mapping[str, Any]) -> int:
    """Fixed token estimate of one image (see module docstring)."""
    return IMAGE_TOKEN_ESTIMATE_LOW if image.get("detail") == "low" else IMAGE_TOKEN_ESTIMATE


def content_tokens(content: str | list[Any], count: Callable[[str], int] = count_tokens) -> int:
    """Estimated tokens of ``content``: ``count`` of each text part plus a fixed estimate per image."""
    if isinstance(content, str):
        return count(content)
    texts = sum(count(str(p.get("text", ""))) for p in _parts(content) if p.get("type") == "text")
    return texts + sum(image_tokens(image) for image in content_images(content))


def messages_tokens(
    messages: Iterable[Mapping[str, Any]], count: Callable[[str], int] = count_tokens, per_message: int = 0
) -> int:
    """Sum of :func:`content_tokens` over ``messages``, plus ``per_message`` overhead for each."""
    return sum(content_tokens(m.get("content", ""), count) + per_message for m in messages)


def key_content(content: str | list[Any]) -> str | list[Any]:
    """``content`` as it enters a cache key: data-URL images replaced by their sha256 (module docstring)."""
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for part in content:
        image = (
            part.get("image_url") if isinstance(part, Mapping) and part.get("type") == "image_url" else None
        )
        url = image.get("url") if isinstance(image, Mapping) else None
        if isinstance(url, str) and url.startswith("data:"):
            digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
            part = {**part, "image_url": {**image, "url": DATA_URL_KEY_PREFIX + digest}}
        out.append(part)
    return out


def key_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with :func:`key_content` applied (string messages are returned equal)."""
    return [{**m, "content": key_content(m.get("content", ""))} for m in messages]
