"""Resuming a results file: :func:`scan_results` finds the complete SKU blocks of an existing
``RESULTS.jsonl`` and cuts away (or rewrites without) damaged ones, so a killed run resumes with no lost and
no duplicated lines."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from groundtrace.catalog.model import AttributeResult
from groundtrace.catalog.templates import TemplateSet


def scan_results(
    out_path: Path, templates: TemplateSet, truncate: bool = True
) -> tuple[set[str], list[AttributeResult], int, list[str]]:
    """``(complete sku_ids, their results, bytes removed, issues)`` of an existing results file.

    A SKU block (consecutive lines of one sku_id) is complete when it holds one line for every attribute
    of its template. An unreadable line, a short block or a repeated block is reported with ``file:line``
    and does not count as done, wherever it is: a damaged block at the end is cut off (a killed run), one
    in the middle makes the file be rewritten (temp file + fsync + rename) with the complete blocks only, so
    the redone SKU is neither lost nor duplicated. ``truncate=False`` only reads."""
    if not out_path.exists():
        return set(), [], 0, []
    issues: list[str] = []
    blocks: list[_Block] = []
    damaged = False
    with out_path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("unterminated last line")
                result = AttributeResult.model_validate_json(raw)
            except (ValidationError, ValueError) as exc:
                issues.append(
                    f"{out_path}:{number}: unreadable result line ({str(exc).splitlines()[0][:80]})"
                )
                damaged = True
                continue
            if blocks and blocks[-1].sku_id == result.sku_id:  # also across an unreadable line
                blocks[-1].results.append(result)
                blocks[-1].raw.append(raw)
            else:
                blocks.append(_Block(result.sku_id, number, [result], [raw]))
    done: set[str] = set()
    kept: list[_Block] = []
    seen: set[str] = set()
    for block in blocks:
        if block.sku_id in seen:
            issues.append(
                f"{out_path}:{block.line}: {block.sku_id!r} appears in two blocks; it will be redone"
            )
            done.discard(block.sku_id)
            kept = [k for k in kept if k.sku_id != block.sku_id]
            damaged = True
            continue
        seen.add(block.sku_id)
        template = templates.for_category(block.results[0].category)
        wanted = {a.slug for a in template.attributes} if template else {r.attribute for r in block.results}
        attrs = [r.attribute for r in block.results]
        if set(attrs) != wanted or len(attrs) != len(wanted):  # a lost line, or a line twice
            issues.append(
                f"{out_path}:{block.line}: incomplete block for {block.sku_id!r} "
                f"({len(set(attrs) & wanted)} of {len(wanted)} attributes); it will be redone"
            )
            damaged = True
            continue
        done.add(block.sku_id)
        kept.append(block)
    removed = 0
    if damaged and truncate:
        removed = _rewrite(out_path, kept)
    results = [r for block in kept for r in block.results]
    return done, results, removed, issues


@dataclass
class _Block:
    sku_id: str
    line: int  # first line of the block
    results: list[AttributeResult]
    raw: list[bytes]


def _rewrite(out_path: Path, kept: list[_Block]) -> int:
    """Replace ``out_path`` by the raw lines of ``kept`` (atomic rename); the number of bytes removed."""
    size = out_path.stat().st_size
    data = b"".join(line for block in kept for line in block.raw)
    tmp = out_path.with_name(out_path.name + ".rewrite.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out_path)
    return size - len(data)
