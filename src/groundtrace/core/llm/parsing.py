"""Find the JSON object in a model's answer text.

Contract of :func:`extract_json_object`:

1. If the text contains a fenced block (```` ```json ... ``` ```` or plain ```` ``` ````), the first
   block's body is searched first (an unclosed fence runs to the end of the text); when it holds no
   object the whole text is searched. A "fence" that opens inside the first complete object of the
   whole text is backticks inside a JSON string, not Markdown: that object is the answer.
2. The answer is the first ``{`` at which a complete JSON value decodes to an object (``dict``): that is
   the outermost object. ``{`` characters *inside* a failed attempt (before the position where decoding
   failed) are never tried, so a truncated outer object is an error — a nested fragment of it is not
   mistaken for the answer.
3. No object → :class:`JSONExtractionError` (a ``ValueError``) whose message says why.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder()


class JSONExtractionError(ValueError):
    """The text holds no complete JSON object."""


def strip_fences(text: str) -> str:
    """Body of the first Markdown code fence in ``text``, or ``text`` unchanged when there is none."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def extract_json_object(text: str) -> dict[str, Any]:
    """The outermost JSON object in ``text`` (see module docstring)."""
    fence = _FENCE.search(text)
    if fence is None:
        return _first_object(text)[0]
    try:
        whole, start, end = _first_object(text)
    except JSONExtractionError:
        whole = None
    if whole is not None and start < fence.start() < end:  # backticks inside a JSON string
        return whole
    try:
        return _first_object(fence.group(1))[0]
    except JSONExtractionError:
        return (
            whole if whole is not None else _first_object(text)[0]
        )  # the latter raises the whole text's error


def _first_object(body: str) -> tuple[dict[str, Any], int, int]:
    """The first complete object of ``body`` (rule 2) with its ``[start, end)`` span."""
    pos = body.find("{")
    if pos < 0:
        raise JSONExtractionError("the answer contains no JSON object (no '{' found)")
    first_error: str | None = None
    while pos >= 0:
        try:
            value, _end = _DECODER.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            first_error = first_error or f"invalid JSON: {exc.msg} at char {exc.pos}"
            pos = body.find("{", max(exc.pos, pos + 1))
            continue
        if isinstance(value, dict):
            return value, pos, _end
        pos = body.find("{", pos + 1)  # pragma: no cover - raw_decode at '{' always yields a dict
    raise JSONExtractionError(first_error or "the answer contains no complete JSON object")
