"""groundtrace — accountable evidence for machines that recommend or publish facts.

Two systems share one evidence core (``groundtrace.core``):

* ``groundtrace.crs``     — TRACE-CRS, a benchmark and toolkit for tourism conversational recommenders.
* ``groundtrace.catalog`` — TRACE-Catalog, verified product-catalog attribute enrichment.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType

try:
    __version__ = version("groundtrace")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+local"

#: The three packages, reachable as attributes (``import groundtrace; groundtrace.crs``) and imported on
#: first use, so ``import groundtrace`` (and the CLI's ``--version``) stays cheap.
SUBPACKAGES = ("core", "crs", "catalog")

__all__ = ["__version__", "catalog", "core", "crs"]  # the three are lazy: see __getattr__


def __getattr__(name: str) -> ModuleType:
    """PEP 562: ``groundtrace.<subpackage>`` imports it on first access."""
    if name in SUBPACKAGES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *SUBPACKAGES})
