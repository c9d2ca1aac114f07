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

Correctness: values compare with ``groundtrace.core.evidence.normalize.values_equal`` (booleans, units, abbreviations,
2 % / 0.5 numeric tolerance) using the attribute's template kind/unit when templates are given
(:func:`equal_for`), then with the per-type gold-wording rules of :func:`typed_equal` (quantity parsed out
of ``"12 oz Bag"``, pack counts out of ``"Pack of 3"``, enum synonyms, contiguous-token containment for
strings); a single-valued gold accepts its ``value`` or any ``alternatives``; a list gold
(multi-valued attribute) needs set equality — every predicted item equals some gold item and vice versa.
"All pairs" is the union of result pairs and gold pairs (``scope="union"``; a gold pair with no result is a
miss, counted in ``missing_results``), or only the result pairs (``scope="results"``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from groundtrace.catalog.model import AttributeResult, AttributeSpec, CandidateStatus, GoldLabel
from groundtrace.catalog.templates import TemplateSet
from groundtrace.core.evidence.normalize import normalize_value, parse_quantity, values_equal
from groundtrace.core.registry import Registry

Equal = Callable[[str, str], bool]
UNKNOWN_CATEGORY = "(unknown)"
SUPPORTED = frozenset({"PASS", "UNVERIFIED"})


# -- value comparison ------------------------------------------------------------------------------------
_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "y", "n"})
_NUMBER = re.compile(r"(?<![\w./-])(\d+[- ]\d+/\d+|\d+/\d+|\d+(?:[.,]\d+)?)(?![\d/]|-\d)")
_WORD = re.compile(r"\s*-?\s*([A-Za-z\"”'%][A-Za-z.]*(?:-[A-Za-z]+)*)")
_PACK_COUNT = re.compile(
    r"^\s*(?P<a>\d+)\s*$|\b(?:pack|case|box|set|bundle|lot)\s+of\s+(?P<b>\d+)\b"
    r"|\b(?P<c>\d+)\s*[-\s]?\s*(?:pack|pk|packs|count|ct|pcs?|pieces?|units?)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\W_]+")
_COUNT_WORDS = frozenset(
    {
        "count",
        "ct",
        "pc",
        "pcs",
        "piece",
        "capsule",
        "pod",
        "k-cup",
        "kcup",
        "teabag",
        "bag",
        "sachet",
        "tablet",
        "softgel",
        "serving",
        "unit",
    }
)
MIN_TOKEN_COVER = 0.5


def quantity_mentions(text: str) -> list[str]:
    """Every ``number [unit]`` inside ``text``, the unit read from the extractor's closed unit-token list
    (up to two words, longest first) or a count word (count, ct, pcs, pieces, capsules, pods, k-cups,
    tea bags, bags, sachets → ``"N count"``): ``"Large 2.2 Pound Bag"`` → ``["2.2 Pound"]``, ``"3.6 OZ
    (102g)"`` → ``["3.6 OZ", "102 g"]``, ``"1 bag (20 oz.)"`` → ``["1 count", "20 oz"]``. A number followed
    by no unit gives the bare number."""
    from groundtrace.catalog.scout.extract import _unit_key

    out: list[str] = []
    for m in _NUMBER.finditer(text):
        words: list[str] = []
        pos = m.end()
        for _ in range(2):
            w = _WORD.match(text, pos)
            if not w:
                break
            words.append(w.group(1).rstrip("."))
            pos = w.end()
        number = re.sub(r"[- ]", " ", m.group(1))  # "6-7/8" -> "6 7/8" (a mixed fraction)
        if words and _singular(words[0].lower()) in _COUNT_WORDS:
            out.append(f"{number} count")
            continue
        for k in range(len(words), 0, -1):
            unit = " ".join(words[:k])
            if _unit_key(unit) is not None and parse_quantity(f"{number} {unit}") is not None:
                out.append(f"{number} {unit}")
                break
        else:
            out.append(number)
    return out


def pack_count(text: str) -> int | None:
    """The pack/piece count a value states: ``"Pack of 3"``, ``"2-pack"``, ``"6 pk"``, ``"12 Count"``,
    ``"3"`` → the integer; ``None`` when the text states none or several different ones."""
    found = {int(next(g for g in m.groups() if g)) for m in _PACK_COUNT.finditer(text)}
    return found.pop() if len(found) == 1 else None


def _singular(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def value_tokens(text: str) -> list[str]:
    """Normalised word tokens (``core.normalize`` canonical string, singular forms)."""
    return [_singular(t) for t in _TOKEN.findall(normalize_value(text, "string") or "")]


def token_contained(a: str, b: str, min_cover: float = MIN_TOKEN_COVER) -> bool:
    """True when the tokens of the shorter value appear *contiguously and in order* in the longer one and
    cover at least ``min_cover`` of the longer one's tokens: ``"whole bean"`` ⊂ ``"Whole Bean Coffee"``
    (2/3), ``"cherry"`` ⊂ ``"Sour Cherry"`` (1/2); ``"lemon"`` vs ``"Sicilian Lemon & Honeysuckle"`` is
    1/3 → False."""
    ta, tb = value_tokens(a), value_tokens(b)
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if not short or len(short) / len(long_) < min_cover:
        return False
    n = len(short)
    return any(long_[i : i + n] == short for i in range(len(long_) - n + 1))


def _vocab_of(text: str, vocab: list[str], search: bool = False) -> list[str]:
    """Vocabulary values ``text`` names — the whole text (``search=False``) or any phrase inside it —
    through the extractor's value phrases (synonyms, abbreviations, plural ``s``)."""
    from groundtrace.catalog.scout.extract import _map_to_vocab

    return _map_to_vocab(text, vocab, search=search)


def _numbers_equal(a: str, b: str, unit: str | None) -> bool:
    """Any quantity mentioned in ``a`` equals any mentioned in ``b`` (same dimension, 2 % / 0.5); a side
    that is a whole bare number also equals a count (``"36"`` = ``"36 count"``)."""
    qa, qb = quantity_mentions(a), quantity_mentions(b)
    if any(values_equal(x, y, "number", unit) for x in qa for y in qb):
        return True
    for bare, other in ((a, qb), (b, qa)):
        whole = parse_quantity(bare)
        if (
            whole is not None
            and whole.unitless
            and any(
                y == f"{n} count" and values_equal(bare, n, "number") for y in other for n in [y.split()[0]]
            )
        ):
            return True
    return False


def typed_equal(a: str, b: str, spec: AttributeSpec) -> bool:
    """``a`` and ``b`` state the same value of ``spec`` (symmetric). ``core.normalize.values_equal`` with
    the template kind/unit first; then, per type:

    * number with a unit, or with recommended unit symbols: a quantity mentioned in one side equals one
      mentioned in the other (``"12 oz"`` = ``"12 oz Bag"`` = ``"Large 12 Ounce Bag"``; ``"16 oz"`` ≠
      ``"12 oz Bag"``), and a whole bare number equals a count (``"36"`` = ``"36 count"``);
    * unit-less number (pack/piece counts): both sides state the same integer count (``"3"`` = ``"Pack of
      3"`` = ``"3-pack"``);
    * enum: both sides name the same *set* of allowed values through the vocabulary and its synonyms
      (``"Decaf"`` → {decaffeinated}; ``"Tea Powder, Tapioca Pearls"`` names one value, a pie assortment
      naming three flavours matches none of them alone);
    * string: the whole of both sides is the same recommended-vocabulary value (``"Teabags"`` = ``"tea
      bags"``), or :func:`token_contained` (contiguous, in order, covering >= 50 % of the longer side:
      ``"cherry"`` = ``"Sour Cherry"``, ``"lemon"`` ≠ ``"Sicilian Lemon & Honeysuckle"``);
    * bool: ``values_equal`` only.
    """
    if values_equal(a, b, spec.type, spec.unit):
        return True
    if spec.type == "bool":
        return False
    if spec.type == "number":
        has_unit = spec.unit or any(
            parse_quantity(f"1 {u}") is not None and not parse_quantity(f"1 {u}").unitless
            for u in spec.recommended_values
        )
        if has_unit and _numbers_equal(a, b, spec.unit):
            return True
        ca, cb = pack_count(a), pack_count(b)
        return ca is not None and ca == cb
    if spec.type == "enum":
        va, vb = _vocab_of(a, spec.allowed_values, True), _vocab_of(b, spec.allowed_values, True)
        return bool(va) and set(va) == set(vb)
    if spec.recommended_values:
        va, vb = _vocab_of(a, spec.recommended_values), _vocab_of(b, spec.recommended_values)
        if va and va == vb:
            return True
    return token_contained(a, b)


def equal_for(spec: AttributeSpec | None) -> Equal:
    """Comparator for one attribute: :func:`typed_equal` with the template spec when the attribute is
    known; otherwise string equality, then number equality when both sides parse as quantities, then
    boolean equality when both sides are yes/no/true/false words."""
    if spec is not None:
        return lambda a, b: typed_equal(a, b, spec)

    def untyped(a: str, b: str) -> bool:
        if values_equal(a, b, "string"):
            return True
        if parse_quantity(a) is not None and parse_quantity(b) is not None:
            return values_equal(a, b, "number")
        if a.strip().lower() in _BOOL_WORDS and b.strip().lower() in _BOOL_WORDS:
            return values_equal(a, b, "bool")
        return False

    return untyped


def _items(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else [v for v in value if v is not None]


def value_matches(predicted: str | list[str], gold: GoldLabel, equal: Equal) -> bool:
    """Is ``predicted`` right for ``gold`` (which must carry a value)? Rules in the module docstring."""
    preds = _items(predicted)
    if not preds:
        return False
    if isinstance(gold.value, list):
        wanted = _items(gold.value)
        return all(any(equal(p, g) for g in wanted) for p in preds) and all(
            any(equal(p, g) for p in preds) for g in wanted
        )
    accepted = _items(gold.value) + list(gold.alternatives)
    return all(any(equal(p, g) for g in accepted) for p in preds)


# -- outcomes and metrics -----------------------------------------------------------------------------
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


# -- report ----------------------------------------------------------------------------------------------
class GroupReport(BaseModel):
    """Metrics and mixes over one group of pairs."""

    pairs: int
    metrics: dict[str, MetricValue]
    verdicts_extracted: dict[str, int] = Field(
        default_factory=dict, description="Verdict counts on extracted."
    )
    verdicts_all: dict[str, int] = Field(default_factory=dict, description="Verdict counts on every result.")
    actions: dict[str, int] = Field(default_factory=dict, description="Action counts on every result.")


class EvaluationReport(BaseModel):
    """Output of :func:`evaluate`."""

    comparator: str
    scope: str
    counts: dict[str, int]
    overall: GroupReport
    per_category: dict[str, GroupReport]
    per_attribute: dict[str, GroupReport]
    issues: list[str] = Field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return self.model_dump(mode="json")

    def print(self, console: Any = None) -> None:
        """Rich tables: overall metrics, then per category and per attribute."""
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table
        from rich.text import Text

        console = console or Console()

        def pct(m: MetricValue) -> str:
            return "—" if m.value is None else f"{100 * m.value:.1f}% ({m.numerator}/{m.denominator})"

        overall = Table(title="TRACE-Catalog evaluation (overall)")
        overall.add_column("metric")
        overall.add_column("value", justify="right")
        overall.add_column("formula")
        for name, value in self.overall.metrics.items():
            overall.add_row(name, pct(value), METRICS.get(name).formula)
        console.print(overall)
        console.print("counts: " + ", ".join(f"{k}={v}" for k, v in self.counts.items()))
        console.print(
            "verdicts (extracted): "
            + (", ".join(f"{k}={v}" for k, v in self.overall.verdicts_extracted.items()) or "none")
        )
        console.print(
            "actions: " + (", ".join(f"{k}={v}" for k, v in self.overall.actions.items()) or "none")
        )
        shown = (
            "accuracy",
            "coverage",
            "coverage_gold",
            "abstention_accuracy",
            "judge_supported_rate",
            "publish_coverage",
            "pass_precision",
        )
        for title, groups in (("category", self.per_category), ("attribute", self.per_attribute)):
            table = Table(title=f"per {title}")
            table.add_column(title)
            table.add_column("pairs", justify="right")
            for name in shown:
                table.add_column(name, justify="right")
            for key, group in groups.items():
                table.add_row(
                    escape(key),
                    str(group.pairs),
                    *(  # keys are catalog data: never markup
                        "—" if group.metrics[n].value is None else f"{100 * group.metrics[n].value:.1f}"
                        for n in shown
                    ),
                )
            console.print(table)
        for issue in self.issues[:20]:
            console.print(Text(issue, style="yellow"), highlight=False)


def _extracted(result: AttributeResult) -> bool:
    candidate = result.candidate
    return candidate.status == CandidateStatus.EXTRACTED and candidate.value is not None


def build_outcomes(
    results: Iterable[AttributeResult],
    gold: Iterable[GoldLabel],
    *,
    equal: Callable[[str, str], Equal],
    categories: Mapping[str, str] | None = None,
    scope: Literal["union", "results"] = "union",
) -> tuple[list[PairOutcome], dict[str, int], list[str]]:
    """Join results and gold on (sku_id, attribute); first occurrence of a duplicate wins (reported).
    ``equal(category, attribute)`` gives the comparator of a pair."""
    issues: list[str] = []
    by_pair: dict[tuple[str, str], AttributeResult] = {}
    sku_category: dict[str, str] = dict(categories or {})
    for result in results:
        key = (result.sku_id, result.attribute)
        if key in by_pair:
            issues.append(f"duplicate result for {key}; first kept")
            continue
        by_pair[key] = result
        sku_category.setdefault(result.sku_id, result.category)
    gold_by_pair: dict[tuple[str, str], GoldLabel] = {}
    for label in gold:
        key = (label.sku_id, label.attribute)
        if key in gold_by_pair:
            issues.append(f"duplicate gold for {key}; first kept")
            continue
        gold_by_pair[key] = label
    keys = list(by_pair) + ([k for k in gold_by_pair if k not in by_pair] if scope == "union" else [])
    counts = Counter(results=len(by_pair), gold=len(gold_by_pair))
    outcomes: list[PairOutcome] = []
    for key in keys:
        result = by_pair.get(key)
        label = gold_by_pair.get(key)
        extracted = result is not None and _extracted(result)
        if label is None:
            kind: GoldKind = "none"
        elif label.not_applicable or label.value is None or label.value == []:
            kind = "na"
        else:
            kind = "value"
        category = result.category if result else sku_category.get(key[0], UNKNOWN_CATEGORY)
        correct: bool | None = None
        if extracted and kind == "value":
            assert result is not None and label is not None
            correct = value_matches(result.candidate.value or [], label, equal(category, key[1]))
        elif extracted and kind == "na":
            correct = False
        outcomes.append(
            PairOutcome(
                sku_id=key[0],
                attribute=key[1],
                category=category,
                has_result=result is not None,
                extracted=extracted,
                gold=kind,
                correct=correct,
                verdict=result.verdict.verdict.value if result else None,
                action=result.decision.action.value if result else None,
            )
        )
        counts["pairs"] += 1
        counts[f"gold_{kind}"] += 1
        counts["extracted"] += extracted
        counts["missing_results"] += result is None
        counts["unjudged_extracted"] += extracted and kind == "none"
    return outcomes, dict(counts), issues


def summarise(outcomes: list[PairOutcome]) -> GroupReport:
    """Every registered metric and the verdict/action mixes over ``outcomes``."""
    return GroupReport(
        pairs=len(outcomes),
        metrics={name: METRICS.get(name).compute(outcomes) for name in _metric_order()},
        verdicts_extracted=dict(
            Counter(o.verdict for o in outcomes if o.extracted and o.verdict).most_common()
        ),
        verdicts_all=dict(Counter(o.verdict for o in outcomes if o.verdict).most_common()),
        actions=dict(Counter(o.action for o in outcomes if o.action).most_common()),
    )


def _metric_order() -> list[str]:
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


def evaluate(
    results: Iterable[AttributeResult],
    gold: Iterable[GoldLabel],
    *,
    equal: Equal | None = None,
    templates: TemplateSet | None = None,
    categories: Mapping[str, str] | None = None,
    scope: Literal["union", "results"] = "union",
) -> EvaluationReport:
    """Score ``results`` against ``gold`` overall, per category and per attribute (see module docstring).

    ``equal`` overrides the comparator for every pair; by default each pair uses :func:`equal_for` with the
    attribute's spec from ``templates`` (routed by the pair's category), or the untyped comparator.
    ``categories`` (sku_id → category) names the category of SKUs that have gold but no result.
    """
    cache: dict[tuple[str, str], Equal] = {}

    def resolve(category: str, attribute: str) -> Equal:
        if equal is not None:
            return equal
        if (category, attribute) not in cache:
            template = templates.for_category(category) if templates is not None else None
            spec = next((a for a in template.attributes if a.slug == attribute), None) if template else None
            cache[(category, attribute)] = equal_for(spec)
        return cache[(category, attribute)]

    if equal is not None:
        comparator_name = "custom"
    elif templates is not None:
        comparator_name = "groundtrace.core.evidence.normalize.values_equal (template kinds)"
    else:
        comparator_name = "groundtrace.core.evidence.normalize.values_equal (untyped)"
    outcomes, counts, issues = build_outcomes(
        results, gold, equal=resolve, categories=categories, scope=scope
    )
    per_category: dict[str, list[PairOutcome]] = defaultdict(list)
    per_attribute: dict[str, list[PairOutcome]] = defaultdict(list)
    for o in outcomes:
        per_category[o.category].append(o)
        per_attribute[o.attribute].append(o)
    return EvaluationReport(
        comparator=comparator_name,
        scope=scope,
        counts=counts,
        overall=summarise(outcomes),
        per_category={k: summarise(v) for k, v in sorted(per_category.items())},
        per_attribute={k: summarise(v) for k, v in sorted(per_attribute.items())},
        issues=issues,
    )
