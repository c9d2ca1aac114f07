"""The enrich pipeline: SKUs → Scout → Judge → write policy → one AttributeResult JSONL line per (SKU,
attribute).

``run_enrich(skus_path, out_path, config) -> EnrichSummary``:

* **input** — SKU records as JSONL (one :class:`~groundtrace.catalog.model.SKU` per line), CSV or Parquet
  (columns = SKU fields; ``specs`` / ``images`` may hold JSON; any other column becomes a spec; Parquet
  rows are numbered from 1). A malformed line is reported as ``file:line: message`` and skipped; the rest is
  processed. A repeated sku_id is reported and processed once.
* **offline by default** — built-in templates, the offline extractive engine, the rule judge and the
  built-in policy; ``llm`` switches the Scout to the LLM engine, ``judge="llm"`` the Judge.
* **resumable** — SKU blocks are appended whole, in input order, in batches (one ``write`` + flush +
  fsync per 64 SKUs or per second, and at the end; a stopped run syncs what it has). On
  start, the results file is scanned: SKUs with all their template attributes present are skipped; a
  trailing partial block (a run killed mid-write: a broken last line or fewer lines than the SKU's
  template has) is truncated away and redone. A killed run therefore resumes with no lost and no
  duplicated lines. A damaged block in the *middle* (an unreadable or missing line) is detected too: the
  file is rewritten (temp file + rename) without that block, which is reported and redone.
* **one writer** — ``OUT.lock`` (:class:`~groundtrace.core.files.lock.WriterLock`) refuses a second run on
  the same ``out_path`` with a one-line error naming the lock and the holder's pid.
* **failures are failures** — a SKU whose processing raises (an LLM or VLM transport failure after the
  client's retries, ``LLMError``) is reported as ``sku_id: error``, counted in ``skus_failed`` and written
  *nothing*, so a rerun retries it; ``catalog enrich`` exits 1 when any SKU failed (``--allow-failures``
  opts out). Issues of one SKU (a refused image path) are reported as ``sku_id: issue``.
* **bounded concurrency** — at most ``workers`` SKUs in flight; results are written in input order so
  output is deterministic whatever ``workers`` is. ``workers=1`` runs in the calling thread (``python -m
  cProfile`` sees the engine); more workers are processes for an offline run (no LLM/VLM, rule judge:
  CPU-bound, each process builds its components from the config) and threads otherwise (LLM calls wait
  on the network) or when the caller passes ready-made ``components``.
* a SKU without a template has nothing to enrich (counted as ``no_template``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.catalog.identity import valid_gtin
from groundtrace.catalog.model import SKU, Action, AttributeResult, CandidateStatus
from groundtrace.catalog.policy import WritePolicy, load_policy
from groundtrace.catalog.run_meta import check_or_record, run_fingerprint
from groundtrace.catalog.templates import TemplateSet, load_templates
from groundtrace.core.files.jsonl import iter_jsonl
from groundtrace.core.files.lock import WriterLock
from groundtrace.core.files.text import iter_csv
from groundtrace.core.files.validation import validation_message
from groundtrace.core.llm.base import Usage

log = logging.getLogger(__name__)

SKU_FIELDS = frozenset(SKU.model_fields)


class EnrichConfig(BaseModel):
    """What ``groundtrace catalog enrich`` takes (``None`` = the offline default).

    Components are named by registry name and built through the registries: ``sources`` (evidence sources,
    :data:`~groundtrace.catalog.sources.EVIDENCE_SOURCES`; ``syndicated``, ``image_ocr`` and ``image_vlm``
    join automatically when ``feed``, ``images`` and ``vlm`` are given), ``search`` (a
    :data:`~groundtrace.catalog.sources.SEARCH_PROVIDERS` spec ``NAME:ARG``; ``corpus`` / ``searxng`` are
    shortcuts for ``local:PATH`` / ``searxng:URL``), ``engine``
    (:data:`~groundtrace.catalog.scout.engine.EXTRACTION_ENGINES`; default ``llm`` with ``llm``, else
    ``offline``) and ``judge`` (:data:`~groundtrace.catalog.judge.registry.JUDGES`). ``options`` passes
    keyword options to a named component (``{"my-source": {"token": "..."}}``).
    """

    model_config = ConfigDict(extra="forbid")

    templates: Path | None = None
    llm: str | None = None
    llm_options: dict[str, Any] = Field(
        default_factory=dict, description="Extra client arguments for make_llm (e.g. n_ctx for 'local')."
    )
    max_prompt_tokens: int | None = Field(
        default=None,
        ge=256,
        description="Prompt + answer token limit of the LLM (default: the client's n_ctx "
        "when known); prompts that would not fit switch to the compact mode.",
    )
    sources: list[str] = Field(default_factory=lambda: ["catalog"], description="Evidence sources by name.")
    search: str | None = Field(default=None, description="Search provider spec NAME:ARG (e.g. local:pages/).")
    engine: str | None = Field(default=None, description="Extraction engine name (default: llm with --llm).")
    judge: str = "rule"
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Keyword options per named source, engine or judge."
    )
    feed: Path | None = None
    corpus: Path | None = None
    searxng: str | None = None
    images: Path | None = Field(default=None, description="Base folder of SKU image paths (enables OCR).")
    vlm: str | None = Field(
        default=None,
        description="Vision LLM spec (OpenAI-compatible endpoint) that also "
        "transcribes the SKU images (needs ``images``).",
    )
    policy: Path | None = None
    workers: int = Field(default=1, ge=1, le=64)
    max_queries: int = 12

    def source_names(self) -> list[str]:
        """The evidence sources of the run, in order: ``sources``, then the ones the files imply."""
        names = list(dict.fromkeys(self.sources))
        implied = [("syndicated", self.feed), ("image_ocr", self.images), ("image_vlm", self.vlm)]
        return names + [name for name, given in implied if given and name not in names]

    def search_spec(self) -> str | None:
        """``search``, else ``local:CORPUS`` or ``searxng:URL`` from the shortcuts, else None."""
        if self.search:
            return self.search
        if self.corpus is not None:
            return f"local:{self.corpus}"
        return f"searxng:{self.searxng}" if self.searxng else None

    def engine_name(self) -> str:
        """``engine``, else ``llm`` when an LLM is configured, else ``offline``."""
        return self.engine or ("llm" if self.llm else "offline")


@dataclass
class Components:
    templates: TemplateSet
    scout: Any
    judge: Any
    policy: WritePolicy
    errors: list[str]
    llm_clients: list[Any] = field(default_factory=list)  # every LLM client the run calls (usage ledger)


class EnrichSummary(BaseModel):
    """Counts and mixes of one run (this run's SKUs plus those already in the file)."""

    skus_read: int = 0
    skus_done_before: int = 0
    skus_processed: int = 0
    skus_failed: int = 0
    failed_skus: list[str] = Field(
        default_factory=list, description="SKUs whose processing failed (nothing written; retried on resume)."
    )
    no_template: int = 0
    lines_written: int = 0
    truncated_bytes: int = 0
    results_total: int = 0
    verdicts: dict[str, int] = Field(default_factory=dict, description="Verdict counts over every result.")
    verdicts_extracted: dict[str, int] = Field(
        default_factory=dict,
        description="Verdict counts over results with an extracted value (abstentions left out: the Judge "
        "passes a reasonable not_found/ambiguous, which says nothing about the values).",
    )
    failure_types: dict[str, int] = Field(default_factory=dict)
    actions: dict[str, int] = Field(default_factory=dict)
    statuses: dict[str, int] = Field(default_factory=dict)
    issues: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    llm_usage: Usage | None = Field(
        default=None,
        description="This run's LLM ledger (calls, tokens, cache hits, retries, cost); "
        "None when no LLM is configured.",
    )
    llm_unpriced_models: list[str] = Field(
        default_factory=list, description="Models without a price rule: the cost above is unknown, not free."
    )

    def shares(self) -> dict[str, float]:
        """WRITE / BLOCK / REVIEW shares over every result line."""
        total = sum(self.actions.values())
        return {a: (self.actions.get(a, 0) / total if total else 0.0) for a in ("WRITE", "BLOCK", "REVIEW")}


# -- input -------------------------------------------------------------------------------------------------
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
        import pyarrow.parquet as pq
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
    import csv

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


# -- resume ------------------------------------------------------------------------------------------------
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


# -- components --------------------------------------------------------------------------------------------
def build_components(config: EnrichConfig) -> Components:
    """Templates, Scout (sources, search, engine), Judge and policy for ``config``, each component built
    through its registry by name (``EVIDENCE_SOURCES``, ``SEARCH_PROVIDERS``, ``EXTRACTION_ENGINES``,
    ``JUDGES``; ``from_context`` of the registered class)."""
    from groundtrace.catalog.judge.registry import JudgeContext, build_judge
    from groundtrace.catalog.scout.agent import ScoutAgent
    from groundtrace.catalog.scout.engine import EngineContext, build_engine
    from groundtrace.catalog.sources import EVIDENCE_SOURCES, SourceContext, make_search
    from groundtrace.core.llm.factory import make_llm

    templates = load_templates(config.templates)
    errors: list[str] = []
    llm_clients: list[Any] = []
    if config.vlm and config.images is None:
        raise ValueError("--vlm needs --images DIR")
    vlm_client = make_llm(config.vlm) if config.vlm else None
    if vlm_client is not None:
        llm_clients.append(vlm_client)  # image calls go through the client: counted in the ledger
    sources: list[Any] = []
    built: set[str] = set()
    for name in config.source_names():
        canonical = EVIDENCE_SOURCES.canonical(name)
        if canonical in built:  # "feed" given and implied by --feed: one source
            continue
        built.add(canonical)
        context = SourceContext(
            feed=config.feed,
            images=config.images,
            vlm=vlm_client,
            options=dict(config.options.get(name, config.options.get(canonical, {}))),
        )
        source = EVIDENCE_SOURCES.get(canonical).from_context(context)
        errors.extend(getattr(source, "errors", []))
        sources.append(source)
    search: Any = make_search(config.search_spec())
    if search is not None:
        errors.extend(getattr(search, "errors", []))
    llm = make_llm(config.llm, **config.llm_options) if config.llm else None
    if llm is not None:
        llm_clients.append(llm)
    engine_name = config.engine_name()
    engine = build_engine(
        engine_name,
        EngineContext(llm, config.max_prompt_tokens, dict(config.options.get(engine_name, {}))),
    )
    scout = ScoutAgent(templates, sources, search, engine, max_queries=config.max_queries)
    judge = build_judge(
        config.judge,
        JudgeContext(llm, search, config.max_prompt_tokens, dict(config.options.get(config.judge, {}))),
    )
    policy = load_policy(config.policy)
    return Components(templates, scout, judge, policy, errors, llm_clients)


class SkuOutcome(NamedTuple):
    """One SKU's AttributeResults (template order), the LLM calls made, this SKU's issues, and the text of
    every source Document cited by a REVIEW result (source_ref → text), so a reviewer sees each quote in
    its source (the catalog store keeps them with the review item)."""

    results: list[AttributeResult]
    calls: int
    issues: list[str]
    review_sources: dict[str, str] | None = None


def process_sku(sku: SKU, comp: Components) -> SkuOutcome:
    """Scout → Judge → policy for one SKU. Raises what the Scout or Judge raise (``LLMError`` when an LLM
    call failed for good): the caller then writes nothing for this SKU."""
    scout = comp.scout.scout(sku)
    issues = [e for e in scout.errors if e not in comp.errors]
    if scout.template is None:
        return SkuOutcome([], 0, issues)
    template = comp.templates.get(scout.template)
    calls_before = getattr(comp.judge, "calls", 0)
    verdicts = comp.judge.judge(sku, scout, template)
    calls = scout.llm_calls + getattr(comp.judge, "calls", 0) - calls_before
    results = []
    for spec in template.attributes:
        cand = scout.candidates[spec.slug]
        verdict = verdicts[spec.slug]
        decision = comp.policy.decide(cand, verdict, spec, template.category)
        results.append(
            AttributeResult(
                sku_id=sku.sku_id,
                category=sku.category,
                attribute=spec.slug,
                candidate=cand,
                verdict=verdict,
                decision=decision,
            )
        )
    return SkuOutcome(results, calls, issues, _review_sources(scout, results))


def _review_sources(scout: Any, results: list[AttributeResult]) -> dict[str, str]:
    """source_ref → Document text for the evidence of every REVIEW result."""
    out: dict[str, str] = {}
    for r in results:
        if r.decision.action != Action.REVIEW:
            continue
        for ev in r.candidate.evidence:
            doc = scout.document(ev.source_ref)
            if doc is not None:
                out[ev.source_ref] = doc.text
    return out


def _tally(summary: EnrichSummary, results: list[AttributeResult]) -> None:
    """Add ``results`` to the summary's counts (in place: one SKU at a time, so no copies per SKU)."""
    verdicts, extracted, failures = summary.verdicts, summary.verdicts_extracted, summary.failure_types
    actions, statuses = summary.actions, summary.statuses
    for r in results:
        verdict, status = r.verdict.verdict.value, r.candidate.status.value  # Enum.value is a slow property
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        if status == CandidateStatus.EXTRACTED.value:
            extracted[verdict] = extracted.get(verdict, 0) + 1
        if r.verdict.failure_type is not None:
            failure = r.verdict.failure_type.value
            failures[failure] = failures.get(failure, 0) + 1
        action = r.decision.action.value
        actions[action] = actions.get(action, 0) + 1
        statuses[status] = statuses.get(status, 0) + 1
    summary.results_total += len(results)


ProgressFn = Callable[[SKU, int], None]


def run_enrich(
    skus_path: Path,
    out_path: Path,
    config: EnrichConfig | None = None,
    *,
    components: Components | None = None,
    progress: ProgressFn | None = None,
    on_issue: Callable[[str], None] | None = None,
) -> EnrichSummary:
    """Enrich every SKU of ``skus_path`` not yet in ``out_path`` (module docstring).

    ``progress(sku, n_lines)`` is called after each SKU is written (it may raise to stop the run:
    everything written so far stays consistent)."""
    config = config or EnrichConfig()
    comp = components or build_components(config)
    summary = EnrichSummary()

    def issue(text: str) -> None:
        summary.issues.append(text)
        if on_issue is not None:
            on_issue(text)

    for text in comp.errors:
        issue(text)
    skus, problems = read_skus(Path(skus_path))
    for text in problems:
        issue(text)
    summary.skus_read = len(skus)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with WriterLock(out_path):  # one writer per --out (LockHeldError names the holder)
        # an offline run with its own components: workers > 1 are processes (each builds its components)
        processes = components is None and cpu_bound(config)
        _run_locked(skus, out_path, config, comp, summary, issue, progress, processes)
    return summary


def _run_locked(
    skus: list[SKU],
    out_path: Path,
    config: EnrichConfig,
    comp: Components,
    summary: EnrichSummary,
    issue: Callable[[str], None],
    progress: ProgressFn | None,
    processes: bool = False,
) -> None:
    # before the file is touched: a resume must use the options the file was written with
    check_or_record(out_path, run_fingerprint(config, comp.templates, comp.policy))
    done, previous, truncated, scan_issues = scan_results(out_path, comp.templates)
    for text in scan_issues:
        issue(text)
    summary.truncated_bytes = truncated
    _tally(summary, previous)
    todo = [s for s in skus if s.sku_id not in done]
    summary.skus_done_before = len(skus) - len(todo)
    usage_before = _usage_total(comp.llm_clients)
    try:
        _run_window(todo, comp, config, summary, out_path, issue, progress, processes)
    finally:
        if comp.llm_clients:
            summary.llm_usage = _usage_minus(_usage_total(comp.llm_clients), usage_before)
            summary.llm_unpriced_models = sorted(
                {
                    m
                    for c in comp.llm_clients
                    for m in getattr(getattr(c, "ledger", None), "unpriced_models", ())
                }
            )


def _usage_total(clients: list[Any]) -> Usage:
    total = Usage()
    for client in clients:
        total = total + client.usage()
    return total


def _usage_minus(after: Usage, before: Usage) -> Usage:
    """``after - before`` field by field: the usage of this run when the clients served earlier runs."""
    return Usage(**{name: getattr(after, name) - getattr(before, name) for name in Usage.model_fields})


def _run_window(
    todo: list[SKU],
    comp: Components,
    config: EnrichConfig,
    summary: EnrichSummary,
    out_path: Path,
    issue: Callable[[str], None],
    progress: ProgressFn | None,
    processes: bool = False,
) -> None:
    """Process ``todo`` with at most ``config.workers`` SKUs in flight, appending each SKU's lines in
    order (:class:`_BatchWriter`). ``workers == 1`` runs in the calling thread (profilers see it);
    ``processes`` runs the SKUs in a process pool whose workers build their own components from
    ``config``, else threads."""
    with out_path.open("ab") as fh, _executor(config, processes) as pool:
        writer = _BatchWriter(fh)
        window: deque[tuple[SKU, Future[SkuOutcome]]] = deque()
        it = iter(todo)
        config_json = config.model_dump_json() if processes else ""

        def fill() -> None:
            while len(window) < config.workers:
                sku = next(it, None)
                if sku is None:
                    return
                if processes:
                    window.append((sku, pool.submit(_process_in_worker, config_json, sku)))
                else:
                    window.append((sku, pool.submit(process_sku, sku, comp)))

        fill()
        try:
            while window:
                sku, future = window.popleft()
                try:
                    results, calls, sku_issues, _ = future.result()  # review_sources: the store only
                except Exception as exc:  # nothing written: the SKU is not done and a rerun retries it
                    summary.skus_failed += 1
                    summary.failed_skus.append(sku.sku_id)
                    first = str(exc).splitlines()[0][:300] if str(exc) else ""
                    name = type(exc).__name__
                    issue(f"{sku.sku_id}: failed, not written (retried on resume): {name}: {first}")
                    log.debug("SKU %s failed", sku.sku_id, exc_info=True)
                    fill()
                    continue
                for text in sku_issues:
                    issue(f"{sku.sku_id}: {text}")
                summary.llm_calls += calls
                if not results:
                    summary.no_template += 1
                else:
                    writer.add("".join(r.model_dump_json() + "\n" for r in results).encode("utf-8"))
                    summary.lines_written += len(results)
                    _tally(summary, results)
                summary.skus_processed += 1
                if progress is not None:
                    progress(sku, len(results))
                fill()
        finally:
            for _, future in window:
                future.cancel()
            writer.flush()  # complete blocks only: a stopped run stays resumable


class _BatchWriter:
    """Appends SKU blocks with one ``write`` + flush + fsync per batch: when ``max_blocks`` blocks are
    pending or ``max_seconds`` have passed since the last sync, and on :meth:`flush`. Only whole blocks are
    written, in order, so a killed run leaves complete blocks plus at most one torn block at the end (cut
    away and redone by :func:`scan_results`); unsynced blocks are simply redone on resume."""

    def __init__(self, fh: Any, max_blocks: int = 64, max_seconds: float = 1.0) -> None:
        self.fh, self.max_blocks, self.max_seconds = fh, max_blocks, max_seconds
        self.pending: list[bytes] = []
        self.last_sync = time.monotonic()

    def add(self, block: bytes) -> None:
        self.pending.append(block)
        if len(self.pending) >= self.max_blocks or time.monotonic() - self.last_sync >= self.max_seconds:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.fh.write(b"".join(self.pending))
            self.pending = []
            self.fh.flush()
            os.fsync(self.fh.fileno())
        self.last_sync = time.monotonic()


class _InlineExecutor:
    """``submit`` runs the call at once in the calling thread and returns its finished Future."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the Future, as a pool does
            future.set_exception(exc)
        return future

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _executor(config: EnrichConfig, processes: bool) -> Any:
    if config.workers == 1:
        return _InlineExecutor()
    if processes:
        return ProcessPoolExecutor(
            max_workers=config.workers, initializer=_init_worker, initargs=(config.model_dump_json(),)
        )
    return ThreadPoolExecutor(max_workers=config.workers)


def cpu_bound(config: EnrichConfig) -> bool:
    """True for an offline run (no LLM, no VLM, the rule judge): CPU-bound, so ``workers > 1`` are
    processes; runs that wait on LLM endpoints keep threads."""
    return not (config.llm or config.vlm or config.judge != "rule")


# -- process workers: each builds its components once from the run's config -------------------------------
_WORKER_COMPONENTS: dict[str, Components] = {}


def _init_worker(config_json: str) -> None:
    _WORKER_COMPONENTS[config_json] = build_components(EnrichConfig.model_validate_json(config_json))


def _process_in_worker(config_json: str, sku: SKU) -> SkuOutcome:
    if config_json not in _WORKER_COMPONENTS:
        _init_worker(config_json)
    return process_sku(sku, _WORKER_COMPONENTS[config_json])


def summary_lines(summary: EnrichSummary) -> list[str]:
    """Human-readable summary (verdict mix, WRITE/BLOCK/REVIEW shares)."""
    n_extracted = sum(summary.verdicts_extracted.values())
    mix = ", ".join(f"{k} {v} ({v / n_extracted:.1%})" for k, v in sorted(summary.verdicts_extracted.items()))
    abstained = summary.results_total - n_extracted
    kinds = ", ".join(
        f"{k} {v}" for k, v in sorted(summary.statuses.items()) if k != CandidateStatus.EXTRACTED.value
    )
    fails = ", ".join(f"{k} {v}" for k, v in sorted(summary.failure_types.items())) or "-"
    shares = summary.shares()
    return [
        (
            f"SKUs: {summary.skus_read} read, {summary.skus_done_before} already done, "
            f"{summary.skus_processed} processed ({summary.no_template} without template), "
            f"{summary.skus_failed} failed; {summary.lines_written} lines written, "
            f"{summary.results_total} in file"
        ),
        (
            f"verdicts of the {n_extracted} extracted values: {mix or '-'}; "
            f"{abstained} abstentions{f' ({kinds})' if kinds else ''}"
        ),
        f"failure types: {fails}",
        "actions: "
        + ", ".join(
            f"{a} {summary.actions.get(a, 0)} ({shares[a]:.1%})" for a in ("WRITE", "BLOCK", "REVIEW")
        ),
        f"LLM calls: {summary.llm_calls}; issues: {len(summary.issues)}",
        *(
            [_usage_line(summary.llm_usage, summary.llm_unpriced_models)]
            if summary.llm_usage is not None
            else []
        ),
    ]


def _usage_line(u: Usage, unpriced: list[str]) -> str:
    cost = (
        f"cost unknown ({', '.join(unpriced)} not in the price table)" if unpriced else f"${u.cost_usd:.6f}"
    )
    return (
        f"LLM usage: {u.calls} requests, {u.prompt_tokens}+{u.completion_tokens} tokens, "
        f"{u.cache_hits} cache hits, {u.retries} retries, {u.reasks} re-asks, {cost}"
    )
