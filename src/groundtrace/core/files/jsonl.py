"""The one JSONL reader: one JSON value per line, and one bad line costs that line and nothing more.

:func:`iter_jsonl(path) <iter_jsonl>` yields ``(line, value, None)`` for each good line and ``(line, None,
LineError)`` for each bad one, in file order (1-based line numbers; lines end at ``\\n`` only, as JSONL
says; blank lines — ASCII whitespace only — are skipped; a UTF-8 byte-order mark opening the file is
dropped). A bad line is:

* not valid UTF-8 (``core.files.text.utf8_error_message``);
* longer than ``max_line_bytes`` (default :data:`MAX_LINE_BYTES`) — read in bounded chunks and skipped,
  never held in memory whole;
* nested deeper than ``max_depth`` (default :data:`MAX_JSON_DEPTH`) arrays/objects — refused before
  ``json.loads`` (which would raise ``RecursionError``);
* not JSON (``invalid JSON: <reason> (column N)``);
* with ``objects_only``, a value that is not an object.

:func:`read_jsonl_models` validates each value into a pydantic model and returns the models and the
problems (:mod:`groundtrace.core.files.validation` wording). Opening a missing file raises ``OSError``.
"""

from __future__ import annotations

import json
import os
import re
from array import array
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from groundtrace.core.files.errors import LineError
from groundtrace.core.files.text import BOM, utf8_error_message
from groundtrace.core.files.validation import validation_message

M = TypeVar("M", bound=BaseModel)

#: longest line read (bytes, without its newline)
MAX_LINE_BYTES = 8 << 20
#: deepest nesting of arrays/objects accepted in one line
MAX_JSON_DEPTH = 100
_CHUNK = 1 << 16


#: a JSON string with its escapes, or an unterminated one running to the end of the text (a trailing
#: lone backslash included): every match succeeds without backtracking, so the cut is linear
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)  # unrolled: runs at C speed
#: every byte except the four brackets, for ``bytes.translate(None, delete=...)``
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
#: opening bracket -> 0x01 (+1 as int8), closing -> 0xff (-1 as int8)
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def json_depth(raw: bytes) -> int:
    """Deepest nesting of ``[``/``{`` in the JSON text ``raw``; brackets inside strings do not count.

    Done at C speed, as hostile-input checks must cost nearly nothing on every line: complete strings
    are cut out with one regular expression, left to right as a JSON lexer reads them (an unterminated
    string runs to the end of the text), the rest is reduced to its brackets with ``bytes.translate``,
    and the depth is the maximum of the running sum of ``+1`` per opening and ``-1`` per closing bracket
    (``itertools.accumulate``; no numpy, whose import would cost every CLI start). Equal to a
    character-by-character scan (``tests/core/files/test_jsonl.py`` checks it on arbitrary bytes)."""
    if b"[" not in raw and b"{" not in raw:
        return 0
    structure = _STRING.sub(b"", raw) if b'"' in raw else raw
    brackets = structure.translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = array("b", brackets.translate(_STEPS))  # +1 per opening, -1 per closing (signed bytes)
    return max(0, max(accumulate(steps)))


def _bounded_lines(handle: BinaryIO, limit: int) -> Iterator[tuple[bytes | None, int]]:
    """``(line, size)`` per ``\\n``-ended line; ``(None, size)`` for a line over ``limit`` bytes (its
    rest is read in chunks and dropped)."""
    while True:
        raw = handle.readline(limit + 2)  # room for the line and its \r\n
        if not raw:
            return
        ending = 2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0
        if len(raw) - ending <= limit:
            yield raw, len(raw)
            continue
        size = len(raw)
        while not raw.endswith(b"\n"):
            raw = handle.readline(_CHUNK)
            if not raw:
                break
            size += len(raw)
        yield None, size


def iter_lines(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, bytes | None, LineError | None]]:
    """The raw lines :func:`iter_jsonl` parses: ``(line, raw, None)`` per non-blank line (its ``\\n``
    kept, a UTF-8 byte-order mark opening the file dropped) and ``(line, None, LineError)`` per line over
    ``max_line_bytes``. For readers with their own decoder; :func:`decode_line` is this module's."""
    name = str(path)
    pending = 0
    with open(path, "rb") as handle:
        for number, (raw, size) in enumerate(_bounded_lines(handle, max_line_bytes), start=1):
            pending += size
            if on_bytes is not None and pending >= 1 << 20:
                on_bytes(pending)
                pending = 0
            if raw is None:
                message = f"line is {size} bytes, over the {max_line_bytes}-byte limit; skipped"
                yield number, None, LineError(file=name, line=number, message=message)
                continue
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            if raw.strip():
                yield number, raw, None
    if on_bytes is not None and pending:
        on_bytes(pending)


def iter_jsonl(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    objects_only: bool = False,
    prefilter: Callable[[bytes], bool] | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, Any, LineError | None]]:
    """``(line, value, None)`` per good line, ``(line, None, LineError)`` per bad one (module docstring).

    ``prefilter(raw) -> False`` skips a line unparsed (never reported); ``on_bytes(n)`` is called with the
    bytes consumed, about every MiB, for a progress bar."""
    name = str(path)
    for number, raw, error in iter_lines(path, max_line_bytes=max_line_bytes, on_bytes=on_bytes):
        if raw is None:
            yield number, None, error
            continue
        if prefilter is not None and not prefilter(raw):
            continue
        value, problem = decode_line(raw, max_depth=max_depth, objects_only=objects_only)
        if problem is not None:
            yield number, None, LineError(file=name, line=number, message=problem)
        else:
            yield number, value, None


def decode_line(
    raw: bytes, *, max_depth: int = MAX_JSON_DEPTH, objects_only: bool = False
) -> tuple[Any, str | None]:
    """``(value, None)`` for one good JSONL line, ``(None, message)`` for a bad one (module docstring:
    UTF-8, depth, JSON, ``objects_only``); the line's ``\\r\\n`` / ``\\n`` is ignored."""
    try:
        text = raw.decode("utf-8")  # explicit: json.loads(bytes) guesses UTF-16 from \xff\xfe
    except UnicodeDecodeError as exc:
        return None, utf8_error_message(raw, exc)
    if raw.count(b"[") + raw.count(b"{") > max_depth and json_depth(raw) > max_depth:
        return None, f"JSON nested deeper than {max_depth} levels"
    try:
        value = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} (column {exc.colno})"
    except RecursionError:  # only if max_depth is set above what the interpreter allows
        return None, "JSON nested too deeply to parse"
    if objects_only and not isinstance(value, dict):
        return None, f"expected a JSON object, got {json_type_name(value)}"
    return value, None


def json_type_name(value: Any) -> str:
    """The JSON type of a decoded value, for messages: ``a boolean``, ``an integer``, ``a number``,
    ``a string``, ``an array``, ``an object`` or ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def iter_jsonl_models(
    path: str | os.PathLike[str], model: type[M], *, max_line_bytes: int = MAX_LINE_BYTES, limit: int = 1
) -> Iterator[tuple[int, M | None, LineError | None]]:
    """:func:`iter_jsonl` validated into ``model``: ``(line, model, None)`` or ``(line, None, LineError)``
    where an invalid record reads ``invalid <Model>: field.path: message``."""
    name = str(path)
    for number, value, error in iter_jsonl(path, max_line_bytes=max_line_bytes):
        if error is not None:
            yield number, None, error
            continue
        try:
            yield number, model.model_validate(value), None
        except ValidationError as exc:
            message = f"invalid {model.__name__}: {validation_message(exc, model=model, limit=limit)}"
            yield number, None, LineError(file=name, line=number, message=message)


def read_jsonl_models(
    path: str | os.PathLike[str], model: type[M], *, max_line_bytes: int = MAX_LINE_BYTES
) -> tuple[list[M], list[LineError]]:
    """All valid ``model`` records of ``path`` and one :class:`LineError` per bad line."""
    items: list[M] = []
    problems: list[LineError] = []
    for _number, item, error in iter_jsonl_models(path, model, max_line_bytes=max_line_bytes):
        if error is not None:
            problems.append(error)
        elif item is not None:
            items.append(item)
    return items, problems
