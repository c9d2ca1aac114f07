"""Dataset importers: WDC-PAVE, OA-Mine, AE-110K, Open Food Facts → ``skus.jsonl`` + ``gold.jsonl``.

Importers are registered in :data:`IMPORTERS` (a :class:`~groundtrace.core.registry.Registry`); third
parties add a format with ``IMPORTERS.register("name")`` on an :class:`Importer` subclass.
"""

from __future__ import annotations

from pathlib import Path

from groundtrace.catalog.importers.base import (
    ImportedRecord,
    Importer,
    ImportIssue,
    ImportReport,
    gold_from_scores,
    read_jsonl_models,
    run_import,
    slugify,
)
from groundtrace.core.registry import Registry

IMPORTERS: Registry[type[Importer]] = Registry("importer", base=Importer)
IMPORTERS.register_lazy(
    "wdc-pave",
    "groundtrace.catalog.importers.wdc_pave:WDCPaveImporter",
    aliases=("wdc", "wdc_pave"),
    description="WDC-PAVE offers (title, description, n/a gold)",
)
IMPORTERS.register_lazy(
    "oa-mine",
    "groundtrace.catalog.importers.extractgpt:OAMineImporter",
    aliases=("oa_mine", "oamine"),
    description="OA-Mine titles, ExtractGPT format",
)
IMPORTERS.register_lazy(
    "ae-110k",
    "groundtrace.catalog.importers.extractgpt:AE110KImporter",
    aliases=("ae_110k", "ae110k"),
    description="AE-110K titles, ExtractGPT format",
)
IMPORTERS.register_lazy(
    "openfoodfacts",
    "groundtrace.catalog.importers.openfoodfacts:OpenFoodFactsImporter",
    aliases=("off", "open-food-facts"),
    description="Open Food Facts TSV export",
)


def import_file(
    format: str, path: Path, out_dir: Path | None = None, *, limit: int | None = None
) -> tuple[ImportReport, list[ImportedRecord]]:
    """Import ``path`` with the importer registered as ``format`` (see :func:`run_import`)."""
    importer_cls = IMPORTERS.get(format)
    return run_import(importer_cls(), Path(path), out_dir, limit=limit)


__all__ = [
    "IMPORTERS",
    "ImportIssue",
    "ImportReport",
    "ImportedRecord",
    "Importer",
    "gold_from_scores",
    "import_file",
    "read_jsonl_models",
    "run_import",
    "slugify",
]
