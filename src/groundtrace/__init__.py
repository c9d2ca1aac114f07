"""groundtrace — accountable evidence for machines that recommend or publish facts.

Two systems share one evidence core (``groundtrace.core``):

* ``groundtrace.crs``     — TRACE-CRS, a benchmark and toolkit for tourism conversational recommenders.
* ``groundtrace.catalog`` — TRACE-Catalog, verified product-catalog attribute enrichment.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("groundtrace")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+local"

__all__ = ["__version__"]
