"""One dataset line, read as strictly as the dataset format requires (rules ``GT-F001``–``F003``).

:func:`read_line` tries the fast path first (:func:`strict_parse`); when it fails, the line is checked
with ``json`` and then the JSON Schema (:func:`groundtrace.crs.dataset.files.dialogue_json_schema`), which
explains what is wrong, and finally loaded with pydantic's lax mode.

A line of an older format (``schema_version`` ``1.x``, see :mod:`groundtrace.crs.schema`) is migrated
first: loaded by the model, which reads v1, and checked as its current-format serialisation
(``Line.old_version`` says so; the validator reports one ``GT-F006`` notice per file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from groundtrace.core.files.validation import validation_message
from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.files import dialogue_json_schema
from groundtrace.crs.dataset.rules import Finding
from groundtrace.crs.schema import SCHEMA_VERSION, Dialogue


@lru_cache(maxsize=1)
def _schema_validator() -> Any:
    from jsonschema import Draft202012Validator  # deferred: ~80 ms import, only when a line is checked

    return Draft202012Validator(dialogue_json_schema())


def strict_parse(raw: bytes) -> Dialogue | None:
    """The dialogue when pydantic accepts ``raw`` in *strict* mode, else None (then the caller runs the
    JSON Schema, which explains what is wrong).

    Strict acceptance implies the JSON Schema (generated from the same models) accepts the line — no
    type coercion, extra keys forbidden, the same enums and bounds; ``tests/crs/dataset/test_validate.py``
    checks this implication on mutated dialogues. It is ~300× cheaper than ``jsonschema`` on a line.
    """
    try:
        return Dialogue.model_validate_json(raw, strict=True)
    except ValueError:  # pydantic's ValidationError is a ValueError
        return None


@dataclass
class Line:
    """A read line: the dialogue (None when it is not one), its raw JSON (when it parsed), its id (when a
    string), and the ``GT-F001``..``F003`` findings."""

    dialogue: Dialogue | None
    obj: Any = None
    dialogue_id: str | None = None
    findings: list[Finding] = field(default_factory=list)
    old_version: str | None = None


def _finding(rule: R.Rule, turn: int | None = None, **fields: Any) -> Finding:
    return Finding(rule, turn, rule.template.format(**fields), rule.severity)


def schema_findings(obj: Any) -> list[Finding]:
    """``GT-F002`` for each JSON Schema error of ``obj``, located at its turn when under ``turns/<i>``."""
    out = []
    for err in sorted(_schema_validator().iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        path = list(err.absolute_path)
        turn = path[1] if len(path) > 1 and path[0] == "turns" and isinstance(path[1], int) else None
        out.append(_finding(R.SCHEMA, turn, path="/".join(map(str, path)) or "<root>", error=err.message))
    return out


def read_line(raw: bytes) -> Line:
    """Parse one non-blank dataset line (see the module docstring)."""
    dialogue = strict_parse(raw)
    if dialogue is not None:  # fast path: strict acceptance implies the JSON Schema accepts it
        return Line(dialogue, dialogue_id=dialogue.dialogue_id)
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return Line(None, findings=[_finding(R.JSON, error=exc)])
    did = obj.get("dialogue_id") if isinstance(obj, dict) else None
    did = did if isinstance(did, str) else None
    old = old_version(obj)
    if old is not None:
        return _migrated_line(obj, did, old)
    errors = schema_findings(obj)
    if errors:
        return Line(None, obj, did, errors)
    try:
        return Line(Dialogue.model_validate(obj), obj, did)
    except ValidationError as exc:
        error = validation_message(exc, model=Dialogue, limit=5)
        return Line(None, obj, did, [_finding(R.MODEL, error=error)])


def old_version(obj: Any) -> str | None:
    """The ``schema_version`` of a line in an older, readable format (``1.x``), else None."""
    version = obj.get("schema_version") if isinstance(obj, dict) else None
    if isinstance(version, str) and version != SCHEMA_VERSION and version.partition(".")[0] == "1":
        return version
    return None


def _migrated_line(obj: dict[str, Any], did: str | None, version: str) -> Line:
    """An old-format line: loaded by the model (which migrates it), then checked as it is now written."""
    try:
        dialogue = Dialogue.model_validate(obj)
    except ValidationError as exc:
        error = f"format {version} line: {validation_message(exc, model=Dialogue, limit=5)}"
        return Line(None, obj, did, [_finding(R.MODEL, error=error)], old_version=version)
    current = dialogue.model_dump(mode="json")
    errors = schema_findings(current)
    return Line(None if errors else dialogue, current, did, errors, old_version=version)
