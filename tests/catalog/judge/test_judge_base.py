"""The Judge base class (issue 25): every registered judge subclasses it, its call ledger ``calls`` is what
the per-SKU step counts, and the registry refuses a judge that is not one."""

from __future__ import annotations

import pytest

from groundtrace.catalog.demo_catalog import SKUS
from groundtrace.catalog.judge.base import Judge
from groundtrace.catalog.judge.registry import JUDGES, make_judge
from groundtrace.catalog.judge.rules import RuleJudge
from groundtrace.catalog.model import SKU, Verdict
from groundtrace.catalog.pipeline import EnrichConfig, build_components, process_sku
from groundtrace.catalog.scout.agent import ScoutResult
from groundtrace.catalog.templates import CategoryTemplate


class TwoCallRuleJudge(Judge):
    """The rule judge's verdicts, with two (pretend) LLM calls per SKU in the ledger."""

    name = "two-calls"

    def __init__(self) -> None:
        self.inner = RuleJudge()

    def judge(self, sku: SKU, scout: ScoutResult, template: CategoryTemplate) -> dict[str, Verdict]:
        self.record_call(2)
        return self.inner.judge(sku, scout, template)


def test_registered_judges_subclass_judge() -> None:
    for name in JUDGES.names():
        assert issubclass(JUDGES.get(name), Judge), name
    rule = make_judge("rule")
    assert isinstance(rule, Judge) and rule.calls == 0


def test_the_step_counts_the_judge_ledger() -> None:
    comp = build_components(EnrichConfig())
    sku = next(s for s in SKUS if comp.templates.for_category(s.category) is not None)
    reference = process_sku(sku, comp)
    assert reference.calls == 0 and comp.judge.calls == 0  # the rule judge calls no LLM
    comp.judge = TwoCallRuleJudge()
    first, second = process_sku(sku, comp), process_sku(sku, comp)
    assert (first.calls, second.calls, comp.judge.calls) == (2, 2, 4)  # per SKU: ledger after - before
    assert [r.model_dump() for r in first.results] == [r.model_dump() for r in reference.results]


def test_the_registry_refuses_a_judge_that_is_not_one() -> None:
    class Duck:
        name = "duck"

        def judge(self, sku: SKU, scout: ScoutResult, template: CategoryTemplate) -> dict[str, Verdict]:
            return {}

    with pytest.raises(TypeError, match="judge 'h3-duck' must be a Judge"):
        JUDGES.add("h3-duck", Duck)  # type: ignore[arg-type]
    assert "h3-duck" not in JUDGES
    with pytest.raises(TypeError, match="abstract"):
        Judge()  # type: ignore[abstract]
