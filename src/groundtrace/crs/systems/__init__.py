"""CRS systems: the :class:`CRSSystem` contract, the :data:`SYSTEMS` registry, reference systems and the
HTTP adapter. Baselines register themselves here (one module each) — see docs/crs-evaluation.md."""

from __future__ import annotations

from groundtrace.crs.systems import reference  # noqa: F401  (registers oracle, random)
from groundtrace.crs.systems.base import (
    SYSTEMS,
    CRSSystem,
    SystemReply,
    TurnUsage,
    build_system,
    system_description,
)
from groundtrace.crs.systems.http import HTTPSystem, is_url

__all__ = [
    "SYSTEMS",
    "CRSSystem",
    "HTTPSystem",
    "SystemReply",
    "TurnUsage",
    "build_system",
    "is_url",
    "system_description",
]
