"""From a system spec to what the runner asks: a registered name, a URL, a class or an instance.

:func:`system_factory` is the one place that turns what a user names (``crs run --system
NAME|URL|module:Class|path/to/file.py:Class``,
``evaluate(system, ...)``) plus constructor options (``--system-arg key=value``, ``seed``) into an
instance or a zero-argument factory for :class:`~groundtrace.crs.evaluation.runner.SystemPool`.
:func:`parse_system_args` reads ``key=value`` strings like lm-eval's ``--model_args``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from groundtrace.crs.systems.base import SYSTEMS, CRSSystem, build_system
from groundtrace.crs.systems.http import HTTPSystem, is_url
from groundtrace.crs.systems.toolkit.learning import Learns
from groundtrace.crs.systems.understanding.model import load_understanding

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


def is_class_spec(spec: str) -> bool:
    """Whether ``spec`` names a class as ``module:Class`` or ``path/to/file.py:Class`` (not a URL)."""
    target, sep, attr = spec.rpartition(":")
    return bool(sep and target and attr) and not is_url(spec) and attr.isidentifier()


def load_system_class(spec: str) -> type[CRSSystem]:
    """The :class:`CRSSystem` subclass named by ``module.path:Class`` or ``path/to/file.py:Class``.

    ``Class`` may be dotted (``module:Outer.Inner``). A ``.py`` path is imported as a fresh module named
    after the file (relative paths are read from the working directory). A module is looked for on
    ``sys.path`` and then in the working directory (:func:`_import_module`). ``ImportError`` when the
    module or file cannot be imported or has no such attribute; ``TypeError`` when the attribute is not a
    ``CRSSystem`` subclass.
    """
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        module = _import_file(Path(target))
    else:
        try:
            module = _import_module(target)
        except ImportError as exc:
            raise ImportError(f"system {spec!r}: cannot import module {target!r}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ImportError(f"system {spec!r}: {target} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, CRSSystem)):
        raise TypeError(f"system {spec!r}: {attr} is not a CRSSystem subclass (got {obj!r})")
    return obj


def _import_module(target: str) -> Any:
    """``importlib.import_module(target)``; when its top-level package is not on ``sys.path`` but is in the
    working directory (``my_crs.py`` or ``my_crs/`` next to where the command runs — the ``groundtrace``
    console script, unlike ``python -m``, does not put that folder on ``sys.path``), the folder is appended
    to ``sys.path`` (after every installed package, so it shadows none) and the import retried."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        top = target.split(".")[0]
        here = Path.cwd()
        if exc.name != top or str(here) in sys.path:
            raise
        if not ((here / f"{top}.py").is_file() or (here / top).is_dir()):
            raise
    sys.path.append(str(here))
    return importlib.import_module(target)


def _import_file(path: Path) -> Any:
    """Import the Python file ``path`` as a module named after it (kept in ``sys.modules``)."""
    if not path.is_file():
        raise ImportError(f"system file {str(path)!r}: no such file")
    name = f"groundtrace_user_system_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"system file {str(path)!r}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file failed while importing: name it and the cause
        sys.modules.pop(name, None)
        raise ImportError(f"system file {str(path)!r}: {type(exc).__name__}: {exc}") from exc
    return module


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
    * ``module:Class`` or ``path/to/file.py:Class`` (not a registered name) → that class
      (:func:`load_system_class`), built like a class below;
    * a :class:`CRSSystem` subclass → ``cls(**options)``, named after ``cls.name`` or the class;
    * an instance → itself (``options`` must be empty); any other callable → itself (a factory).

    ``seed`` is added to the options when the constructor accepts one and ``options`` has none (so
    ``crs run --seed`` reaches the systems that take it). An option the constructor does not accept
    raises ``ValueError`` naming the options it does accept.

    ``parser=MODEL`` (for a system with a learned understanding, :mod:`.toolkit.learning`): the model
    file (``crs train-parser``) is loaded once and installed in every instance, which then does not
    train on the dataset's train split (``ModelFileError``, a ``ValueError``, for an unusable file).
    """
    options = dict(options or {})
    if isinstance(system, str) and system not in SYSTEMS and is_class_spec(system):
        system = load_system_class(system)
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
    understanding = _parser_option(target, options)
    accepted = accepted_options(target)
    if seed is not None and "seed" not in options and accepted is not None and "seed" in accepted:
        options["seed"] = seed
    _check_options(label, target, options)
    if isinstance(system, str) and is_url(system):
        return lambda: HTTPSystem(system, **options)
    if isinstance(system, str):
        return lambda: _installed(build_system(system, **options), understanding)

    def build() -> CRSSystem:
        instance = target(**options)
        instance.name = instance.name or label
        return _installed(instance, understanding)

    return build


def _parser_option(target: Any, options: dict[str, Any]) -> Any:
    """The understanding loaded from ``options.pop("parser")`` when ``target`` learns one (else None;
    the option is then left for the constructor)."""
    if "parser" not in options or not (isinstance(target, type) and issubclass(target, Learns)):
        return None
    if accepted_options(target) is not None and "parser" in (accepted_options(target) or set()):
        return None
    path = options.pop("parser")
    if not isinstance(path, str) or not path:
        raise ValueError(f"parser: expected a model file path, got {path!r}")
    return load_understanding(path)


def _installed(instance: CRSSystem, understanding: Any) -> CRSSystem:
    if understanding is not None:
        instance.use_understanding(understanding)  # type: ignore[attr-defined]
    return instance


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
