"""Registry names for the catalog commands' help text, without importing the registries (issue 25 item 5).

``catalog enrich --help`` used to import every evidence source, the judges, the extraction engines and the
importers just to list their names (pint, numpy and scipy with them). :data:`BUILTIN` holds the
names the package itself registers; ``tests/catalog/test_cli_words.py`` checks it against the real
registries, so it cannot drift. When a plug-in is installed (an entry point in ``groundtrace.plugins``),
the real registry is asked instead (:func:`~groundtrace.cli.console.registry_names`), so its names are
listed too.
"""

from __future__ import annotations

#: ``"module:attr"`` of a registry → its built-in names, sorted (``Registry.names()`` without plug-ins).
BUILTIN: dict[str, tuple[str, ...]] = {
    "groundtrace.catalog.sources.base:EVIDENCE_SOURCES": ("catalog", "image_ocr", "image_vlm", "syndicated"),
    "groundtrace.catalog.sources.base:SEARCH_PROVIDERS": ("local", "searxng"),
    "groundtrace.catalog.judge.registry:JUDGES": ("llm", "rule"),
    "groundtrace.catalog.scout.engine:EXTRACTION_ENGINES": ("learned", "llm", "offline"),
    "groundtrace.catalog.importers:IMPORTERS": ("ae-110k", "oa-mine", "openfoodfacts", "wdc-pave"),
}

PLUGIN_GROUP = "groundtrace.plugins"


def plugins_installed() -> bool:
    """Whether any distribution declares a ``groundtrace.plugins`` entry point (metadata only; no import)."""
    from importlib.metadata import entry_points

    return bool(entry_points(group=PLUGIN_GROUP))


def names(registry_path: str) -> str:
    """The names of the registry at ``"module:attr"``, comma-separated: :data:`BUILTIN` when no plug-in is
    installed, else the real registry's (plug-ins included)."""
    if registry_path in BUILTIN and not plugins_installed():
        return ", ".join(BUILTIN[registry_path])
    from groundtrace.cli.console import registry_names

    return registry_names(registry_path)
