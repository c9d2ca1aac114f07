"""The placeholder grammar of a redacted release: parse and write ``⟦Q:<review>:<start>-<end>[~k]⟧`` texts.

``⟦Q:<review_id>:<start>-<end>⟧`` stands for ``review.text[start:end]`` (code-point offsets);
``⟦Q:<review_id>:<start>-<end>~<k>⟧`` for that slice with edit script ``k`` of ``redaction.json`` applied.
Every literal ``⟦`` of the original text is written ``⟦⟦``; scanning left to right, ``⟦⟦`` is a literal
``⟦``, ``⟦Q:...⟧`` a placeholder, any other ``⟦`` an error (:class:`RedactionError`). The writer
(:mod:`groundtrace.crs.dataset.release`) and the validator's redacted-release checks
(:mod:`groundtrace.crs.dataset.checks.redacted`) both read texts through :func:`split_redacted`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

OPEN, CLOSE = "⟦", "⟧"
PLACEHOLDER_GRAMMAR = (
    "⟦Q:<review_id>:<start>-<end>⟧ or ⟦Q:<review_id>:<start>-<end>~<edit index>⟧; literal ⟦ is ⟦⟦"
)

_PLACEHOLDER = re.compile(r"⟦Q:(?P<rid>[^⟦⟧]+):(?P<start>\d+)-(?P<end>\d+)(?:~(?P<k>\d+))?⟧")

#: what every placeholder starts with (a cheap pre-filter before :func:`split_redacted`)
PLACEHOLDER_MARK = "⟦Q:"


class RedactionError(ValueError):
    """A dialogue cannot be redacted or hydrated safely (bad span, unknown review, malformed placeholder)."""


class Placeholder(BaseModel):
    """A parsed placeholder: review span and optional edit-script index."""

    review_id: str
    start: int
    end: int
    edit: int | None = None


def escape_text(text: str) -> str:
    """Escape literal ``⟦`` as ``⟦⟦``."""
    return text.replace(OPEN, OPEN + OPEN)


def split_redacted(text: str) -> list[str | Placeholder]:
    """Parse a redacted text into literal strings and :class:`Placeholder` objects (inverse of the writer)."""
    parts: list[str | Placeholder] = []
    buf: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != OPEN:
            buf.append(ch)
            i += 1
            continue
        if text.startswith(OPEN + OPEN, i):
            buf.append(OPEN)
            i += 2
            continue
        match = _PLACEHOLDER.match(text, i)
        if match is None:
            raise RedactionError(f"malformed placeholder at character {i}: {text[i : i + 40]!r}")
        if buf:
            parts.append("".join(buf))
            buf = []
        k = match.group("k")
        parts.append(
            Placeholder(
                review_id=match.group("rid"),
                start=int(match.group("start")),
                end=int(match.group("end")),
                edit=None if k is None else int(k),
            )
        )
        i = match.end()
    if buf:
        parts.append("".join(buf))
    return parts


def placeholder_text(p: Placeholder) -> str:
    """The placeholder string of ``p``."""
    suffix = "" if p.edit is None else f"~{p.edit}"
    return f"{OPEN}Q:{p.review_id}:{p.start}-{p.end}{suffix}{CLOSE}"


# -- the public release's grammar: ``[Q:N]`` ------------------------------------------------------------

#: ``[Q:N]`` stands for quote span N (1-based) of the same turn; a literal ``[Q:`` is written ``[Q:=``.
RELEASE_GRAMMAR = (
    "[Q:N] = quote span N (1-based) of the turn's quote_spans; a literal '[Q:' is written '[Q:='"
)
RELEASE_MARK = "[Q:"
_RELEASE_PLACEHOLDER = re.compile(r"\[Q:([1-9][0-9]*)\]")


def escape_release(text: str) -> str:
    """Escape every literal ``[Q:`` of ``text`` as ``[Q:=`` (so it cannot read as a placeholder)."""
    return text.replace(RELEASE_MARK, RELEASE_MARK + "=")


def release_placeholder(n: int) -> str:
    """The placeholder of quote span ``n`` (1-based)."""
    return f"{RELEASE_MARK}{n}]"


def split_release(text: str) -> list[str | int]:
    """Parse a release text into literal strings and span numbers (1-based); inverse of the writer.

    Scanning left to right, ``[Q:=`` is a literal ``[Q:``, ``[Q:<digits>]`` a placeholder, and any other
    ``[Q:`` is an error (:class:`RedactionError`)."""
    parts: list[str | int] = []
    buf: list[str] = []
    i = 0
    while True:
        j = text.find(RELEASE_MARK, i)
        if j < 0:
            buf.append(text[i:])
            break
        buf.append(text[i:j])
        if text.startswith(RELEASE_MARK + "=", j):
            buf.append(RELEASE_MARK)
            i = j + len(RELEASE_MARK) + 1
            continue
        match = _RELEASE_PLACEHOLDER.match(text, j)
        if match is None:
            raise RedactionError(f"malformed placeholder at character {j}: {text[j : j + 20]!r}")
        if any(buf):
            parts.append("".join(buf))
        buf = []
        parts.append(int(match.group(1)))
        i = match.end()
    if any(buf):
        parts.append("".join(buf))
    return parts
