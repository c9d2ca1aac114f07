"""Check a TRACE-CRS dataset file or folder against every dataset rule (``groundtrace crs validate``).

:func:`validate_path` returns every :class:`~groundtrace.crs.dataset.problems.Problem` found, each with its
rule code and name (``GT-Q003 quote-not-in-review``) and its location (file:line, dialogue id, turn index)
— it never stops at the first one. Errors make ``crs validate`` exit 1; warnings do not.

The rules are those of :mod:`groundtrace.crs.dataset.rules` (table in docs/crs-dataset.md), applied by
:func:`groundtrace.crs.dataset.checks.run_checks` — the same checks the builder's QC runs. Here they run in
``mode="validate"``: every rule at its validate severity, the pool knobs from ``manifest.json``
``config.plan``, dataset lines always tier-checked, and rules needing a KB only with ``--kb``.

Per line (:mod:`groundtrace.crs.dataset.lines`): JSON, JSON Schema, pydantic (``GT-F001``..``F003``), then
duplicate ids (``GT-F004``). A line the schema rejects still gets ``GT-F004`` (when its ``dialogue_id`` is a
string) and, with a KB, the KB-reference rules on whatever ids its raw JSON holds
(:func:`groundtrace.crs.dataset.checks.reference_findings`); every other rule needs a schema-valid line.

Redacted releases (``crs export --redact``): a folder with ``redaction.json``, or a dialogue whose ``⟦Q:…⟧``
placeholders stand for its quote spans, is checked without quote scoring; one ``GT-P001 redacted`` warning
per file says to run ``crs hydrate`` first; placeholders, spans and all id/tag/gold rules still count.
"""

from __future__ import annotations

import json
from pathlib import Path

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks import is_redacted, reference_findings, run_checks
from groundtrace.crs.dataset.files import MANIFEST, dataset_files
from groundtrace.crs.dataset.language import constraint_labels, held_out
from groundtrace.crs.dataset.lines import read_line
from groundtrace.crs.dataset.problems import Problem, placed, problem
from groundtrace.crs.dataset.release import SIDECAR
from groundtrace.crs.dataset.rules import PoolLimits
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue


def check_dialogue(
    dialogue: Dialogue,
    kb: KnowledgeBase | None = None,
    *,
    file: str = "<memory>",
    line: int = 0,
    limits: PoolLimits | None = None,
    redacted: bool = False,
    tiered: bool | None = None,
) -> list[Problem]:
    """Every problem of one (schema-valid) dialogue, placed at ``file:line``.

    ``redacted`` forces the release mode (otherwise chosen by
    :func:`~groundtrace.crs.dataset.checks.is_redacted`). ``tiered``: check the difficulty tier and the
    stored features; by default only when the dialogue stores tier features (an in-memory dialogue straight
    from a realiser has not been tiered yet). Dataset files are always tier-checked.
    """
    findings = run_checks(
        dialogue, kb, mode="validate", limits=limits, redacted=redacted or None, tiered=tiered
    )
    return [placed(f, file, line, dialogue.dialogue_id) for f in findings]


def _duplicate(did: str, file: str, number: int, seen: dict[str, str]) -> list[Problem]:
    if did in seen:
        message = R.DUPLICATE_ID.template.format(first=seen[did])
        return [problem(R.DUPLICATE_ID, message, file, number, did)]
    seen[did] = f"{file}:{number}"
    return []


def _redacted_notice(file: str, count: int, release: bool, with_kb: bool) -> Problem:
    detail = "quotes replaced by ⟦Q:…⟧ placeholders" + (
        ", release folder with redaction.json" if release else ""
    )
    checked = (
        "ids, tags, placeholders and span offsets were checked against the KB"
        if with_kb
        else "ids, tags, placeholders and spans were checked"
    )
    return problem(R.REDACTED, R.REDACTED.template.format(n=count, detail=detail, checked=checked), file)


def validate_file(
    path: Path,
    kb: KnowledgeBase | None = None,
    seen_ids: dict[str, str] | None = None,
    *,
    limits: PoolLimits | None = None,
    release: bool = False,
    labels: dict[str, set[str]] | None = None,
) -> list[Problem]:
    """Every problem of one JSONL dataset file (see module docstring); ``release``: the file sits next to a
    ``redaction.json``; ``labels``: collects the file's constraint labels by split (for ``GT-F007``)."""
    problems: list[Problem] = []
    seen = seen_ids if seen_ids is not None else {}
    file = str(path)
    redacted = 0
    old: dict[str, int] = {}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            read = read_line(raw)
            if read.old_version is not None:
                old[read.old_version] = old.get(read.old_version, 0) + 1
            problems.extend(placed(f, file, number, read.dialogue_id) for f in read.findings)
            if read.dialogue_id is not None:
                problems.extend(_duplicate(read.dialogue_id, file, number, seen))
            if read.dialogue is None:
                if kb is not None and read.obj is not None:
                    refs = reference_findings(read.obj, kb)
                    problems.extend(placed(f, file, number, read.dialogue_id) for f in refs)
                continue
            if labels is not None:
                for split, found in constraint_labels([read.dialogue]).items():
                    labels.setdefault(split, set()).update(found)
            as_release = release or is_redacted(read.dialogue)
            redacted += as_release
            problems.extend(
                check_dialogue(
                    read.dialogue, kb, file=file, line=number, limits=limits, redacted=as_release, tiered=True
                )
            )
    if redacted:
        problems.append(_redacted_notice(file, redacted, release, kb is not None))
    for version, n in sorted(old.items()):
        message = R.OLD_FORMAT.template.format(n=n, version=version, current=SCHEMA_VERSION)
        problems.append(problem(R.OLD_FORMAT, message, file))
    return problems


def pool_limits(folder: Path) -> PoolLimits:
    """The pool knobs of ``manifest.json`` ``config.plan`` (defaults where absent or unreadable)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        plan = manifest["config"]["plan"]
        return PoolLimits(int(plan["pool_size"]), int(plan["open_min"]), int(plan["open_max"]))
    except (OSError, ValueError, KeyError, TypeError):
        return PoolLimits()


def validate_path(path: Path | str, kb: KnowledgeBase | None = None) -> list[Problem]:
    """Every problem of a dataset file or folder (split files; a missing manifest is a warning)."""
    path = Path(path)
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    folder = path if path.is_dir() else path.parent
    if path.is_dir() and not (path / MANIFEST).is_file():
        problems.append(problem(R.MANIFEST, R.MANIFEST.template, str(path)))
    limits = pool_limits(folder)
    release = (folder / SIDECAR).is_file()
    labels: dict[str, set[str]] = {}
    for file in dataset_files(path):
        problems.extend(validate_file(file, kb, seen, limits=limits, release=release, labels=labels))
    problems.extend(held_out_problems(labels, folder, str(path)))
    return problems


def held_out_problems(labels: dict[str, set[str]], folder: Path, file: str) -> list[Problem]:
    """``GT-F007``: test constraint phrases that also occur in train/validation — an error when the
    folder's ``manifest.json`` declares held-out phrasing (``phrasing.held_out``), a warning otherwise."""
    result = held_out(labels)
    if not result.seen:
        return []
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        declared = bool(manifest.get("phrasing", {}).get("held_out"))
    except (OSError, ValueError, AttributeError):
        declared = False
    message = R.HELD_OUT_PHRASING.template.format(
        n=result.seen, total=result.total, examples=", ".join(repr(x) for x in result.examples)
    )
    return [problem(R.HELD_OUT_PHRASING, message, file, severity="error" if declared else "warning")]
