"""The CRS system contract: :class:`CRSSystem`, the :data:`SYSTEMS` registry and the reply envelope.

A system answers one recommendation turn: ``respond(inp: SystemInput) -> SystemOutput``. Adding one::

    from groundtrace.crs.systems import CRSSystem, SYSTEMS

    @SYSTEMS.register("my-system", description="One line for `groundtrace crs systems`.")
    class MySystem(CRSSystem):
        def __init__(self, *, alpha: float = 0.5) -> None:
            self.alpha = alpha

        def config(self) -> dict[str, object]:
            return {"alpha": self.alpha}          # part of the run key: change it, get a new run

        def respond(self, inp: SystemInput) -> SystemOutput:
            ...

Rules the runner relies on:

* **Isolation** — ``respond`` may use only ``inp`` (and the system's own fitted state); the gold labels
  are never in ``inp``. Only a system with ``needs_gold = True`` (the oracle) receives them, as a second
  argument ``respond(inp, gold)``.
* **Threads** — the runner calls ``respond`` from a thread pool. A class with ``thread_safe = True``
  (default) shares one instance across workers; with ``thread_safe = False`` the runner builds one
  instance per worker thread through the registry factory.
* **Cost** — an LLM system may return :class:`SystemReply` (output plus token/cost usage) instead of a bare
  :class:`SystemOutput`; the runner records both per turn.
* **Failures** — raising an exception, or returning something that is not a valid output, marks that turn
  unscorable with the error recorded; the run goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from groundtrace.core.registry import Registry
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput


@dataclass(frozen=True)
class TurnUsage:
    """LLM usage of one answered turn (zero for non-LLM systems)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@contextmanager
def usage_on_failure(client: Any) -> Iterator[None]:
    """Attach the LLM usage spent by a turn that fails to its exception, as ``exc.turn_usage`` (a
    :class:`TurnUsage`: the difference of ``client.usage()`` around the block); the runner records it on
    the failed turn, so calls that ended in a failure (e.g. an answer that never validated after its
    re-asks) are still counted in the run ledger. A client without ``usage()`` attaches nothing."""
    usage = getattr(client, "usage", None)
    before = usage() if callable(usage) else None
    try:
        yield
    except Exception as exc:
        if before is not None:
            after = usage()  # type: ignore[misc]
            exc.turn_usage = TurnUsage(  # type: ignore[attr-defined]
                prompt_tokens=after.prompt_tokens - before.prompt_tokens,
                completion_tokens=after.completion_tokens - before.completion_tokens,
                cost_usd=after.cost_usd - before.cost_usd,
            )
        raise


@dataclass(frozen=True)
class SystemReply:
    """A system's output plus the LLM usage spent producing it, and a ``note`` when the answer is a
    degraded one (recorded on the turn's :class:`~.predictions.Prediction` and counted in ``run.json``)."""

    output: SystemOutput
    usage: TurnUsage = TurnUsage()
    note: str | None = None


class CRSSystem:
    """Base class of every registered CRS system (see the module docstring for the contract)."""

    #: Registry name, filled in by :func:`build_system`.
    name: str = ""
    #: Only the oracle: receives the turn's gold labels as ``respond(inp, gold)``.
    needs_gold: ClassVar[bool] = False
    #: One shared instance across worker threads (True) or one instance per worker (False).
    thread_safe: ClassVar[bool] = True

    def config(self) -> dict[str, Any]:
        """The settings that change the outputs (JSON-ready); part of the run key and ``run.json``."""
        return {}

    def respond(self, inp: SystemInput) -> SystemOutput | SystemReply:
        """Answer one turn: a ranking of candidate POI ids (best first) and a response citing ``[Rn]``.

        A ``needs_gold`` system overrides it as ``respond(self, inp, gold: TurnGold | None = None)``.
        """
        raise NotImplementedError


SYSTEMS: Registry[Any] = Registry("CRS system", base=CRSSystem)
"""CRS systems by name. Register a :class:`CRSSystem` subclass with ``@SYSTEMS.register("name")`` or a
heavy one lazily with ``SYSTEMS.register_lazy("name", "package.module:Class")``. Metadata
``description=`` is shown by ``groundtrace crs systems``."""


def build_system(name: str, **options: Any) -> CRSSystem:
    """Instantiate the registered system ``name`` (alias or did-you-mean error) with ``options``."""
    cls = SYSTEMS.get(name)
    system = cls(**options)
    system.name = SYSTEMS.canonical(name)
    return system


def system_description(name: str) -> str:
    """One-line description: registry metadata, else the first docstring line of the class."""
    meta = SYSTEMS.meta(name)
    if meta.get("description"):
        return str(meta["description"])
    try:
        doc = SYSTEMS.get(name).__doc__ or ""
    except ImportError as exc:
        return f"(unavailable: {exc})"
    return doc.strip().split("\n")[0]
