"""The validator's report: a :class:`Problem` is a rule finding placed in a file (file:line, dialogue id,
turn), in the shape ``crs validate`` prints and ``crs validate --json`` writes (one object per line)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from groundtrace.crs.dataset.rules import Finding, Rule


class Problem(BaseModel):
    """One finding with its location; ``line``/``dialogue_id``/``turn`` are None when not applicable.

    ``code`` is the rule's stable code (``GT-Q003``), ``name`` its short name (``quote-not-in-review``).
    """

    severity: Literal["error", "warning"]
    code: str
    name: str
    file: str
    line: int | None = None
    dialogue_id: str | None = None
    turn: int | None = None
    message: str

    def location(self) -> str:
        loc = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.dialogue_id is not None:
            loc += f" [{self.dialogue_id}]"
        if self.turn is not None:
            loc += f" turn {self.turn}"
        return loc

    def __str__(self) -> str:
        return f"{self.location()}: {self.severity} {self.code} {self.name}: {self.message}"


def problem(
    rule: Rule,
    message: str,
    file: str,
    line: int | None = None,
    dialogue_id: str | None = None,
    turn: int | None = None,
    severity: Literal["error", "warning"] | None = None,
) -> Problem:
    """A problem of ``rule`` (at the rule's validate severity unless ``severity`` is given)."""
    return Problem(
        severity=severity or rule.severity,
        code=rule.code,
        name=rule.name,
        file=file,
        line=line,
        dialogue_id=dialogue_id,
        turn=turn,
        message=message,
    )


def placed(finding: Finding, file: str, line: int | None, dialogue_id: str | None) -> Problem:
    """``finding`` located in ``file:line`` for dialogue ``dialogue_id``."""
    return problem(finding.rule, finding.message, file, line, dialogue_id, finding.turn, finding.severity)
