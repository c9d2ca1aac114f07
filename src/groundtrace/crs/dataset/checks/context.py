"""The state one rule pass shares: the dialogue, the KB, the pool knobs, the mode, and the findings so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from groundtrace.crs.dataset.rules import Finding, PoolLimits, Rule, Severity
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

Mode = Literal["build", "validate"]


@dataclass
class CheckContext:
    """``mode="build"``: the builder's QC (rules with a ``builder`` severity, at that severity);
    ``"validate"``: every rule at its ``severity``. Rules that need a KB are skipped without one."""

    dialogue: Dialogue
    kb: KnowledgeBase | None = None
    limits: PoolLimits = field(default_factory=PoolLimits)
    mode: Mode = "validate"
    redacted: bool = False
    tiered: bool = False
    findings: list[Finding] = field(default_factory=list)

    def runs(self, rule: Rule) -> bool:
        """Whether ``rule`` is checked in this pass."""
        if self.mode == "build" and rule.builder is None:
            return False
        return self.kb is not None or not rule.needs_kb

    def report(self, rule: Rule, turn: int | None, *, soft: bool = False, **fields: Any) -> None:
        """Record a finding of ``rule`` (its message is ``rule.template`` with ``fields``); ``soft``: a
        case of the rule that is only worth a warning (e.g. an open pool short because the city is small)."""
        if not self.runs(rule):
            return
        severity: Severity = (rule.builder or "error") if self.mode == "build" else rule.severity
        if soft:
            severity = "warning"
        self.findings.append(Finding(rule, turn, rule.template.format(**fields), severity))


def short(text: str, n: int = 60) -> str:
    """``text`` cut to ``n`` characters with an ellipsis (for quotes inside messages)."""
    return text if len(text) <= n else text[: n - 1] + "…"
