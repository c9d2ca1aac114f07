"""Text every store backend can hold: the cleaning rule applied to every row the store writes.

PostgreSQL ``text``/``varchar`` cannot hold U+0000, and neither PostgreSQL nor SQLite's UTF-8 encoder can
hold a lone surrogate (U+D800–U+DFFF: a JSON ``"\\ud800"`` escape decodes to one); PostgreSQL refuses a
``varchar(n)`` value longer than ``n`` characters (SQLite would keep it). The rule, the same on both
backends, for every string in a row — plain columns and every string (keys included) inside JSON columns:

* every NUL character (U+0000) is removed;
* every surrogate code point is replaced by U+FFFD (the Unicode replacement character);
* a string longer than its column's ``String(n)`` is cut to ``n`` characters — except in a key column
  (``sku_id``, ``attribute``, run name ...), where a cut could merge two records: :func:`key_problem`
  reports such a SKU and the store does not write it.

:func:`clean_text` / :func:`clean_json` apply the rule; :func:`text_problems` describes what it changes in
a record (``title: 1 NUL character removed``) so the batch runner can report it per SKU.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import String, Table

NUL = "\x00"
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
KEY_LIMIT = 255  # schema.ID: sku ids and attribute slugs


def clean_text(text: str) -> str:
    """``text`` with NULs removed and surrogates replaced by U+FFFD (module docstring)."""
    if NUL in text:
        text = text.replace(NUL, "")
    return _SURROGATE.sub(REPLACEMENT, text)


def is_clean(value: Any) -> bool:
    """True when :func:`clean_json` would change nothing in ``value`` — no string (key or value) holds a
    NUL or a surrogate — decided in C: ``json.dumps(value, ensure_ascii=False)`` writes a NUL as the
    escape ``\\u0000`` and keeps a lone surrogate as it is, so a text with neither is clean; any other
    object (a datetime) is checked as its ``str``, which the cleaning never changes. The test can err only
    towards False (a literal backslash + ``u0000`` in a string, a key JSON cannot encode), which sends the
    value to the exact walk; it never calls a dirty value clean."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return False
    return "\\u0000" not in text and _SURROGATE.search(text) is None


def clean_json(value: Any) -> Any:
    """``value`` (JSON-shaped: dict / list / str / number / bool / None) with every string cleaned."""
    if not isinstance(value, str) and is_clean(value):
        return value
    return _clean_json(value)


def _clean_json(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        return {clean_text(k) if isinstance(k, str) else k: _clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_json(v) for v in value]
    return value


def clean_rows(table: Table, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every row cleaned for ``table``: strings by :func:`clean_text`, JSON columns by :func:`clean_json`,
    values of non-key ``String(n)`` columns cut to ``n`` characters. Rows :func:`is_clean` passes — all of
    them at once (one C-encoded check for the batch), else one by one — only have their long strings
    cut."""
    limits = {
        c.name: c.type.length
        for c in table.columns
        if isinstance(c.type, String) and c.type.length and not c.primary_key
    }
    whole = is_clean(list(rows))
    out = []
    for row in rows:
        if whole or is_clean(row):
            clean = dict(row)
            for name, limit in limits.items():
                value = clean.get(name)
                if isinstance(value, str) and len(value) > limit:
                    clean[name] = value[:limit]
            out.append(clean)
            continue
        clean = {}
        for name, value in row.items():
            if isinstance(value, str):
                value = clean_text(value)
                limit = limits.get(name)
                if limit is not None and len(value) > limit:
                    value = value[:limit]
            elif isinstance(value, dict | list):
                value = clean_json(value)
            clean[name] = value
        out.append(clean)
    return out


def text_problems(value: Any, path: str = "") -> list[str]:
    """What :func:`clean_json` changes in ``value``: one ``path: n NUL character(s) removed`` /
    ``path: n lone surrogate(s) replaced by U+FFFD`` line per string it changes (paths like
    ``title``, ``specs.Flavor``, ``images[0]``); a value :func:`is_clean` passes has none."""
    if not path and not isinstance(value, str) and is_clean(value):
        return []
    return _text_problems(value, path)


def _text_problems(value: Any, path: str = "") -> list[str]:
    found: list[str] = []
    if isinstance(value, str):
        nul, sur = value.count(NUL), len(_SURROGATE.findall(value))
        where = path or "value"
        if nul:
            found.append(f"{where}: {nul} NUL character{'s' if nul > 1 else ''} removed")
        if sur:
            found.append(f"{where}: {sur} lone surrogate{'s' if sur > 1 else ''} replaced by U+FFFD")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            label = clean_text(str(key))
            if isinstance(key, str) and clean_text(key) != key:
                found.extend(_text_problems(key, f"{path}.{label} (key)" if path else f"{label} (key)"))
            found.extend(_text_problems(item, f"{path}.{label}" if path else label))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found.extend(_text_problems(item, f"{path}[{i}]"))
    return found


def key_problem(name: str, value: str) -> str | None:
    """Why ``value`` cannot be a store key (``name`` = sku_id / attribute), or None when it can: longer
    than :data:`KEY_LIMIT` characters, or empty once cleaned."""
    cleaned = clean_text(value)
    if len(cleaned) > KEY_LIMIT:
        return f"{name} is {len(cleaned)} characters long (the store keeps at most {KEY_LIMIT}): not stored"
    if not cleaned:
        return f"{name} is empty once NUL characters are removed: not stored"
    return None
