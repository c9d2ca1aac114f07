"""The SKU input of a run: :func:`iter_skus` / :func:`read_skus` over a JSONL, CSV or Parquet file.

JSONL holds one :class:`~groundtrace.catalog.model.SKU` per line; CSV and Parquet columns are SKU fields
(``specs`` / ``images`` may hold JSON; any other column becomes a spec; Parquet rows are numbered from 1). A
malformed record is reported as ``file:line: message`` and skipped; a repeated sku_id is reported and kept
once; a file that cannot be read as a whole raises :class:`SkuFileError`.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundtrace.catalog.identity import valid_gtin
from groundtrace.catalog.model import SKU
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.text import iter_csv
from groundtrace.core.files.validation import validation_message

SKU_FIELDS = frozenset(SKU.model_fields)


def _csv_sku(row: dict[str, str]) -> SKU:
    data: dict[str, Any] = {}
    specs: dict[str, str] = {}
    for key, raw in row.items():
        if key is None:
            raise ValueError("more cells than header columns")
        value = (raw or "").strip()
        if key == "specs" and value:
            specs.update({str(k): str(v) for k, v in json.loads(value).items()})
        elif key == "images" and value:
            data["images"] = (
                json.loads(value) if value.startswith("[") else [p for p in value.split("|") if p]
            )
        elif key in SKU_FIELDS:
            if value:
                data[key] = value
        elif value:
            specs[key] = value
    data["specs"] = specs
    return SKU.model_validate(data)


def iter_skus(path: Path) -> Iterator[tuple[int, SKU | str]]:
    """``(line, SKU)`` or ``(line, problem)`` for every record of a JSONL, CSV or Parquet file.

    Text files are decoded line by line: a line that is not valid UTF-8 is a problem and the other lines are
    read (a CSV record is numbered by the line it starts on)."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        yield from _iter_parquet(path)
        return
    if path.suffix.lower() == ".csv":
        yield from _iter_csv(path)
        return
    for number, value, error in iter_jsonl(path):
        if error is not None:
            yield number, error.message
            continue
        try:
            yield number, SKU.model_validate(value)
        except ValidationError as exc:
            yield number, _problem(exc)


def _iter_parquet(path: Path) -> Iterator[tuple[int, SKU | str]]:
    """Rows of a Parquet file (numbered from 1); a file that cannot be read raises SkuFileError."""
    try:
        import pyarrow.parquet as pq  # deferred: pyarrow is the optional [parquet] extra
    except ImportError as exc:
        raise ImportError(
            f"{path}: reading Parquet needs pyarrow: pip install 'groundtrace[parquet]'"
        ) from exc

    try:
        records = pq.read_table(path).to_pylist()
    except (OSError, ValueError, TypeError, RuntimeError) as exc:  # ArrowInvalid is a ValueError
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise SkuFileError(f"{path}:1: not a readable Parquet file ({reason})") from None
    for row_number, record in enumerate(records, start=1):
        try:
            yield row_number, _csv_sku({k: _parquet_cell(k, v) for k, v in record.items()})
        except (ValidationError, ValueError, json.JSONDecodeError, AttributeError) as exc:
            yield row_number, _problem(exc)


def _iter_csv(path: Path) -> Iterator[tuple[int, SKU | str]]:
    """CSV records, each numbered by the line it starts on."""
    header: list[str] | None = None
    for line, cells, problem in iter_csv(path):
        if cells is None:  # a line that is not valid UTF-8 (or a record or the header it broke)
            yield line, problem or ""
            continue
        if header is None:
            header = cells
            continue
        try:
            if len(cells) > len(header):
                raise ValueError("more cells than header columns")
            swallowed = _swallowed_row(cells, len(header))
            if swallowed:
                raise ValueError(
                    f"a quoted cell runs over {swallowed} lines and holds what reads as whole rows "
                    "(unclosed quote?); record skipped"
                )
            yield line, _csv_sku(dict(zip(header, cells, strict=False)))
        except (ValidationError, ValueError, json.JSONDecodeError, AttributeError) as exc:
            yield line, _problem(exc)


class SkuFileError(ValueError):
    """The SKU file as a whole cannot be read (a corrupt Parquet file): one line naming the file."""


def _parquet_cell(key: str, value: Any) -> str:
    """One Parquet cell as the text a CSV cell would hold: null and NaN are empty (never "nan"), an
    integer GTIN gets its leading zeros back (GTIN-14; the check digit is unaffected), lists and maps are
    JSON."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if key == "gtin" and numeric and float(value).is_integer() and 0 <= value < 10**14:
        return f"{int(value):014d}"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value if isinstance(value, str) else str(value)


def _swallowed_row(cells: list[str], columns: int) -> int:
    """Lines of a multi-line cell when one of its later lines parses as a whole row of ``columns`` cells —
    the mark of an unclosed quote that swallowed the next records; 0 otherwise."""
    for cell in cells:
        lines = cell.split("\n")
        if len(lines) < 2:
            continue
        for text in lines[1:]:
            parsed = next(csv.reader([text]), [])
            if columns > 1 and len(parsed) == columns:
                return len(lines)
    return 0


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and exc.errors():
        return f"invalid SKU: {validation_message(exc, model=SKU)}"
    return f"invalid SKU: {exc}"


def read_skus(path: Path) -> tuple[list[SKU], list[str]]:
    """Valid SKUs (first occurrence of each id) and ``file:line: message`` issues."""
    skus: list[SKU] = []
    issues: list[str] = []
    seen: set[str] = set()
    for line, item in iter_skus(path):
        if isinstance(item, str):
            issues.append(f"{path}:{line}: {item}")
        elif item.sku_id in seen:
            issues.append(f"{path}:{line}: duplicate sku_id {item.sku_id!r}; first kept")
        else:
            seen.add(item.sku_id)
            skus.append(item)
            if item.gtin and not valid_gtin(item.gtin):
                issues.append(
                    f"{path}:{line}: gtin {item.gtin!r} is not a valid GTIN (length or check digit); "
                    "kept as given, not used for identity matching"
                )
    return skus, issues
