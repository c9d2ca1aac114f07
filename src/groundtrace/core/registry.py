"""A generic, typed plug-in registry.

Everything pluggable in groundtrace (metrics, CRS systems, evidence sources, search providers, LLM
clients, entailment scorers) is registered in a :class:`Registry`. CLI choices, ``list`` output and error
messages come from it, so the set of names in help text can never drift from the code.

Contract
--------
* ``@registry.register("name", aliases=("alias",))`` registers a class or factory; a duplicate name or
  alias raises :class:`DuplicateNameError`.
* ``registry.register_lazy("name", "package.module:attr")`` records a target that is imported only when
  first asked for, so heavy optional back-ends (torch, ray, llama.cpp) cost nothing until used.
* ``registry.get("nmae")`` on an unknown name raises :class:`UnknownNameError` whose message lists
  "did you mean" suggestions (rapidfuzz similarity) and every known name.
* An optional ``base`` type is checked on registration (eager) or on first resolution (lazy).
* Third-party packages can add entries through the ``groundtrace.plugins`` entry-point group: each entry
  point is a callable run once, before the first lookup, that registers what it wants.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from rapidfuzz import fuzz, process

T = TypeVar("T")

_PLUGINS_LOADED = False


class RegistryError(LookupError):
    """Base class of registry errors."""


class DuplicateNameError(RegistryError):
    """A name or alias is already registered."""


class UnknownNameError(RegistryError, KeyError):
    """A name is not registered; the message carries suggestions."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


@dataclass
class _Entry(Generic[T]):
    name: str
    target: T | None = None
    lazy_path: str | None = None
    aliases: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)


def load_plugins() -> None:
    """Run every ``groundtrace.plugins`` entry point once (third-party registrations)."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    for ep in importlib.metadata.entry_points(group="groundtrace.plugins"):
        ep.load()()


class Registry(Generic[T]):
    """Name → object registry with aliases, lazy entries, base-class check and did-you-mean errors."""

    def __init__(self, kind: str, base: type | None = None, *, case_sensitive: bool = False) -> None:
        self.kind = kind
        self.base = base
        self.case_sensitive = case_sensitive
        self._entries: dict[str, _Entry[T]] = {}
        self._alias_to_name: dict[str, str] = {}

    # -- registration -------------------------------------------------------------------------------
    def _key(self, name: str) -> str:
        return name if self.case_sensitive else name.lower()

    def _claim(self, name: str, aliases: tuple[str, ...]) -> None:
        for label in (name, *aliases):
            key = self._key(label)
            if key in self._alias_to_name:
                owner = self._alias_to_name[key]
                raise DuplicateNameError(
                    f"{self.kind} {label!r} is already registered (by {owner!r}); choose another name"
                )
        for label in (name, *aliases):
            self._alias_to_name[self._key(label)] = name

    def _check_base(self, name: str, target: Any) -> None:
        if self.base is None:
            return
        ok = isinstance(target, self.base) or (isinstance(target, type) and issubclass(target, self.base))
        if not ok:
            raise TypeError(f"{self.kind} {name!r} must be a {self.base.__name__} (got {target!r})")

    def register(
        self, name: str, *, aliases: tuple[str, ...] | list[str] = (), **meta: Any
    ) -> Callable[[T], T]:
        """Decorator: ``@reg.register("tfidf", aliases=("tf-idf",))``. Returns the object unchanged."""

        def decorator(target: T) -> T:
            self.add(name, target, aliases=aliases, **meta)
            return target

        return decorator

    def add(self, name: str, target: T, *, aliases: tuple[str, ...] | list[str] = (), **meta: Any) -> None:
        """Register ``target`` under ``name`` (non-decorator form)."""
        aliases = tuple(aliases)
        self._check_base(name, target)
        self._claim(name, aliases)
        self._entries[name] = _Entry(name=name, target=target, aliases=aliases, meta=dict(meta))

    def register_lazy(
        self, name: str, path: str, *, aliases: tuple[str, ...] | list[str] = (), **meta: Any
    ) -> None:
        """Register ``"package.module:attr"``, imported on first :meth:`get`."""
        if ":" not in path:
            raise ValueError(f"lazy {self.kind} path must look like 'package.module:attr', got {path!r}")
        aliases = tuple(aliases)
        self._claim(name, aliases)
        self._entries[name] = _Entry(name=name, lazy_path=path, aliases=aliases, meta=dict(meta))

    # -- lookup ------------------------------------------------------------------------------------
    def canonical(self, name: str) -> str:
        """The registered name for ``name`` or one of its aliases."""
        load_plugins()
        key = self._key(name)
        if key not in self._alias_to_name:
            raise UnknownNameError(self._unknown_message(name))
        return self._alias_to_name[key]

    def get(self, name: str) -> T:
        """Resolve ``name`` (or an alias), importing lazy entries; raises :class:`UnknownNameError`."""
        entry = self._entries[self.canonical(name)]
        if entry.target is None:
            assert entry.lazy_path is not None
            module_name, _, attr = entry.lazy_path.partition(":")
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                hint = entry.meta.get("install_hint")
                extra = f"; install it with: {hint}" if hint else ""
                raise ImportError(
                    f"{self.kind} {entry.name!r} needs {exc.name or module_name}{extra}"
                ) from exc
            target = getattr(module, attr)
            self._check_base(entry.name, target)
            entry.target = target
        return entry.target

    def meta(self, name: str) -> dict[str, Any]:
        """Metadata given at registration (e.g. ``description``, ``install_hint``)."""
        return dict(self._entries[self.canonical(name)].meta)

    def aliases(self, name: str) -> tuple[str, ...]:
        return self._entries[self.canonical(name)].aliases

    def in_order(self) -> list[str]:
        """Names registered so far, in registration order (plug-ins are not loaded by this call)."""
        return list(self._entries)

    def names(self) -> list[str]:
        """Registered names (not aliases), sorted."""
        load_plugins()
        return sorted(self._entries)

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Closest known names/aliases to ``name`` (score >= 60)."""
        choices = list(self._alias_to_name)
        hits = process.extract(self._key(name), choices, scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
        seen: list[str] = []
        for alias, _score, _idx in hits:
            canonical = self._alias_to_name[alias]
            if canonical not in seen:
                seen.append(canonical)
        return seen

    def _unknown_message(self, name: str) -> str:
        load_plugins()
        hints = self.suggest(name)
        did_you_mean = f" Did you mean {', '.join(repr(h) for h in hints)}?" if hints else ""
        known = ", ".join(sorted(self._entries)) or "(none registered)"
        return f"unknown {self.kind} {name!r}.{did_you_mean} Known: {known}"

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a registered name or alias (plug-ins are loaded first, like :meth:`get`)."""
        if not isinstance(name, str):
            return False
        load_plugins()
        return self._key(name) in self._alias_to_name

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        load_plugins()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self)} entries)"
