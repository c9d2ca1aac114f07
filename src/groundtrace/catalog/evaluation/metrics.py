"""Evaluation of enrichment results against gold labels (seed §4.2), overall, per attribute and per category.

Each (SKU, attribute) pair is reduced to a :class:`PairOutcome`; every metric is a :class:`RatioMetric`
(``numerator / denominator`` over outcomes, ``None`` when the denominator is empty), registered in
:data:`METRICS`. Definitions (``E`` = extracted: status ``extracted`` with a non-null value):

* ``accuracy`` = correct / E-with-gold. An extracted value on n/a gold is wrong; E without any gold is
  *unjudged* (counted, not in the denominator).
* ``coverage`` = E / all pairs; ``coverage_gold`` = E / pairs whose gold has a value.
* ``abstention_accuracy`` = not-E / pairs with n/a gold.
* ``judge_supported_rate`` = (PASS + UNVERIFIED) / E.
* ``write_share``, ``block_share``, ``review_share`` = action / E.
* ``publish_coverage`` = (E and WRITE) / all pairs.
* ``pass_precision`` = correct / (PASS and E-with-gold).
* ``judge_agreement`` = (PASS and correct, or not PASS and wrong) / E-with-gold.
* ``false_reject_share`` = (not PASS and correct) / disagreements; ``false_accept_share`` = (PASS and
  wrong) / disagreements (the seed's 87.8 % / 12.2 % split; "accept" means PASS, anything else rejects).

Correctness of a value is decided by :mod:`groundtrace.catalog.evaluation.matching`; outcomes are built
and summarised by :mod:`groundtrace.catalog.evaluation.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from groundtrace.core.registry import Registry

SUPPORTED = frozenset({"PASS", "UNVERIFIED"})

GoldKind = Literal["value", "na", "none"]


@dataclass(frozen=True)
class PairOutcome:
    """Everything the metrics need about one (SKU, attribute) pair."""

    sku_id: str
    attribute: str
    category: str
    has_result: bool
    extracted: bool
    gold: GoldKind
    correct: bool | None  # None unless extracted and gold is value/na
    verdict: str | None
    action: str | None
    #: list gold only: (predicted items matching gold, predicted items, gold items matched, gold items)
    set_counts: tuple[int, int, int, int] | None = None
    #: the candidate's confidence when extracted (the curve over θ, :mod:`.curves`)
    confidence: float | None = None
    #: what the error table shows (:mod:`.errors`): predicted value, gold value, first quote (all
    #: untrusted catalog text), and whether the gold value occurs in the SKU text (``GoldLabel.in_text``)
    predicted: str | None = None
    gold_value: str | None = None
    quote: str | None = None
    in_text: bool | None = None

    @property
    def judged(self) -> bool:
        return self.correct is not None


@dataclass(frozen=True)
class RatioMetric:
    """``value = #numerator / #denominator`` over pair outcomes; None when the denominator is empty."""

    name: str
    formula: str
    numerator: Callable[[PairOutcome], bool]
    denominator: Callable[[PairOutcome], bool]
    higher_is_better: bool = True

    def compute(self, outcomes: Iterable[PairOutcome]) -> MetricValue:
        num = den = 0
        for o in outcomes:
            if self.denominator(o):
                den += 1
                num += bool(self.numerator(o))
        return MetricValue(value=num / den if den else None, numerator=num, denominator=den)

    def __repr__(self) -> str:
        return self.name


class MetricValue(BaseModel):
    value: float | None
    numerator: int
    denominator: int


METRICS: Registry[RatioMetric] = Registry("catalog metric", base=RatioMetric)


def _metric(
    name: str,
    formula: str,
    num: Callable[[PairOutcome], bool],
    den: Callable[[PairOutcome], bool],
    *,
    higher_is_better: bool = True,
    aliases: tuple[str, ...] = (),
) -> None:
    METRICS.add(name, RatioMetric(name, formula, num, den, higher_is_better), aliases=aliases)


@dataclass(frozen=True, repr=False)
class SetMetric(RatioMetric):
    """Micro-averaged set metric over list-gold pairs: ``value = Σ part(numerator) / Σ part(denominator)``
    where the parts index :attr:`PairOutcome.set_counts` (sums of item counts, not pair counts)."""

    parts: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())

    def compute(self, outcomes: Iterable[PairOutcome]) -> MetricValue:
        num = den = 0
        for o in outcomes:
            if o.set_counts is not None:
                num += sum(o.set_counts[i] for i in self.parts[0])
                den += sum(o.set_counts[i] for i in self.parts[1])
        return MetricValue(value=num / den if den else None, numerator=num, denominator=den)


def _set_metric(name: str, formula: str, num: tuple[int, ...], den: tuple[int, ...]) -> None:
    never = lambda o: False  # SetMetric sums counts instead of testing pairs
    METRICS.add(name, SetMetric(name, formula, never, never, True, (num, den)))


def _not_pass(o: PairOutcome) -> bool:
    return o.verdict != "PASS"


def _disagree(o: PairOutcome) -> bool:
    return o.extracted and o.judged and o.verdict is not None and ((o.verdict == "PASS") != bool(o.correct))


_metric(
    "accuracy",
    "correct / extracted-with-gold",
    lambda o: bool(o.correct),
    lambda o: o.extracted and o.judged,
    aliases=("extraction_accuracy",),
)
_metric("coverage", "extracted / all pairs", lambda o: o.extracted, lambda o: True, aliases=("coverage_all",))
_metric(
    "coverage_gold", "extracted / pairs with a gold value", lambda o: o.extracted, lambda o: o.gold == "value"
)
_metric(
    "abstention_accuracy",
    "not extracted / pairs with n/a gold",
    lambda o: not o.extracted,
    lambda o: o.gold == "na",
)
_metric(
    "judge_supported_rate",
    "(PASS + UNVERIFIED) / extracted",
    lambda o: o.verdict in SUPPORTED,
    lambda o: o.extracted and o.has_result,
)
_metric(
    "write_share", "WRITE / extracted", lambda o: o.action == "WRITE", lambda o: o.extracted and o.has_result
)
_metric(
    "block_share",
    "BLOCK / extracted",
    lambda o: o.action == "BLOCK",
    lambda o: o.extracted and o.has_result,
    higher_is_better=False,
)
_metric(
    "review_share",
    "REVIEW / extracted",
    lambda o: o.action == "REVIEW",
    lambda o: o.extracted and o.has_result,
    higher_is_better=False,
)
_metric(
    "publish_coverage",
    "extracted and WRITE / all pairs",
    lambda o: o.extracted and o.action == "WRITE",
    lambda o: True,
)
_metric(
    "pass_precision",
    "correct / PASS with gold",
    lambda o: bool(o.correct),
    lambda o: o.extracted and o.judged and o.verdict == "PASS",
)
_metric(
    "judge_agreement",
    "(PASS and correct) + (not PASS and wrong) / extracted-with-gold",
    lambda o: not _disagree(o),
    lambda o: o.extracted and o.judged and o.verdict is not None,
)
_metric(
    "false_reject_share",
    "(not PASS and correct) / disagreements",
    lambda o: _not_pass(o) and bool(o.correct),
    _disagree,
    higher_is_better=False,
)
_metric(
    "false_accept_share",
    "(PASS and wrong) / disagreements",
    lambda o: o.verdict == "PASS" and not o.correct,
    _disagree,
    higher_is_better=False,
)


_set_metric("set_precision", "Σ predicted items matching gold / Σ predicted items (list gold)", (0,), (1,))
_set_metric("set_recall", "Σ gold items found / Σ gold items (list gold, missed pairs included)", (2,), (3,))
_set_metric(
    "set_f1", "(Σ matching predicted + Σ found gold) / (Σ predicted + Σ gold) (list gold)", (0, 2), (1, 3)
)


def metric_order() -> list[str]:
    builtin = [
        "accuracy",
        "coverage",
        "coverage_gold",
        "abstention_accuracy",
        "judge_supported_rate",
        "write_share",
        "block_share",
        "review_share",
        "publish_coverage",
        "pass_precision",
        "judge_agreement",
        "false_reject_share",
        "false_accept_share",
    ]
    return builtin + [n for n in METRICS.names() if n not in builtin]
