"""The JudgeAgent: a stricter, per-SKU verification of every Scout candidate (seed 003, §3.3, Appendix A).

``judge.judge(sku, scout_result, template) -> {slug: Verdict}``. Two judges share this interface:
:class:`RuleJudge` (``rule``, offline, the default) and :class:`~groundtrace.catalog.judge.llm_judge.LLMJudge`
(``llm``). Both run :func:`deterministic_check` first; its FAIL cannot be overridden by any model.

**Deterministic checks** (extracted candidates only, no model asked):

* every evidence quote must be found in its STORED source Document (``ScoutResult.document``) with
  ``locate_quote(...).score >= 0.80``; an unknown source or a lower score → FAIL/HALLUCINATION;
* a quote lying inside an instruction-like sentence (``injection.instruction_spans``: "ignore previous
  instructions", "mark this product ...") is not evidence → FAIL/UNSAFE;
* an extracted value without any evidence → FAIL/HALLUCINATION;
* schema: a list for a single-valued attribute, a bool that does not parse, a number that does not
  parse (or not in the template unit's dimension) → FAIL/SCHEMA_MALFORMED; an enum value outside the
  allowed set → FAIL/INVALID_FORMAT.

``quote_verified`` is true when every quote passed (and at least one exists).

**The five ordered rules** (:class:`RuleJudge`; "support" = the offline extractor, run on the quote's
stored Document, finds the value inside the quoted span, or the quote states it literally):

1. abstentions (not_found, not_applicable, ambiguous, conflict, identity_mismatch) → PASS, unless the
   offline extractor finds one single clear value (explicit field or sentence naming the attribute,
   quality >= 0.85) in the stored internal evidence for a not_found/not_applicable candidate, or one
   explicit field value for ambiguous/conflict → FAIL/MISSING_EXTRACTION.
2. internal evidence (catalog, syndicated, image) directly supports the value → PASS (UNCERTAIN when
   another internal Document states a different value: rule 5); "directly" = an explicit ``key: value``
   field or a sentence naming the attribute (extractor quality >= 0.85). A value only *mentioned* (a
   vocabulary word or bare quantity in free text) is supported but not confirmed → UNVERIFIED.
   Internal evidence that states a different value and does not support it → FAIL/CONTRADICTION. No
   search.
3. web-only evidence: a quote on an exact-match page (identity matched with confidence >= 0.8, i.e.
   GTIN/MPN or brand+size+variant confirmed) that directly supports the value → PASS; otherwise search
   (brand + MPN + name + attribute, plus the GTIN) with the SearchProvider, keep only exact-match
   pages: confirmation → PASS, a different value → FAIL/INCORRECT_VALUE, both → UNCERTAIN (rule 5),
   only near-variants / generic pages / nothing → UNVERIFIED (FAIL/UNSUPPORTED_INFERENCE when the
   candidate's own web quote does not support it and nothing confirms it).
4. internal quotes that do not support the value → FAIL/UNSUPPORTED_INFERENCE; web evidence never
   rescues them.
5. material conflict among exact-match sources → UNCERTAIN.

**Independent statement check** (:mod:`groundtrace.catalog.judge.statement`, no extractor): a PASS under
rules 2 and 3 also needs one sentence holding the quote to name the attribute (a cue) AND state the
normalised value (numbers: an equal quantity in the template unit's dimension). The value only negated
there ("not organic", "free of peanuts") → FAIL/CONTRADICTION; only hedged ("may contain", "traces of"),
no cue in its sentence, or no such sentence → UNVERIFIED.

Partial support: a string value only part of whose words are quoted (the core, >= half) → UNVERIFIED;
a multi-valued value with an item no quote supports next to supported ones (an added fact) →
FAIL/PARTIAL_EXTRACTION.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from groundtrace.catalog import identity
from groundtrace.catalog.identity import extract_sizes
from groundtrace.catalog.judge.base import Judge
from groundtrace.catalog.judge.registry import JudgeContext
from groundtrace.catalog.judge.safety import is_safety, safety_review
from groundtrace.catalog.judge.statement import Statement, statement
from groundtrace.catalog.model import (
    SKU,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    CategoryTemplate,
    Document,
    Evidence,
    FailureType,
    Verdict,
    VerdictLabel,
)
from groundtrace.catalog.scout.agent import ScoutResult
from groundtrace.catalog.scout.injection import has_injection, instruction_spans
from groundtrace.catalog.scout.lexicon_engine import LexiconEngine, ParsedEvidence
from groundtrace.catalog.scout.lexicons import value_phrases
from groundtrace.catalog.scout.numbers import find_numbers
from groundtrace.catalog.scout.reconcile import same_value
from groundtrace.catalog.scout.sentences import overlaps
from groundtrace.catalog.sources.base import SearchProvider, SourceError
from groundtrace.catalog.sources.classify import classify_url
from groundtrace.core.evidence.normalize import (
    is_unitless,
    parse_bool,
    parse_quantity,
    parse_unit,
    same_dimension,
)
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, locate_quote, normalize_text

log = logging.getLogger(__name__)

INTERNAL_SOURCES = frozenset({"catalog", "syndicated", "image"})
CLEAR_QUALITY = 0.85
DIRECT_QUALITY = 0.85  # explicit "key: value" field or a sentence naming the attribute
LITERAL_QUALITY = 0.75
EXACT_MATCH_CONFIDENCE = 0.8
STATEMENT_ORDER: dict[str, int] = {"stated": 0, "negated": 1, "hedged": 2, "no_cue": 3, "absent": 4}
STATEMENT_WHY = {
    "hedged": "only a precautionary statement (may contain / traces / facility)",
    "no_cue": "no quoted sentence names both the attribute and the value",
    "absent": "no quoted sentence states the normalised value (with the template unit)",
}


def verdict(
    candidate: Candidate,
    label: VerdictLabel,
    reasoning: str,
    *,
    failure: FailureType | None = None,
    quote_verified: bool = False,
    url: str | None = None,
    judge: str = "rule",
) -> Verdict:
    """A Verdict for ``candidate`` (reasoning cut to 30 words by the model)."""
    return Verdict(
        sku_id=candidate.sku_id,
        attribute=candidate.attribute,
        verdict=label,
        failure_type=failure,
        reasoning=reasoning,
        url=url,
        quote_verified=quote_verified,
        judge=judge,
    )


def _items(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


# -- deterministic checks --------------------------------------------------------------------------------
def verify_quotes(candidate: Candidate, scout: ScoutResult) -> tuple[bool, str | None, FailureType | None]:
    """``(quote_verified, problem, failure)``: every quote in its stored Document at >= 0.80 and not
    inside an instruction-like sentence."""
    if not candidate.evidence:
        return False, "extracted value carries no evidence", FailureType.HALLUCINATION
    for ev in candidate.evidence:
        doc = scout.document(ev.source_ref)
        if doc is None:
            return (
                False,
                f"quote source {ev.source_ref[:60]} is not a stored document",
                FailureType.HALLUCINATION,
            )
        if not ev.quote.strip():
            return False, f"empty quote for {ev.source_ref[:60]}", FailureType.HALLUCINATION
        match = locate_quote(ev.quote, doc.text)
        if match.score < GROUNDED_THRESHOLD:
            return (
                False,
                (
                    f"quote not found in {ev.source_ref[:60]} "
                    f"(score {match.score:.2f} < {GROUNDED_THRESHOLD:.2f})"
                ),
                FailureType.HALLUCINATION,
            )
        if overlaps((match.start, match.end), instruction_spans(doc.text)):
            return (
                False,
                "quote is instruction-like text (prompt injection), not evidence",
                FailureType.UNSAFE,
            )
    return True, None, None


def check_schema(candidate: Candidate, spec: AttributeSpec) -> tuple[str, FailureType] | None:
    """A schema/enum problem of an extracted value, or ``None`` (module docstring)."""
    value = candidate.value
    if isinstance(value, list) and not spec.multi_valued:
        return "list value for a single-valued attribute", FailureType.SCHEMA_MALFORMED
    for item in _items(value):
        if spec.type == "enum" and spec.allowed_values:
            if not any(same_value(item, allowed, spec) for allowed in spec.allowed_values):
                return f"{item!r} is not an allowed value", FailureType.INVALID_FORMAT
        elif spec.type == "bool" and parse_bool(item) is None:
            return f"{item!r} is not a boolean", FailureType.SCHEMA_MALFORMED
        elif spec.type == "number":
            qty = parse_quantity(item)
            if qty is None:
                return f"{item!r} is not a number", FailureType.SCHEMA_MALFORMED
            target = parse_unit(spec.unit) if spec.unit else None
            if target is not None and not is_unitless(qty) and not same_dimension(qty, target):
                return f"{item!r} is not expressible in {spec.unit}", FailureType.SCHEMA_MALFORMED
    return None


def deterministic_check(
    candidate: Candidate, spec: AttributeSpec, scout: ScoutResult, judge: str = "rule"
) -> tuple[Verdict | None, bool]:
    """``(FAIL verdict or None, quote_verified)`` for one candidate; abstentions pass through (None,
    False)."""
    if candidate.status != CandidateStatus.EXTRACTED or candidate.value is None:
        return None, False
    verified, problem, failure = verify_quotes(candidate, scout)
    if problem is not None:
        return verdict(candidate, VerdictLabel.FAIL, problem, failure=failure, judge=judge), False
    schema = check_schema(candidate, spec)
    if schema is not None:
        return verdict(
            candidate, VerdictLabel.FAIL, schema[0], failure=schema[1], quote_verified=verified, judge=judge
        ), verified
    return None, verified


# -- support -------------------------------------------------------------------------------------------
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset({"a", "an", "the", "and", "of", "with", "for", "in", "on", "to", "or", "by"})


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(normalize_text(text).replace("_", " ")) if w not in _STOP]


def literal_support(item: str, quote: str, spec: AttributeSpec) -> float:
    """Share of ``item``'s words stated in ``quote`` (1.0 = fully stated); numbers compare as quantities."""
    if spec.type == "number":
        for size in extract_sizes(quote):
            if same_value(item, size.text, spec):
                return 1.0
        numbers = [repr(n.value) for n in find_numbers(quote) if not n.ambiguous]
        return (
            1.0
            if parse_quantity(item) is not None and any(same_value(item, n, spec) for n in numbers)
            else 0.0
        )
    if spec.type == "bool":
        return 0.0
    qwords = set(_words(quote))
    best = 0.0
    for phrase in value_phrases(item):
        words = _words(phrase)
        if words:
            best = max(best, sum(w in qwords for w in words) / len(words))
    return best


_TEMPLATE_CONTEXT: dict[int, tuple[CategoryTemplate, list[AttributeSpec], tuple[str, ...]]] = {}


def _template_context(template: CategoryTemplate) -> tuple[list[AttributeSpec], tuple[str, ...]]:
    """``(attributes, their slugs)`` of a template, built once per template object (checked by identity,
    so a template created later at a reused id gets its own entry; templates are never changed in place)."""
    entry = _TEMPLATE_CONTEXT.get(id(template))
    if entry is None or entry[0] is not template:
        if len(_TEMPLATE_CONTEXT) >= 512:
            _TEMPLATE_CONTEXT.clear()
        attrs = list(template.attributes)
        entry = _TEMPLATE_CONTEXT[id(template)] = (template, attrs, tuple(a.slug for a in attrs))
    return entry[1], entry[2]


class Supporter:
    """Does stored evidence state a value? The offline extractor (cached per Document) plus literal match."""

    def __init__(
        self,
        sku: SKU,
        spec: AttributeSpec,
        template: CategoryTemplate,
        extractor: LexiconEngine | None = None,
        parsed: ParsedEvidence | None = None,
    ) -> None:
        self.sku, self.spec, self.template = sku, spec, template
        self.extractor = extractor or LexiconEngine()
        self.parsed = parsed if parsed is not None else ParsedEvidence()
        self._cache: dict[tuple[str, str], list[Any]] = {}

    def findings(self, doc: Document) -> list[Any]:
        """The extractor's findings for this attribute in ``doc`` — read from the SKU's
        :class:`ParsedEvidence` (what the offline Scout already extracted) when the extractor is the plain
        offline engine, else ``extractor.extract(sku, [spec], [doc])``; equal either way."""
        key = (doc.source_ref, doc.text)
        if key not in self._cache:
            attrs, context_key = _template_context(self.template)
            if type(self.extractor) is LexiconEngine:
                found = self.extractor.findings_in(self.spec, doc, attrs, self.parsed, context_key)
            else:
                found = self.extractor.extract(
                    self.sku, [self.spec], [doc], template_attributes=attrs
                ).findings
            self._cache[key] = [f for f in found if f.attribute == self.spec.slug]
        return self._cache[key]

    def support(self, item: str, ev: Evidence, doc: Document) -> float:
        """1.0 when the extractor finds ``item`` overlapping the quote (or the quote states it fully);
        the literal word share otherwise."""
        match = locate_quote(ev.quote, doc.text)
        span = (match.start, match.end)
        for f in self.findings(doc):
            if (
                f.evidence.span is not None
                and overlaps(f.evidence.span, [span])
                and same_value(item, f.value, self.spec)
            ):
                return 1.0
        return literal_support(item, ev.quote, self.spec)

    def strength(self, item: str, ev: Evidence, doc: Document) -> float:
        """How directly the quote states ``item``: the extractor's quality of an equal finding overlapping
        the quote (1.0 explicit field, 0.85 sentence naming the attribute, 0.75 vocabulary mention, 0.6
        bare quantity); a quote that merely contains every word of the value counts 0.75; 0 = not stated."""
        match = locate_quote(ev.quote, doc.text)
        span = (match.start, match.end)
        best = max(
            (
                f.quality
                for f in self.findings(doc)
                if f.evidence.span is not None
                and overlaps(f.evidence.span, [span])
                and same_value(item, f.value, self.spec)
            ),
            default=0.0,
        )
        if best == 0.0 and literal_support(item, ev.quote, self.spec) >= 1.0:
            best = LITERAL_QUALITY
        return best

    def stated(self, docs: list[Document], min_quality: float = CLEAR_QUALITY) -> list[tuple[str, Document]]:
        """Clear values (quality >= ``min_quality``) the extractor finds in ``docs``."""
        return [(f.value, d) for d in docs for f in self.findings(d) if f.quality >= min_quality]

    def equal(self, a: str, b: str) -> bool:
        return same_value(a, b, self.spec)


def _distinct(values: list[str], equal: Any) -> list[str]:
    out: list[str] = []
    for v in values:
        if not any(equal(v, o) for o in out):
            out.append(v)
    return out


class _Case:
    """One extracted candidate under judgement: its items, the support measures and the verdict maker."""

    def __init__(
        self, candidate: Candidate, spec: AttributeSpec, sup: Supporter, verified: bool, judge: str
    ) -> None:
        self.candidate, self.spec, self.sup = candidate, spec, sup
        self.verified, self.judge = verified, judge
        self.items = _items(candidate.value)

    def verdict(
        self, label: VerdictLabel, why: str, failure: FailureType | None = None, url: str | None = None
    ) -> Verdict:
        return verdict(
            self.candidate,
            label,
            why,
            failure=failure,
            quote_verified=self.verified,
            url=url,
            judge=self.judge,
        )

    def item_support(self, item: str, evs: list[tuple[Evidence, Document]]) -> float:
        return max((self.sup.support(item, ev, d) for ev, d in evs), default=0.0)

    def direct(self, evs: list[tuple[Evidence, Document]]) -> bool:
        """Every item is stated at :data:`DIRECT_QUALITY` or better by some evidence in ``evs``."""
        return all(
            max((self.sup.strength(i, ev, d) for ev, d in evs), default=0.0) >= DIRECT_QUALITY
            for i in self.items
        )

    def stated(self, evs: list[tuple[Evidence, Document]]) -> tuple[Statement, str]:
        """The weakest item's best statement over ``evs`` (judge_statement, no extractor)."""
        worst: tuple[Statement, str] = ("stated", "")
        for i in self.items:
            best = min(
                (statement(i, ev.quote, d, self.spec) for ev, d in evs),
                key=STATEMENT_ORDER.__getitem__,
                default="absent",
            )
            if STATEMENT_ORDER[best] > STATEMENT_ORDER[worst[0]]:
                worst = (best, i)
        return worst


# -- the rule-based judge ------------------------------------------------------------------------------
class RuleJudge(Judge):
    """The seed's five ordered rules, deterministic (module docstring). ``search`` enables rule 3. Makes no
    LLM calls: its ledger ``calls`` stays 0."""

    name = "rule"

    @classmethod
    def from_context(cls, context: JudgeContext) -> RuleJudge:
        """The rule judge of an enrich run: its search provider (rule 3) and options."""
        return cls(context.search, **context.options)

    def __init__(
        self,
        search: SearchProvider | None = None,
        *,
        extractor: LexiconEngine | None = None,
        hits_per_query: int = 5,
    ) -> None:
        self.search = search
        self.extractor = extractor or LexiconEngine()
        self.hits_per_query = hits_per_query

    def judge(self, sku: SKU, scout: ScoutResult, template: CategoryTemplate) -> dict[str, Verdict]:
        out: dict[str, Verdict] = {}
        page_cache: dict[str, Any] = {}
        for slug, candidate in scout.candidates.items():
            spec = template.attribute(slug)
            failed, verified = deterministic_check(candidate, spec, scout, self.name)
            if failed is not None:
                out[slug] = failed
                continue
            judged = self.judge_one(sku, candidate, spec, scout, template, verified, page_cache)
            out[slug] = safety_review(sku, candidate, spec, scout, judged, exact_match=self._exact)
        return out

    def judge_one(
        self,
        sku: SKU,
        candidate: Candidate,
        spec: AttributeSpec,
        scout: ScoutResult,
        template: CategoryTemplate,
        verified: bool,
        page_cache: dict[str, Any] | None = None,
    ) -> Verdict:
        """Rules 1-5 for one candidate that passed :func:`deterministic_check`."""
        sup = Supporter(sku, spec, template, self.extractor, scout.parsed_evidence())
        internal_docs = [d for d in scout.documents if d.source in INTERNAL_SOURCES]
        if candidate.status != CandidateStatus.EXTRACTED or candidate.value is None:
            return self._rule1(candidate, sup, internal_docs)
        case = _Case(candidate, spec, sup, verified, self.name)
        located = [(ev, scout.document(ev.source_ref)) for ev in candidate.evidence]
        pairs: list[tuple[Evidence, Document]] = [(ev, d) for ev, d in located if d is not None]
        internal = [(ev, d) for ev, d in pairs if ev.source in INTERNAL_SOURCES]
        if internal:
            # rules 2, 4 and 5 on own evidence; web never rescues an unsupported internal claim
            return self._judge_internal(case, internal, internal_docs)
        web = [(ev, d) for ev, d in pairs if ev.source == "web"]
        return self._judge_web(case, sku, template, web, page_cache if page_cache is not None else {})

    @staticmethod
    def _judge_internal(
        case: _Case, internal: list[tuple[Evidence, Document]], internal_docs: list[Document]
    ) -> Verdict:
        """Rules 2, 4 and 5: the candidate's own (catalog / feed / image) evidence."""
        v, items, spec = case.verdict, case.items, case.spec
        scores = [case.item_support(i, internal) for i in items]
        other = [
            val for val, _ in case.sup.stated(internal_docs) if not any(case.sup.equal(val, i) for i in items)
        ]
        if all(s >= 1.0 for s in scores):
            if other and not spec.multi_valued:
                return v(
                    VerdictLabel.UNCERTAIN, f"internal sources also state {other[0]!r}: material conflict"
                )
            if not case.direct(internal):
                return v(
                    VerdictLabel.UNVERIFIED,
                    "value is mentioned, but no field or sentence states it as this attribute",
                )
            how, item = case.stated(internal)
            if how == "negated":
                return v(
                    VerdictLabel.FAIL, f"the quoted sentence negates {item!r}", FailureType.CONTRADICTION
                )
            if how != "stated":
                return v(VerdictLabel.UNVERIFIED, f"{item!r}: {STATEMENT_WHY[how]}")
            return v(VerdictLabel.PASS, "internal evidence directly supports the value")
        if any(s >= 1.0 for s in scores) and spec.multi_valued:
            missing = [i for i, s in zip(items, scores, strict=True) if s < 1.0]
            return v(
                VerdictLabel.FAIL,
                f"added items without evidence: {', '.join(missing)}",
                FailureType.PARTIAL_EXTRACTION,
            )
        if other and not any(s >= 0.5 for s in scores):
            return v(
                VerdictLabel.FAIL, f"internal evidence states {other[0]!r} instead", FailureType.CONTRADICTION
            )
        if scores and min(scores) >= 0.5 and spec.type == "string":
            return v(VerdictLabel.UNVERIFIED, "internal quote supports only part of the value")
        return v(
            VerdictLabel.FAIL, "internal quote does not support the value", FailureType.UNSUPPORTED_INFERENCE
        )

    def _judge_web(
        self,
        case: _Case,
        sku: SKU,
        template: CategoryTemplate,
        web: list[tuple[Evidence, Document]],
        page_cache: dict[str, Any],
    ) -> Verdict:
        """Rule 3: web-sourced evidence, confirmed by an exact-match page (quoted or found by search)."""
        v, items, spec = case.verdict, case.items, case.spec
        scores = [case.item_support(i, web) for i in items]
        exact_urls = [d.source_ref for ev, d in web if self._exact(sku, d)]
        if all(s >= 1.0 for s in scores) and exact_urls and case.direct(web):
            how, item = case.stated(web)
            if how == "negated":
                return v(
                    VerdictLabel.FAIL,
                    f"the quoted sentence negates {item!r}",
                    FailureType.CONTRADICTION,
                    url=exact_urls[0],
                )
            if how == "stated":
                return v(VerdictLabel.PASS, "exact-match product page states the value", url=exact_urls[0])
        confirm, contradict = self._search(sku, case.candidate, spec, template, case.sup, page_cache)
        if confirm and contradict:
            return v(VerdictLabel.UNCERTAIN, "exact-match pages disagree on the value", url=confirm[0])
        if contradict:
            return v(
                VerdictLabel.FAIL,
                f"exact-match page states {contradict[0][0]!r}",
                FailureType.INCORRECT_VALUE,
                url=contradict[0][1],
            )
        if confirm:
            return v(
                VerdictLabel.PASS, "search found an exact-match page confirming the value", url=confirm[0]
            )
        if spec.multi_valued and any(s >= 1.0 for s in scores) and any(s < 1.0 for s in scores):
            return v(
                VerdictLabel.FAIL,
                "items added beyond what the web quote states",
                FailureType.PARTIAL_EXTRACTION,
            )
        if not any(s >= 0.5 for s in scores):
            return v(
                VerdictLabel.FAIL,
                "web quote does not state the value and nothing confirms it",
                FailureType.UNSUPPORTED_INFERENCE,
            )
        return v(VerdictLabel.UNVERIFIED, "plausible web evidence, no exact-match confirmation")

    # -- rule 1 ----------------------------------------------------------------------------------------
    def _rule1(self, candidate: Candidate, sup: Supporter, internal_docs: list[Document]) -> Verdict:
        status = candidate.status.value
        if candidate.status in (CandidateStatus.NOT_FOUND, CandidateStatus.NOT_APPLICABLE):
            values = _distinct([val for val, _ in sup.stated(internal_docs)], sup.equal)
            if len(values) == 1 or (values and sup.spec.multi_valued):
                return verdict(
                    candidate,
                    VerdictLabel.FAIL,
                    f"{status}, but internal evidence clearly states {values[0]!r}",
                    failure=FailureType.MISSING_EXTRACTION,
                    judge=self.name,
                )
        elif candidate.status in (CandidateStatus.AMBIGUOUS, CandidateStatus.CONFLICT):
            values = _distinct([val for val, _ in sup.stated(internal_docs, 1.0)], sup.equal)
            if len(values) == 1 and not sup.spec.multi_valued:
                return verdict(
                    candidate,
                    VerdictLabel.FAIL,
                    f"{status}, but one explicit field states {values[0]!r}",
                    failure=FailureType.MISSING_EXTRACTION,
                    judge=self.name,
                )
        return verdict(candidate, VerdictLabel.PASS, f"abstention ({status}) is reasonable", judge=self.name)

    # -- rule 3 search ---------------------------------------------------------------------------------
    @staticmethod
    def _exact(sku: SKU, doc: Document) -> bool:
        result = identity.identity_match(sku, doc)
        return result.matched and result.confidence >= EXACT_MATCH_CONFIDENCE

    def queries(self, sku: SKU, spec: AttributeSpec) -> list[str]:
        """brand + MPN + name + attribute, then the GTIN (seed Appendix A, rule 3)."""
        title = sku.title.strip()
        brand = (sku.brand or "").strip()
        if brand and title.lower().startswith(brand.lower()):
            title = title[len(brand) :].strip()
        out = [" ".join(p for p in (brand, sku.mpn, title, spec.name) if p)]
        if sku.gtin and identity.valid_gtin(sku.gtin):
            out.append(sku.gtin.strip())
        return out

    def _search(
        self,
        sku: SKU,
        candidate: Candidate,
        spec: AttributeSpec,
        template: CategoryTemplate,
        sup: Supporter,
        cache: dict[str, Any],
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """(confirming URLs, [(other value, URL)]) from exact-match pages found by searching."""
        if self.search is None:
            return [], []

        confirm: list[str] = []
        contradict: list[tuple[str, str]] = []
        items = _items(candidate.value)
        for query in self.queries(sku, spec):
            key = "query\x00" + query
            if key not in cache:  # the per-SKU cache also holds query hits (the GTIN query repeats)
                try:
                    cache[key] = self.search.search(query, self.hits_per_query)
                except SourceError as exc:
                    log.warning("judge search failed for %s: %s", sku.sku_id, exc)
                    cache[key] = []
            hits = cache[key]
            for hit in hits:
                if classify_url(hit.url, sku.brand) is None:
                    continue  # blogs/forums/UGC are never evidence
                if hit.url not in cache:
                    doc = self.search.fetch(hit.url)
                    cache[hit.url] = (doc, doc is not None and self._exact(sku, doc))
                doc, exact = cache[hit.url]
                if doc is None or not exact or hit.url in confirm or any(u == hit.url for _, u in contradict):
                    continue
                if is_safety(spec) and has_injection(doc.text):
                    continue  # a page carrying an injection is no evidence for a safety-critical value
                values = [val for val, _ in sup.stated([doc], 0.75)]
                if not values:
                    continue
                if all(any(sup.equal(i, val) for val in values) for i in items):
                    confirm.append(hit.url)
                elif not spec.multi_valued:
                    contradict.append((values[0], hit.url))
        return confirm, contradict
