"""Importer contract: a dataset file → SKU records + gold labels, with per-line issues instead of crashes.

An :class:`Importer` yields :class:`ImportedRecord` (one SKU and its gold labels) or :class:`ImportIssue`
(``file:line: message``; ``error`` skips that record, ``warning`` keeps it). :func:`run_import` writes
``DIR/skus.jsonl`` and ``DIR/gold.jsonl`` and returns an :class:`ImportReport` with the counts.
"""

from __future__ import annotations

import html
import re
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from groundtrace.catalog.model import SKU, GoldLabel
from groundtrace.core.files.jsonl import read_jsonl_models as read_model_lines

NA = "n/a"


def slugify(name: str) -> str:
    """Template slug of a dataset attribute name: ``"Color(s)"`` → ``color_s``, ``"Size/Weight"`` →
    ``size_weight``."""
    slug = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")
    return slug or "attribute"


def clean_value(value: object) -> str:
    """A gold value as text: HTML entities decoded (AE-110K has ``&#39;``), whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(str(value))).strip()


def _surface(text: str) -> str:
    """Lower-cased text with every run of non-alphanumerics one space, padded (for whole-word search)."""
    return f" {re.sub(r'[^0-9a-z]+', ' ', text.lower()).strip()} "


def sku_text(sku: SKU) -> str:
    """Everything a SKU record states as text: title, description, brand and the spec fields."""
    parts = [sku.title, sku.description, sku.brand or "", *(f"{k} {v}" for k, v in sku.specs.items())]
    return "\n".join(p for p in parts if p)


def value_in_text(label: GoldLabel, text: str) -> bool | None:
    """Whether ``label``'s value occurs in ``text`` as whole words (case and punctuation ignored; any
    alternative surface form counts; a list value needs every item, ``tree_nuts`` read as "tree nuts").
    None for n/a gold."""
    if label.not_applicable or label.value is None or label.value == []:
        return None
    haystack = _surface(text)
    items = label.value if isinstance(label.value, list) else [label.value]
    forms = [[item] for item in items] if isinstance(label.value, list) else [[*items, *label.alternatives]]
    return all(any((k := _surface(f)).strip() and k in haystack for f in group) for group in forms)


@dataclass(frozen=True)
class ImportIssue:
    """A problem at ``file:line``; ``error`` drops the record, ``warning`` keeps it."""

    file: str
    line: int
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.severity}: {self.message}"


def build_sku(file: str | Path, line: int, **fields: object) -> SKU | ImportIssue:
    """``SKU(**fields)``, or an error :class:`ImportIssue` at ``file:line`` naming the fields that break
    the model's bounds (an id or title over its length limit, a non-text id ...): one bad record is
    reported and skipped, never the end of the import."""
    try:
        return SKU(**fields)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'record'}: {err['msg']}" for err in exc.errors()[:3]
        )
        return ImportIssue(str(file), line, f"invalid record ({problems})")


@dataclass
class ImportedRecord:
    """One SKU with its gold labels and the line it came from."""

    sku: SKU
    gold: list[GoldLabel]
    line: int
    notes: list[str] = field(default_factory=list)


class ImportReport(BaseModel):
    """What an import produced (counts are what was written)."""

    format: str
    source: str
    out_dir: str | None = None
    skus: int = 0
    gold: int = 0
    gold_with_value: int = 0
    gold_not_applicable: int = 0
    gold_in_text: int = Field(default=0, description="Gold values whose surface form is in the SKU text.")
    errors: int = 0
    warnings: int = 0
    issues: list[str] = Field(default_factory=list, description="'file:line: severity: message', first 200.")
    categories: dict[str, int] = Field(default_factory=dict)
    attributes: dict[str, int] = Field(default_factory=dict, description="Gold labels per template slug.")
    counters: dict[str, int] = Field(default_factory=dict, description="Importer-specific events.")


class Importer(ABC):
    """Reads one dataset format. Subclasses set ``name``, ``description`` and ``attribute_map``."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: dataset attribute name → template slug; names not listed get :func:`slugify`.
    attribute_map: ClassVar[Mapping[str, str]] = {}

    def __init__(self) -> None:
        self.counters: Counter[str] = Counter()

    def slug_for(self, attribute: str) -> str:
        """Template slug for a dataset attribute name (mapping table, else the slugified name)."""
        return self.attribute_map.get(attribute.strip(), slugify(attribute))

    @abstractmethod
    def records(self, path: Path) -> Iterator[ImportedRecord | ImportIssue]:
        """Yield records and issues in file order."""


def gold_from_scores(
    sku_id: str, slug: str, scores: object, source: str, counters: Counter[str]
) -> GoldLabel | None:
    """Gold label from a ``target_scores`` entry ``{value: ...}``; ``{"n/a": 1}`` → not-applicable gold.

    Several keys are alternative surface forms of one value (``"K-Cup"``, ``"K cup"``): the first is
    ``value``, the others ``alternatives``. ``n/a`` next to real values is dropped (counted ``na_mixed``).
    A punctuation-only key (``"-"``) is read as ``n/a`` (counted ``punctuation_as_na``).
    """
    if not isinstance(scores, Mapping) or not scores:
        return None
    values: list[str] = []
    has_na = False
    for key in scores:
        text = clean_value(key)
        if text.lower() == NA or (text and not any(ch.isalnum() for ch in text)):
            has_na = True  # "-", "--", "/": a filler that states no value (AE-110K lens sizes)
            if text.lower() != NA:
                counters["punctuation_as_na"] += 1
        elif text and text not in values:
            values.append(text)
    if not values:
        return (
            GoldLabel(sku_id=sku_id, attribute=slug, not_applicable=True, source=source) if has_na else None
        )
    if has_na:
        counters["na_mixed"] += 1
    return GoldLabel(sku_id=sku_id, attribute=slug, value=values[0], alternatives=values[1:], source=source)


@dataclass
class _Tally:
    """Running counts of one import, written into ``report``: issues (first ``max_issues`` kept as text),
    SKUs, gold labels with / without a value, SKUs per category and gold labels per attribute."""

    report: ImportReport
    max_issues: int
    categories: Counter[str] = field(default_factory=Counter)
    attributes: Counter[str] = field(default_factory=Counter)

    def note(self, issue: ImportIssue) -> None:
        if issue.severity == "error":
            self.report.errors += 1
        else:
            self.report.warnings += 1
        if len(self.report.issues) < self.max_issues:
            self.report.issues.append(str(issue))

    def count(self, item: ImportedRecord) -> None:
        self.report.skus += 1
        self.categories[item.sku.category] += 1
        for label in item.gold:
            self.report.gold += 1
            self.attributes[label.attribute] += 1
            if label.not_applicable:
                self.report.gold_not_applicable += 1
            else:
                self.report.gold_with_value += 1
                self.report.gold_in_text += bool(label.in_text)


def _within_limit(
    items: Iterable[ImportedRecord | ImportIssue], limit: int | None, tally: _Tally
) -> Iterator[ImportedRecord]:
    """The records of ``items`` until ``tally`` has counted ``limit`` SKUs; issues are noted in file order,
    and only those of lines read before the limit was hit."""
    pending: list[ImportIssue] = []
    for item in items:
        if isinstance(item, ImportIssue):
            pending.append(item)
            continue
        if limit is not None and tally.report.skus >= limit:
            pending = [i for i in pending if i.line < item.line]
            break
        for issue in pending:
            tally.note(issue)
        pending = []
        yield item
    for issue in pending:
        tally.note(issue)


def run_import(
    importer: Importer, path: Path, out_dir: Path | None, *, limit: int | None = None, max_issues: int = 200
) -> tuple[ImportReport, list[ImportedRecord]]:
    """Run ``importer`` on ``path``; write ``out_dir/skus.jsonl`` and ``out_dir/gold.jsonl`` when given.
    Every gold label gets ``in_text`` (:func:`value_in_text` over :func:`sku_text`).

    Records after the first ``limit`` SKUs are not read (nor are their issues reported). A repeated ``sku_id``
    is an error (first kept). Returns the report and the records (kept in memory only when ``out_dir`` is
    None).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    report = ImportReport(format=importer.name, source=str(path), out_dir=str(out_dir) if out_dir else None)
    tally = _Tally(report, max_issues)
    kept: list[ImportedRecord] = []
    seen: set[str] = set()
    with ExitStack() as stack:
        sku_file = gold_file = None
        if out_dir is not None:
            out_dir = Path(out_dir)
            out_dir.mkdir(parents=True, exist_ok=True)
            sku_file = stack.enter_context((out_dir / "skus.jsonl").open("w", encoding="utf-8"))
            gold_file = stack.enter_context((out_dir / "gold.jsonl").open("w", encoding="utf-8"))
        for item in _within_limit(importer.records(path), limit, tally):
            text = sku_text(item.sku)
            item.gold = [g.model_copy(update={"in_text": value_in_text(g, text)}) for g in item.gold]
            if item.sku.sku_id in seen:
                tally.note(
                    ImportIssue(str(path), item.line, f"duplicate sku_id {item.sku.sku_id!r}; first kept")
                )
                continue
            seen.add(item.sku.sku_id)
            tally.count(item)
            if sku_file is not None and gold_file is not None:
                sku_file.write(item.sku.model_dump_json() + "\n")
                gold_file.writelines(label.model_dump_json() + "\n" for label in item.gold)
            else:
                kept.append(item)
    report.categories = dict(tally.categories.most_common())
    report.attributes = dict(tally.attributes.most_common())
    report.counters = dict(sorted(importer.counters.items()))
    return report, kept


def read_jsonl_models(path: Path, model: type[BaseModel]) -> tuple[list, list[ImportIssue]]:
    """Read a JSONL file of ``model`` records (skus.jsonl, gold.jsonl, results); bad lines become issues
    (``core.files.jsonl.read_jsonl_models``: each line decoded and validated on its own)."""
    items, problems = read_model_lines(path, model)
    return items, [ImportIssue(p.file, p.line, p.message) for p in problems]


def iter_nonempty(values: Iterable[str]) -> list[str]:
    """Stripped non-empty strings, order kept, duplicates dropped."""
    out: list[str] = []
    for value in values:
        value = value.strip()
        if value and value not in out:
            out.append(value)
    return out
