"""One way to turn a pydantic ``ValidationError`` into messages: ``file:line: field.path: message``.

* :func:`describe_error` — one error as ``field.path: message`` (``<root>`` for the whole value). An
  unknown key (``extra="forbid"`` models) reads ``unknown key (did you mean 'name'?)`` when the model is
  given and a known key is close (rapidfuzz ratio >= 70), else ``unknown key; known keys: a, b, c``.
* :func:`validation_message` — the first ``limit`` errors joined with ``"; "`` plus ``(+N more)``: one
  line, no location.
* :func:`validation_errors` — one :class:`~groundtrace.core.files.errors.LineError` per error (the first
  ``limit``), each with the line of its own field when ``line`` is a function of the error's ``loc``.
* :func:`format_validation_error` — ``file:line: field.path: message`` for the first error (``file:
  ...`` when no line is known) plus ``(+N more)``.

Field paths join the pydantic ``loc`` with dots (``attributes.0.slug``).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Union

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from rapidfuzz import fuzz, process

from groundtrace.core.files.errors import LineError

Loc = tuple[int | str, ...]
#: ``line`` argument: a fixed line, a function of the error's ``loc``, or unknown
LineOf = int | Callable[[Loc], int | None] | None
#: rapidfuzz ratio from which a known key is offered as "did you mean"
SUGGEST_SCORE = 70


def error_path(loc: Sequence[int | str]) -> str:
    """``attributes.0.slug`` for ``("attributes", 0, "slug")``; ``<root>`` for an empty path."""
    return ".".join(str(p) for p in loc) or "<root>"


def _unwrap(tp: Any) -> list[Any]:
    """The member types of ``Annotated``/``Optional``/``Union`` (``[tp]`` for anything else)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [m for arg in typing.get_args(tp) for m in _unwrap(arg)]
    return [tp]


def _step(tp: Any, step: int | str) -> Any:
    """The type found one ``loc`` step below ``tp`` (a field, list item or mapping value), or None."""
    for member in _unwrap(tp):
        if isinstance(member, type) and issubclass(member, BaseModel):
            for name, field in member.model_fields.items():
                if step in (name, field.alias):
                    return field.annotation
            if step == member.__name__:  # pydantic names the union member it tried
                return member
            continue
        origin = typing.get_origin(member)
        args = typing.get_args(member)
        if isinstance(origin, type) and issubclass(origin, Mapping) and len(args) == 2:
            return args[1]
        if isinstance(origin, type) and issubclass(origin, (list, tuple, set, frozenset)) and args:
            return args[0]
    return None


def known_keys(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """Field names (and aliases) of the model found at ``loc`` inside ``model``; ``[]`` when none is."""
    tp: Any = model
    for step in loc:
        tp = _step(tp, step)
        if tp is None:
            return []
    keys: list[str] = []
    for member in _unwrap(tp):
        if isinstance(member, type) and issubclass(member, BaseModel):
            for name, field in member.model_fields.items():
                keys.extend(k for k in (field.alias, name) if k and k not in keys)
    return keys


def _unknown_key(key: str, keys: list[str]) -> str:
    if not keys:
        return "unknown key"
    best = process.extractOne(key, keys, scorer=fuzz.ratio)
    if best is not None and best[1] >= SUGGEST_SCORE:
        return f"unknown key (did you mean {best[0]!r}?)"
    return "unknown key; known keys: " + ", ".join(keys)


def describe_error(error: ErrorDetails, model: type[BaseModel] | None = None, prefix: Loc = ()) -> str:
    """``field.path: message`` for one pydantic error (see the module docstring); ``prefix`` is the path
    of the validated value inside its document (``("prices", 3)``)."""
    loc = tuple(error.get("loc", ()))
    if error.get("type") == "extra_forbidden" and loc:
        keys = known_keys(model, loc[:-1]) if model is not None else []
        return f"{error_path((*prefix, *loc))}: {_unknown_key(str(loc[-1]), keys)}"
    return f"{error_path((*prefix, *loc))}: {error.get('msg', '')}"


def validation_message(
    exc: ValidationError, *, model: type[BaseModel] | None = None, limit: int = 1, prefix: Loc = ()
) -> str:
    """The first ``limit`` errors of ``exc`` as ``path: message`` joined by ``"; "``, plus ``(+N more)``;
    ``prefix`` is prepended to every path."""
    errors = exc.errors()
    text = "; ".join(describe_error(e, model, prefix) for e in errors[:limit])
    more = len(errors) - limit
    return text + (f" (+{more} more)" if more > 0 else "")


def _line(line: LineOf, loc: Loc) -> int | None:
    return line(loc) if callable(line) else line


def validation_errors(
    exc: ValidationError,
    *,
    file: str,
    line: LineOf = None,
    model: type[BaseModel] | None = None,
    limit: int = 3,
    prefix: Loc = (),
) -> list[LineError]:
    """One :class:`LineError` per error (the first ``limit``; the last one notes how many more there
    were). ``line`` gives each error's line (0 when unknown) from its ``prefix + loc``."""
    errors = exc.errors()
    out = []
    for error in errors[:limit]:
        out.append(
            LineError(
                file=file,
                line=_line(line, (*prefix, *error.get("loc", ()))) or 0,
                message=describe_error(error, model, prefix),
            )
        )
    more = len(errors) - limit
    if more > 0 and out:
        last = out[-1]
        out[-1] = last.model_copy(update={"message": f"{last.message} (+{more} more)"})
    return out


def format_validation_error(
    exc: ValidationError,
    *,
    file: str | None = None,
    line: LineOf = None,
    model: type[BaseModel] | None = None,
) -> str:
    """``file:line: field.path: message (+N more)`` for the first error of ``exc`` — one line; the
    location parts that are unknown are left out."""
    errors = exc.errors()
    if not errors:
        return f"{file}: {exc}" if file else str(exc)
    number = _line(line, tuple(errors[0].get("loc", ())))
    where = "" if file is None else f"{file}:{number}: " if number else f"{file}: "
    return where + validation_message(exc, model=model, limit=1)
