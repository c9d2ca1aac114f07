"""From a system spec to what the runner asks: a registered name, a URL, a class or an instance.

:func:`system_factory` is the one place that turns what a user names (``crs run --system NAME|URL``,
``evaluate(system, ...)``) plus constructor options (``--system-arg key=value``, ``seed``) into an
instance or a zero-argument factory for :class:`~groundtrace.crs.evaluation.runner.SystemPool`.
:func:`parse_system_args` reads ``key=value`` strings like lm-eval's ``--model_args``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable
from typing import Any

from groundtrace.crs.systems.base import SYSTEMS, CRSSystem, build_system
from groundtrace.crs.systems.http import HTTPSystem, is_url

SystemLike = str | type[CRSSystem] | CRSSystem | Callable[[], CRSSystem]


def parse_system_args(items: Iterable[str]) -> dict[str, Any]:
    """``["alpha=0.5", "name=bm25", "flag=true"]`` → ``{"alpha": 0.5, "name": "bm25", "flag": True}``.

    A value is read as a JSON scalar (number, ``true``/``false``, ``null``, a quoted string) when it is
    one, else kept as the raw string; ``ValueError`` for an item without ``=`` or with an empty key, or
    a key given twice.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"system argument {item!r}: expected key=value")
        if key in out:
            raise ValueError(f"system argument {key!r} given twice")
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        out[key] = value if value is None or isinstance(value, bool | int | float | str) else raw
    return out


def accepted_options(target: Callable[..., Any]) -> set[str] | None:
    """Keyword names ``target`` accepts (``None`` when it takes ``**kwargs``: anything goes)."""
    try:
        params = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def _check_options(label: str, target: Callable[..., Any], options: dict[str, Any]) -> None:
    accepted = accepted_options(target)
    unknown = sorted(set(options) - accepted) if accepted is not None else []
    if unknown:
        takes = ", ".join(sorted(accepted or ())) or "none"
        raise ValueError(
            f"system {label!r} takes no option {', '.join(map(repr, unknown))} (accepts: {takes})"
        )


def system_factory(
    system: SystemLike, options: dict[str, Any] | None = None, *, seed: int | None = None
) -> CRSSystem | Callable[[], CRSSystem]:
    """An instance (passed through) or a zero-argument factory building ``system`` with ``options``.

    * a registered name or alias → ``build_system(name, **options)`` (unknown name:
      :class:`~groundtrace.core.registry.UnknownNameError` with did-you-mean suggestions);
    * an ``http(s)://`` URL → :class:`HTTPSystem` (options: ``timeout_s``, ``retries``, ``backoff_s``);
    * a :class:`CRSSystem` subclass → ``cls(**options)``, named after ``cls.name`` or the class;
    * an instance → itself (``options`` must be empty); any other callable → itself (a factory).

    ``seed`` is added to the options when the constructor accepts one and ``options`` has none (so
    ``crs run --seed`` reaches the systems that take it). An option the constructor does not accept
    raises ``ValueError`` naming the options it does accept.
    """
    options = dict(options or {})
    if isinstance(system, CRSSystem):
        if options:
            raise ValueError(
                f"system options {sorted(options)} given with an instance: pass the class or name"
            )
        return system
    if isinstance(system, str) and is_url(system):
        target: Callable[..., Any] = HTTPSystem
        label = system
    elif isinstance(system, str):
        target, label = SYSTEMS.get(system), SYSTEMS.canonical(system)
    elif isinstance(system, type) and issubclass(system, CRSSystem):
        target, label = system, system.name or system.__name__
    elif callable(system):
        if options:
            raise ValueError(f"system options {sorted(options)} given with a factory: bind them in it")
        return system
    else:
        raise TypeError(f"not a CRS system: {system!r} (a name, URL, CRSSystem class or instance)")
    accepted = accepted_options(target)
    if seed is not None and "seed" not in options and accepted is not None and "seed" in accepted:
        options["seed"] = seed
    _check_options(label, target, options)
    if isinstance(system, str) and is_url(system):
        return lambda: HTTPSystem(system, **options)
    if isinstance(system, str):
        return lambda: build_system(system, **options)

    def build() -> CRSSystem:
        instance = target(**options)
        instance.name = instance.name or label
        return instance

    return build


def built_first(factory: CRSSystem | Callable[[], CRSSystem]) -> CRSSystem | Callable[[], CRSSystem]:
    """Build one instance now, so that a constructor error surfaces before a run starts; returns a factory
    that hands out that instance first and builds the next ones (an instance is passed through).

    ``SystemConstructionError`` wraps what the constructor raised (its type and message).
    """
    if isinstance(factory, CRSSystem):
        return factory
    try:
        ready = [factory()]
    except Exception as exc:  # any constructor failure is reported the same way
        raise SystemConstructionError(f"cannot build the system: {type(exc).__name__}: {exc}") from exc

    def next_instance() -> CRSSystem:
        return ready.pop() if ready else factory()

    return next_instance


class SystemConstructionError(ValueError):
    """The system's constructor raised (bad ``--system-arg`` value, missing resource, ...)."""
