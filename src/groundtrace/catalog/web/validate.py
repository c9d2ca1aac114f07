"""An edited value checked against its attribute's template before it is published.

``check_edit(text, spec, multi)`` → :class:`EditCheck` (``value`` or ``error``):

* the text is split like the page shows list values (comma-separated when the attribute is
  ``multi_valued`` — or, without a template spec, when the item's value is a list); empty items dropped;
* ``enum``: every item must be one of ``allowed_values`` — compared as the Scout's reconciler compares
  them (``core.evidence.normalize.normalize_value``: case, spaces, hyphens and abbreviations ignored) and
  stored as the allowed entry itself (``Gluten-Free`` → ``gluten_free``); any other item is refused and
  named, with the allowed list;
* ``bool``: ``true``/``false`` (also yes/no ...), stored ``"true"``/``"false"``;
* ``number``: a number with an optional unit convertible to the attribute's unit, stored canonically
  (``12 oz`` for unit ``g`` → ``340.2 g``);
* ``string``: any text; control characters (NUL included) other than tab are refused;
* every item at most :data:`MAX_ITEM` characters, at most :data:`MAX_ITEMS` items; a single-valued
  attribute takes one item.

The error is plain text naming the attribute and the offending item (``repr``-quoted, cut to 80
characters); the page shows it autoescaped.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from groundtrace.catalog.model import AttributeSpec
from groundtrace.core.evidence.normalize import normalize_value

MAX_ITEM = 500
MAX_ITEMS = 50


@dataclass(frozen=True)
class EditCheck:
    value: str | list[str] | None = None
    error: str | None = None


def _show(item: str) -> str:
    return repr(item if len(item) <= 80 else item[:77] + "...")


def _bad_chars(item: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cs") and ch != "\t" for ch in item)


def _check_item(item: str, spec: AttributeSpec | None) -> tuple[str | None, str | None]:
    """``(canonical item, None)`` or ``(None, reason)``."""
    name = spec.slug if spec is not None else "this attribute"
    if len(item) > MAX_ITEM:
        return None, f"{name}: a value is longer than {MAX_ITEM} characters"
    if _bad_chars(item):
        return None, f"{name}: {_show(item)} contains control characters"
    if spec is None or spec.type == "string":
        return item, None
    if spec.type == "enum":
        found = normalize_value(item, "enum", None, list(spec.allowed_values))
        if found is None:
            allowed = ", ".join(spec.allowed_values)
            return None, f"{name}: {_show(item)} is not an allowed value (allowed: {allowed})"
        return found, None
    if spec.type == "bool":
        found = normalize_value(item, "bool")
        return (found, None) if found is not None else (None, f"{name}: {_show(item)} is not true or false")
    found = normalize_value(item, "number", spec.unit)
    if found is None:
        unit = f" in {spec.unit} (or a unit convertible to it)" if spec.unit else ""
        return None, f"{name}: {_show(item)} is not a number{unit}"
    return found, None


def check_edit(text: str, spec: AttributeSpec | None, multi: bool) -> EditCheck:
    """The edited value for ``spec`` (module docstring); ``multi`` is used when ``spec`` is None."""
    text = text.strip()
    if not text:
        return EditCheck(error="An edit needs the corrected value.")
    many = spec.multi_valued if spec is not None else multi
    items = [p.strip() for p in text.split(",") if p.strip()] if many else [text]
    if not items:
        return EditCheck(error="An edit needs the corrected value.")
    if len(items) > MAX_ITEMS:
        return EditCheck(error=f"at most {MAX_ITEMS} values")
    out: list[str] = []
    for item in items:
        value, error = _check_item(item, spec)
        if error is not None:
            return EditCheck(error=error)
        if value is not None and value not in out:
            out.append(value)
    return EditCheck(value=out if many else out[0])
