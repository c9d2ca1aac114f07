"""``json.dumps(data, indent=2, ensure_ascii=False, default=str, allow_nan=False)`` in pieces, faster.

The standard library encodes indented JSON with its pure-Python generator encoder (its C encoder only
serves ``indent=None``): one generator frame and one yielded string per value. A 10k-dialogue
``scores.json`` (a million numbers) took most of a second that way. :func:`write_indented_json` gives
the same text — the same characters, key order and number forms: strings through the standard library's
own ``encode_basestring``, numbers through ``int.__repr__``/``float.__repr__`` as ``json`` does — from
plain recursive functions, in pieces of about ``piece_chars`` characters (the caller writes them as they
come instead of holding the whole text).

Same rules as ``json.JSONEncoder(indent=2, ensure_ascii=False, default=str, allow_nan=False)``: ``str``,
``None``, ``bool``, ``int`` and ``float`` (and their subclasses) are values in that order of tests,
``list``/``tuple`` arrays, ``dict`` objects whose keys are ``str``, ``float``, ``bool``, ``None`` or
``int`` (anything else: ``TypeError``); any other object is written as ``str(obj)``. NaN and infinities
raise ``ValueError`` and a container inside itself raises ``ValueError("Circular reference detected")``,
with the standard library's messages. ``tests/core/test_indented_json.py`` checks the text against
``json.dumps`` (hypothesis).
"""

from __future__ import annotations

import json.encoder
import math
from collections.abc import Callable
from typing import Any

_encode_str: Callable[[str], str] = json.encoder.encode_basestring  # the C version when available
_float_repr = float.__repr__
_int_repr = int.__repr__
_isfinite = math.isfinite
INDENT = "  "


def _float(value: float) -> str:
    if not _isfinite(value):
        raise ValueError("Out of range float values are not JSON compliant: " + repr(value))
    return _float_repr(value)


def _key(key: Any) -> str:
    """An object key as text (before quoting), as ``json`` converts it."""
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return _int_repr(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


class _Writer:
    def __init__(self, sink: Callable[[str], Any], piece_chars: int) -> None:
        self.out: list[str] = []
        self.blocks: list[str] = []
        self.size = 0
        self.sink = sink
        self.piece_chars = piece_chars
        self.keys: dict[tuple[str, int], str] = {}
        self.open: set[int] = set()  # ids of the containers being written (circular references)

    def _cut(self) -> None:
        """Every 4096 chunks, join them into a block; hand the blocks to ``sink`` as one piece once they
        reach ``piece_chars`` characters."""
        out = self.out
        if len(out) >= 4096:
            block = "".join(out)
            out.clear()
            self.blocks.append(block)
            self.size += len(block)
            if self.size >= self.piece_chars:
                self.flush()

    def flush(self) -> None:
        self.blocks.append("".join(self.out))
        self.out.clear()
        self.sink("".join(self.blocks))
        self.blocks.clear()
        self.size = 0

    def value(self, value: Any, level: int) -> None:
        out = self.out
        if isinstance(value, str):
            out.append(_encode_str(value))
        elif value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        elif isinstance(value, int):
            out.append(_int_repr(value))
        elif isinstance(value, float):
            out.append(_float(value))
        elif isinstance(value, (list, tuple)):
            self.array(value, level)
        elif isinstance(value, dict):
            self.object(value, level)
        else:
            self.value(str(value), level)

    def _enter(self, container: Any) -> int:
        marker = id(container)
        if marker in self.open:
            raise ValueError("Circular reference detected")
        self.open.add(marker)
        return marker

    def array(self, items: list[Any] | tuple[Any, ...], level: int) -> None:
        out = self.out
        if not items:
            out.append("[]")
            return
        marker = self._enter(items)
        newline = "\n" + INDENT * (level + 1)
        out.append("[" + newline)
        separator = "," + newline
        first = True
        for item in items:
            if first:
                first = False
            else:
                out.append(separator)
            if type(item) is float and _isfinite(item):
                out.append(_float_repr(item))
            else:
                self.value(item, level + 1)
            self._cut()
        out.append("\n" + INDENT * level + "]")
        self.open.discard(marker)

    def object(self, mapping: dict[Any, Any], level: int) -> None:
        out = self.out
        if not mapping:
            out.append("{}")
            return
        marker = self._enter(mapping)
        keys = self.keys
        newline = "\n" + INDENT * (level + 1)
        out.append("{")
        first = True
        for key, value in mapping.items():
            if type(key) is not str:
                key = _key(key)
            prefix = keys.get((key, level))
            if prefix is None:
                prefix = keys[(key, level)] = "," + newline + _encode_str(key) + ": "
            out.append(prefix[1:] if first else prefix)
            first = False
            if type(value) is float and _isfinite(value):
                out.append(_float_repr(value))
            else:
                self.value(value, level + 1)
            self._cut()
        out.append("\n" + INDENT * level + "}")
        self.open.discard(marker)


def write_indented_json(data: Any, sink: Callable[[str], Any], piece_chars: int = 1 << 20) -> None:
    """Give ``sink`` the text of ``json.dumps(data, indent=2, ensure_ascii=False, default=str,
    allow_nan=False)`` in pieces of about ``piece_chars`` characters, as it is encoded (the last piece
    may be shorter or empty; their concatenation is the text).

    Errors (``ValueError``, ``TypeError``) are raised where ``json.dumps`` raises them, possibly after
    some pieces were given.
    """
    writer = _Writer(sink, piece_chars)
    writer.value(data, 0)
    writer.flush()


def indented_json(data: Any) -> str:
    """The whole text of :func:`write_indented_json` (``json.dumps(data, indent=2, ...)``)."""
    pieces: list[str] = []
    write_indented_json(data, pieces.append)
    return "".join(pieces)
