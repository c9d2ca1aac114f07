"""The checks that apply the dataset rules (:mod:`groundtrace.crs.dataset.rules`), one module per concern.

:func:`run_checks` is the one entry point: the builder's QC calls it with ``mode="build"``, ``crs validate``
with ``mode="validate"``. Order of a pass: turn structure; per turn the tags, then the quotes and spans
(or, for a redacted release, the placeholders); pools and gold labels; coverage; rejections; the tier;
KB references.
"""

from __future__ import annotations

from groundtrace.crs.dataset.checks.context import CheckContext, Mode
from groundtrace.crs.dataset.checks.gold import check_legs, check_pools_and_gold
from groundtrace.crs.dataset.checks.quotes import (
    check_quotes,
    check_spans,
    check_stance,
    check_tags,
    cited_snippets,
)
from groundtrace.crs.dataset.checks.redacted import check_redacted_turn, is_redacted
from groundtrace.crs.dataset.checks.refs import check_references, reference_findings
from groundtrace.crs.dataset.checks.structure import (
    check_coverage,
    check_labels,
    check_rejections,
    check_turns,
)
from groundtrace.crs.dataset.checks.tier import TIER_FEATURES, check_tier
from groundtrace.crs.dataset.rules import Finding, PoolLimits
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.schema import Dialogue

__all__ = ["CheckContext", "Mode", "is_redacted", "reference_findings", "run_checks"]


def run_checks(
    dialogue: Dialogue,
    kb: KnowledgeBase | None = None,
    *,
    mode: Mode = "validate",
    limits: PoolLimits | None = None,
    redacted: bool | None = None,
    tiered: bool | None = None,
) -> list[Finding]:
    """Every finding of the rules on ``dialogue`` (warnings included; QC fails on errors only).

    ``redacted``: check as a redacted release (default: :func:`is_redacted`). ``tiered``: check the tier
    and stored features (default: when the dialogue stores tier features; never in ``mode="build"``).
    """
    if redacted is None:
        redacted = mode == "validate" and is_redacted(dialogue)
    if tiered is None:
        tiered = bool(TIER_FEATURES & dialogue.features.keys())
    ctx = CheckContext(dialogue, kb, limits or PoolLimits(), mode, redacted, tiered)
    check_turns(ctx)
    check_labels(ctx)
    for turn in dialogue.turns:
        used = check_tags(ctx, turn)
        if redacted:
            check_redacted_turn(ctx, turn, used)
        else:
            snippets = cited_snippets(turn, used)
            check_quotes(ctx, turn, snippets)
            check_spans(ctx, turn, used)
            check_stance(ctx, turn, snippets)
    check_legs(ctx)
    check_pools_and_gold(ctx)
    check_coverage(ctx)
    check_rejections(ctx)
    check_tier(ctx)
    check_references(ctx)
    return ctx.findings
