"""The Judge contract: :class:`Judge`, the base class of every judge the enrich pipeline runs.

A judge answers ``judge(sku, scout, template) -> {slug: Verdict}`` — one
:class:`~groundtrace.catalog.model.Verdict` for every candidate of the Scout's result — and keeps its
**call ledger** in the field :attr:`Judge.calls`: the number of LLM calls it has made so far (0 for a judge
that calls none, such as the rule judge). The per-SKU step reads the ledger before and after a SKU, so the
SKU's ``llm_calls`` = Scout calls + (``calls`` after − ``calls`` before). A judge that calls an LLM counts
each request with :meth:`Judge.record_call`.

Judges are registered by name in :data:`~groundtrace.catalog.judge.registry.JUDGES`;
the registry refuses a class that does not subclass :class:`Judge` (``TypeError`` naming it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from groundtrace.catalog.model import SKU, Verdict
    from groundtrace.catalog.scout.agent import ScoutResult
    from groundtrace.catalog.templates import CategoryTemplate


class Judge(ABC):
    """``judge(sku, scout, template) -> {slug: Verdict}`` for every candidate of the SKU, plus the call
    ledger ``calls`` (LLM calls made so far; a class-level default of 0, so a subclass needs no
    ``__init__`` for it)."""

    name: ClassVar[str] = "judge"
    calls: int = 0

    @abstractmethod
    def judge(self, sku: SKU, scout: ScoutResult, template: CategoryTemplate) -> dict[str, Verdict]:
        """One Verdict per slug of ``scout.candidates``."""

    def record_call(self, n: int = 1) -> None:
        """Add ``n`` LLM calls to the ledger."""
        self.calls += n
