"""The error table: what kind of outcome each (SKU, attribute) pair is, with examples.

Kinds, in order (``extracted`` = a value was extracted, whatever the action):

* ``wrong_value`` — extracted, gold has a value, and the extracted value is not it;
* ``value_on_na`` — extracted where the gold says the attribute does not apply;
* ``missed_in_text`` — nothing extracted although the gold value occurs in the SKU text
  (``GoldLabel.in_text``: the importer checked) — the recall a better extractor could win;
* ``missed_not_in_text`` — nothing extracted and the gold value is not in the SKU text (only other
  evidence or inference could find it), or the importer did not check;
* ``abstained_correctly`` — nothing extracted on n/a gold;
* ``correct`` — extracted and right;
* ``unjudged`` — extracted, no gold for the pair (partial annotation).

Pairs without gold and without a value are not counted. Examples: at most ``per_kind`` per kind, taken
round-robin over the attributes (most frequent for that kind first; within one, by sku_id), so one big
attribute does not fill the table. They carry untrusted catalog text: every renderer escapes them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from groundtrace.catalog.evaluation.metrics import PairOutcome

ErrorKind = Literal[
    "wrong_value",
    "value_on_na",
    "missed_in_text",
    "missed_not_in_text",
    "abstained_correctly",
    "correct",
    "unjudged",
]
KINDS: tuple[ErrorKind, ...] = (
    "wrong_value",
    "value_on_na",
    "missed_in_text",
    "missed_not_in_text",
    "abstained_correctly",
    "correct",
    "unjudged",
)
KIND_TITLES: dict[str, str] = {
    "wrong_value": "wrong value",
    "value_on_na": "value where gold is n/a",
    "missed_in_text": "missed, value present in text",
    "missed_not_in_text": "missed, value not in text (or not checked)",
    "abstained_correctly": "abstained correctly (n/a gold)",
    "correct": "correct",
    "unjudged": "extracted, no gold",
}


def error_kind(o: PairOutcome) -> ErrorKind | None:
    """The kind of one outcome (module docstring); None for a pair with neither gold nor a value."""
    if o.extracted:
        if o.gold == "value":
            return "correct" if o.correct else "wrong_value"
        return "value_on_na" if o.gold == "na" else "unjudged"
    if o.gold == "value":
        return "missed_in_text" if o.in_text else "missed_not_in_text"
    if o.gold == "na":
        return "abstained_correctly"
    return None


class ErrorExample(BaseModel):
    sku_id: str
    attribute: str
    category: str
    predicted: str | None
    gold: str | None
    confidence: float | None
    action: str | None
    quote: str | None


class ErrorTable(BaseModel):
    """Counts per kind, overall and per attribute, and examples per kind."""

    counts: dict[str, int] = Field(default_factory=dict)
    per_attribute: dict[str, dict[str, int]] = Field(default_factory=dict)
    examples: dict[str, list[ErrorExample]] = Field(default_factory=dict)


def error_table(outcomes: Iterable[PairOutcome], per_kind: int = 8) -> ErrorTable:
    """The :class:`ErrorTable` of ``outcomes`` (module docstring)."""
    counts: Counter[str] = Counter()
    per_attribute: dict[str, Counter[str]] = defaultdict(Counter)
    pool: dict[str, dict[str, list[PairOutcome]]] = defaultdict(lambda: defaultdict(list))
    for o in sorted(outcomes, key=lambda o: (o.attribute, o.sku_id)):
        kind = error_kind(o)
        if kind is None:
            continue
        counts[kind] += 1
        per_attribute[o.attribute][kind] += 1
        if kind != "correct" and len(pool[kind][o.attribute]) < per_kind:
            pool[kind][o.attribute].append(o)
    examples: dict[str, list[ErrorExample]] = {}
    for kind, by_attr in pool.items():
        queues = sorted(
            by_attr.values(), key=lambda xs: (-per_attribute[xs[0].attribute][kind], xs[0].attribute)
        )
        picked: list[PairOutcome] = []
        for rank in range(per_kind):
            picked += [xs[rank] for xs in queues if rank < len(xs)]
        examples[kind] = [_example(o) for o in picked[:per_kind]]
    return ErrorTable(
        counts={k: counts[k] for k in KINDS if counts[k]},
        per_attribute={a: {k: c[k] for k in KINDS if c[k]} for a, c in sorted(per_attribute.items())},
        examples={k: examples[k] for k in KINDS if k in examples},
    )


def _example(o: PairOutcome) -> ErrorExample:
    return ErrorExample(
        sku_id=o.sku_id,
        attribute=o.attribute,
        category=o.category,
        predicted=o.predicted,
        gold=o.gold_value,
        confidence=o.confidence,
        action=o.action,
        quote=o.quote,
    )
