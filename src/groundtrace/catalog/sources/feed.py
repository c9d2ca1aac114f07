"""A syndicated (third-party, high-quality) product feed keyed by GTIN: CSV or JSONL.

Each record becomes one Document: ``source="syndicated"``, ``source_type="hq"``,
``source_ref="<file name>#<GTIN-14>"``, text = one ``"<field>: <value>"`` line per non-empty field
(the key column excluded). GTINs on both sides are normalised with
``identity.normalize_gtin`` (UPC-A / EAN-13 / GTIN-14 → 14 digits, check digit validated), so a feed
keyed by UPC-A matches a SKU carrying the EAN-13 of the same product.

Bad rows (no key, invalid GTIN, broken JSON, a line that is not valid UTF-8) are reported in
:attr:`SyndicatedFeedSource.errors` as ``"file:line: reason"`` and skipped; the rest of the feed is loaded.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from groundtrace.catalog import identity
from groundtrace.catalog.model import SKU, Document
from groundtrace.catalog.sources.base import EvidenceSource, SourceContext, SourceError
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.text import iter_csv, iter_lines

log = logging.getLogger(__name__)

KEY_COLUMNS = ("gtin", "upc", "ean", "gtin14", "gtin13", "barcode", "code")


def _norm(raw: str) -> str | None:
    try:
        return identity.normalize_gtin(raw)
    except (ValueError, TypeError):
        return None


class SyndicatedFeedSource(EvidenceSource):
    """Evidence tier 2: records of a partner feed, looked up by the SKU's GTIN."""

    name = "syndicated"

    @classmethod
    def from_context(cls, context: SourceContext) -> SyndicatedFeedSource:
        """The feed file of the run (``--feed``); an error without one."""
        if context.feed is None:
            raise SourceError("evidence source 'syndicated' needs a feed file (--feed FILE)")
        return cls(context.feed, **context.options)

    def __init__(self, path: str | Path, key: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise SourceError(f"syndicated feed not found: {self.path}")
        self.key = key
        self.errors: list[str] = []
        self._records: dict[str, dict[str, str]] = {}
        if self.path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
            self._load_jsonl()
        else:
            self._load_csv()
        for error in self.errors:  # the caller reports .errors (enrich prints them once): debug only here
            log.debug("%s", error)

    # -- loading ------------------------------------------------------------------------------------
    def _key_of(self, fields: list[str]) -> str | None:
        if self.key:
            return self.key if self.key in fields else None
        lower = {f.lower(): f for f in fields}
        for column in KEY_COLUMNS:
            if column in lower:
                return lower[column]
        return None

    def _add(self, line: int, record: dict[str, Any]) -> None:
        key = self._key_of(list(record))
        raw = str(record.get(key, "") or "").strip() if key else ""
        if not raw:
            self.errors.append(
                f"{self.path}:{line}: no GTIN key column ({self.key or '/'.join(KEY_COLUMNS)})"
            )
            return
        gtin = _norm(raw)
        if gtin is None:
            self.errors.append(f"{self.path}:{line}: invalid GTIN {raw!r} (bad length or check digit)")
            return
        fields = {
            k: str(v).strip() for k, v in record.items() if k != key and v is not None and str(v).strip()
        }
        if gtin in self._records:
            self.errors.append(f"{self.path}:{line}: duplicate GTIN {gtin}; later record merged over earlier")
            self._records[gtin].update(fields)
        else:
            self._records[gtin] = fields

    def _load_csv(self) -> None:
        sample = ""
        for _number, text, _error in iter_lines(self.path):
            sample += text or ""
            if len(sample) >= 4096:
                break
        delimiter = "\t" if sample[:4096].count("\t") > sample[:4096].count(",") else ","
        header: list[str] | None = None
        for line, cells, problem in iter_csv(self.path, delimiter=delimiter):
            if cells is None:  # a line that is not valid UTF-8 (or a record or the header it broke)
                self.errors.append(f"{self.path}:{line}: {problem}")
                continue
            if header is None:
                if self._key_of(cells) is None:
                    raise SourceError(
                        f"{self.path}:{line}: header has no GTIN column (one of {', '.join(KEY_COLUMNS)})"
                    )
                header = cells
                continue
            self._add(line, dict(zip(header, cells, strict=False)))
        if header is None:
            raise SourceError(
                "; ".join(self.errors) or f"{self.path}:1: header has no GTIN column (empty file)"
            )

    def _load_jsonl(self) -> None:
        for line_no, record, error in iter_jsonl(self.path, objects_only=True):
            if error is not None:
                self.errors.append(str(error))
                continue
            self._add(
                line_no,
                {k: v if not isinstance(v, (list, dict)) else json.dumps(v) for k, v in record.items()},
            )

    # -- lookup -------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._records)

    def record(self, gtin: str) -> dict[str, str] | None:
        norm = _norm(gtin)
        return self._records.get(norm) if norm else None

    def documents(self, sku: SKU) -> list[Document]:
        if not sku.gtin:
            return []
        norm = _norm(sku.gtin)
        fields = self._records.get(norm) if norm else None
        if not fields:
            return []
        text = "\n".join(f"{k}: {v}" for k, v in fields.items())
        return [
            Document(
                source="syndicated",
                source_type="hq",
                source_ref=f"{self.path.name}#{norm}",
                text=text,
                title=fields.get("title", fields.get("name", "")),
                metadata={"gtin": norm, "feed": str(self.path)},
            )
        ]
