"""The judge registry: name → judge class, and how the enrich pipeline builds one.

:data:`JUDGES` holds ``rule`` (aliases ``rules``, ``offline``; deterministic, the default) and ``llm``
(one LLM call per SKU), lazily, so naming them imports nothing heavy. A judge subclasses
:class:`~groundtrace.catalog.judge.base.Judge` (``judge(sku, scout_result, template) -> {slug: Verdict}``
and the call ledger ``calls``); the registry refuses a class that does not (``TypeError`` naming it).

:func:`build_judge(name, context) <build_judge>` calls the class's ``from_context(context)`` when it has
one (a :class:`JudgeContext`: the run's LLM client, search provider, prompt-token limit and the judge's own
options), else ``cls(**context.options)``. :func:`make_judge(name, **kw) <make_judge>` constructs one
directly with keyword arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groundtrace.catalog.judge.base import Judge
from groundtrace.core.registry import Registry

JUDGES: Registry[type[Judge]] = Registry("judge", base=Judge)
JUDGES.register_lazy(
    "rule",
    "groundtrace.catalog.judge.rules:RuleJudge",
    aliases=("rules", "offline"),
    description="Deterministic five-rule judge (offline).",
)
JUDGES.register_lazy(
    "llm",
    "groundtrace.catalog.judge.llm_judge:LLMJudge",
    description="One LLM call per SKU in the seed's verdict contract, after the deterministic checks "
    "(needs --llm).",
)


@dataclass
class JudgeContext:
    """What an enrich run offers a judge to be built from."""

    llm: Any = None  # the run's LLM client (--llm), or None offline
    search: Any = None  # the run's search provider, or None
    max_prompt_tokens: int | None = None
    options: dict[str, Any] = field(default_factory=dict)  # keyword options for this judge


def build_judge(name: str, context: JudgeContext) -> Judge:
    """The judge registered as ``name`` built for ``context`` (module docstring)."""
    cls = JUDGES.get(name)
    from_context = getattr(cls, "from_context", None)
    return from_context(context) if from_context is not None else cls(**context.options)


def make_judge(name: str = "rule", **kw: Any) -> Judge:
    """The registered judge ``name`` (``rule`` or ``llm``) constructed with ``kw``."""
    return JUDGES.get(name)(**kw)
