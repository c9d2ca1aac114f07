"""``catalog export --db URL --out FILE``: published values with their evidence and the run's decisions.

``export_rows(store, run=None)`` — one flat row per (sku_id, attribute) that has a decision in the run
(default: the newest) or a published value, sorted by (sku_id, attribute). No timestamps and no database
ids, so two stores built from the same input export byte-identical files (``diff`` works). Columns:

``sku_id, attribute, category`` · the published value: ``value, status`` (auto / approved), ``set_by``,
``source, source_type, source_ref, url, quote, span_start, span_end`` (first evidence item) and
``evidence`` (every item) · the run's ``run, action, reason, policy, verdict, failure_type,
quote_verified, candidate_value, candidate_status, confidence``.

``write_export(rows, out)`` writes JSONL (sorted keys, UTF-8) or, when ``out`` ends in ``.parquet``,
Parquet (needs pyarrow; ``value``, ``evidence`` and ``candidate_value`` as JSON text since their type
varies), through a temporary file renamed into place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from sqlalchemy import and_, select

from groundtrace.catalog.store import schema as t
from groundtrace.catalog.store.store import CatalogStore

COLUMNS = (
    "sku_id",
    "attribute",
    "category",
    "value",
    "status",
    "set_by",
    "source",
    "source_type",
    "source_ref",
    "url",
    "quote",
    "span_start",
    "span_end",
    "evidence",
    "run",
    "action",
    "reason",
    "policy",
    "verdict",
    "failure_type",
    "quote_verified",
    "candidate_value",
    "candidate_status",
    "confidence",
)
JSON_COLUMNS = ("value", "evidence", "candidate_value")


def export_rows(store: CatalogStore, run: str | int | None = None) -> list[dict[str, Any]]:
    """The export rows (module docstring); ``run`` is a run name or id."""
    runs = store.runs()
    chosen = store.find_run(run) if run is not None else (runs[-1] if runs else None)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    with store.engine.connect() as conn:
        if chosen is not None:
            c, v, d = t.candidates, t.verdicts, t.decisions
            query = (
                select(
                    c.c.sku_id,
                    c.c.attribute,
                    c.c.category,
                    c.c.value,
                    c.c.status,
                    c.c.confidence,
                    v.c.verdict,
                    v.c.failure_type,
                    v.c.quote_verified,
                    d.c.action,
                    d.c.reason,
                    d.c.policy,
                )
                .join(
                    v,
                    and_(v.c.run_id == c.c.run_id, v.c.sku_id == c.c.sku_id, v.c.attribute == c.c.attribute),
                )
                .join(
                    d,
                    and_(d.c.run_id == c.c.run_id, d.c.sku_id == c.c.sku_id, d.c.attribute == c.c.attribute),
                )
                .where(c.c.run_id == chosen["id"])
            )
            for r in conn.execute(query).mappings():
                row = dict.fromkeys(COLUMNS)
                row.update(
                    sku_id=r["sku_id"],
                    attribute=r["attribute"],
                    category=r["category"],
                    run=chosen["name"],
                    action=r["action"],
                    reason=r["reason"],
                    policy=r["policy"],
                    verdict=r["verdict"],
                    failure_type=r["failure_type"],
                    quote_verified=bool(r["quote_verified"]),
                    candidate_value=r["value"],
                    candidate_status=r["status"],
                    confidence=r["confidence"],
                )
                rows[(r["sku_id"], r["attribute"])] = row
        pv = t.published_values
        categories = dict(conn.execute(select(t.skus.c.sku_id, t.skus.c.category)).all())
        for p in conn.execute(select(pv)).mappings():
            row = rows.setdefault((p["sku_id"], p["attribute"]), dict.fromkeys(COLUMNS))
            row.update(
                sku_id=p["sku_id"],
                attribute=p["attribute"],
                category=row["category"] or categories.get(p["sku_id"]),
                value=p["value"],
                status=p["status"],
                set_by=p["set_by"],
                source=p["source"],
                source_type=p["source_type"],
                source_ref=p["source_ref"],
                url=p["url"],
                quote=p["quote"],
                span_start=p["span_start"],
                span_end=p["span_end"],
                evidence=p["evidence"],
            )
    return [rows[k] for k in sorted(rows)]


def write_export(rows: list[dict[str, Any]], out: Path) -> Path:
    """Write ``rows`` as JSONL, or Parquet when ``out`` ends in ``.parquet`` (module docstring)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    if out.suffix.lower() in (".parquet", ".pq"):
        try:
            # deferred: pyarrow is the optional [parquet] extra
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise ImportError(
                f"{out}: writing Parquet needs pyarrow: pip install 'groundtrace[parquet]'"
            ) from exc
        flat = [
            {
                k: (json.dumps(r[k], ensure_ascii=False) if k in JSON_COLUMNS and r[k] is not None else r[k])
                for k in COLUMNS
            }
            for r in rows
        ]
        types = {"span_start": pa.int64(), "span_end": pa.int64(), "confidence": pa.float64()}
        types["quote_verified"] = pa.bool_()
        schema = pa.schema([(name, types.get(name, pa.string())) for name in COLUMNS])
        pq.write_table(pa.Table.from_pylist(flat, schema=schema), tmp)
    else:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return out
