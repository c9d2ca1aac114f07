"""Stage 4 — quality control of a built dialogue against the KB, with the dataset rules.

``check_dialogue(dialogue, kb)`` runs :func:`groundtrace.crs.dataset.checks.run_checks` in ``mode="build"``
— the rules of :mod:`groundtrace.crs.dataset.rules` whose ``builder`` severity is set, the same checks
``crs validate`` runs — and returns the errors (empty list = pass). Each :class:`Finding` carries its
rule (``GT-Q003 quote-not-in-review`` ...); the builder counts failed attempts per rule.

The builder's QC is stricter than a release in one place: quote spans must be verbatim (``GT-Q005`` is an
error here, a warning in ``crs validate``). It does not check the tier (assigned after QC) nor file-level
rules. The table of rules is in docs/crs-dataset.md.
"""

from __future__ import annotations

from groundtrace.crs.dataset.checks import run_checks
from groundtrace.crs.dataset.rules import RULES, Finding, PoolLimits
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

#: the rules the builder's QC runs, in catalogue order (``build_report.json`` counts failures in this order)
QC_RULES = tuple(r for r in RULES if r.builder is not None)


def check_dialogue(
    d: Dialogue, kb: KnowledgeBase, *, pool_size: int = 8, open_min: int = 50, open_max: int = 100
) -> list[Finding]:
    """Every QC error of ``d`` (empty when it passes); see the module docstring."""
    limits = PoolLimits(pool_size, open_min, open_max)
    findings = run_checks(d, kb, mode="build", limits=limits, redacted=False, tiered=False)
    return [f for f in findings if f.severity == "error"]
