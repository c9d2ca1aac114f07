"""The ScoutAgent (Algorithm 1 of the seed): own evidence first, identity-matched web search for gaps.

``ScoutAgent(templates, sources, search, engine).scout(sku) -> ScoutResult``:

1. ``A_s ← Template(s)``; no template → an empty result (``template=None``, no candidates).
2. ``E ← Catalog(s) ∪ Syndicated(s) ∪ Image(s)``: every configured :class:`EvidenceSource`; the engine
   extracts all attributes from them and :func:`~groundtrace.catalog.scout.reconcile.reconcile` decides.
3. Only attributes still ``not_found`` go to the web (web fills gaps; an ambiguous or conflicting
   catalog is not "fixed" from the web). Per attribute, queries in the seed's order: UPC/GTIN →
   brand + name (+ variant, already in the title) → brand + MPN → manufacturer site → attribute query.
   Identical queries run once per SKU. Hits are visited in source preference order (official >
   major retailer > retailer > aggregator > other); blogs/forums/UGC are never fetched.
4. Every fetched page passes ``identity_match(sku, page)`` before any use. Rejected pages never reach
   the engine; they are only scanned by the offline lexicon to record that they *would* have
   answered (→ ``identity_mismatch`` when that was all there was). An attribute stops searching as soon
   as the lexicon finds a value on a matched page, or after ``max_queries`` queries for the SKU.
5. The engine extracts the unresolved attributes from the matched pages (one more call for LLM
   engines) and everything is reconciled again. Every step is logged in ``search_steps``.
6. Product lines and variants (``identity_match``'s ``relation``): a page of another product line of the
   brand is only a rejection (``identity_mismatch``, its differing words in the note). A *sibling-variant*
   page (same line, another flavour / diet / size / capacity ...) may propose only an attribute the
   template marks ``variant_invariant`` that nothing else answered, read by the offline probe (never sent
   to an LLM), its note flagged :data:`~groundtrace.catalog.identity.FLAG_SIBLING_VARIANT` so that every
   write policy routes it to REVIEW.
7. Conflicts: a page matched by GTIN that states, in an explicit field, another value than the catalog's
   turns that attribute into a ``conflict`` with both sides' evidence (reconcile rule 5; REVIEW). With
   nothing unresolved, a SKU with a valid GTIN still runs its GTIN query (one query) to find such pages.

``ScoutResult.documents`` holds every Document a candidate's evidence may refer to (own evidence and
identity-matched pages), so the Judge can re-check each quote against the stored source text.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from groundtrace.catalog import identity
from groundtrace.catalog.model import (
    SKU,
    SOURCE_TYPE_RANK,
    AttributeSpec,
    Candidate,
    CandidateStatus,
    Document,
)
from groundtrace.catalog.scout.engine import EngineOutput, ExtractionEngine, Finding
from groundtrace.catalog.scout.lexicon_engine import LexiconEngine, ParsedEvidence
from groundtrace.catalog.scout.reconcile import reconcile
from groundtrace.catalog.sources.base import EvidenceSource, SearchProvider, SourceError
from groundtrace.catalog.sources.classify import SourcePolicy, classify_url

log = logging.getLogger(__name__)

QueryKind = Literal["gtin", "brand_name_variant", "mpn", "manufacturer_site", "attribute"]
HitDecisionKind = Literal["used", "blocked", "identity_rejected", "fetch_failed", "seen_before"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HitDecision(_Model):
    url: str
    title: str = ""
    source_type: str | None = None
    decision: HitDecisionKind
    reason: str = ""


class SearchStep(_Model):
    """One query sent to the search provider and what happened to each hit."""

    attribute: str
    kind: QueryKind
    query: str
    hits: list[HitDecision] = Field(default_factory=list)
    cached: bool = Field(
        default=False, description="Same query already ran for this SKU; hits not re-listed."
    )
    error: str = ""


class PageIdentity(_Model):
    url: str
    source_type: str
    matched: bool
    reason: str
    confidence: float
    checks: dict[str, bool | None] = Field(default_factory=dict)
    relation: str = Field(default="unknown", description="same / sibling_variant / other_product / unknown.")
    differing: list[str] = Field(
        default_factory=list, description="'-word' SKU title only, '+word' page only."
    )


class WebPages(_Model):
    """What the web step found: identity-matched pages, sibling-variant pages (same line, another
    variant), other rejected pages, each rejection's reason, and the URLs matched by GTIN."""

    matched: list[Document] = Field(default_factory=list)
    siblings: list[Document] = Field(default_factory=list)
    rejected: list[Document] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict)
    gtin_matched: set[str] = Field(default_factory=set)


class IdentitySummary(_Model):
    """The SKU's identifiers and the identity decision on every page the Scout fetched."""

    gtin: str | None = None
    gtin_valid: bool | None = None
    mpn: str | None = None
    brand: str | None = None
    pages_checked: int = 0
    pages_matched: int = 0
    pages_rejected: int = 0
    pages: list[PageIdentity] = Field(default_factory=list)
    engine_identity: dict[str, Any] | None = Field(default=None, description="LLM engine's identity block.")


class ScoutResult(_Model):
    """Everything the Judge and the write policy need about one SKU."""

    sku_id: str
    category: str
    template: str | None = Field(default=None, description="Template category; None = no template, no work.")
    engine: str = ""
    candidates: dict[str, Candidate] = Field(default_factory=dict)
    identity: IdentitySummary = Field(default_factory=IdentitySummary)
    documents: list[Document] = Field(default_factory=list)
    search_steps: list[SearchStep] = Field(default_factory=list)
    flags: dict[str, list[str]] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    _parsed: ParsedEvidence | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Field equality: the parse memo is a cache and never makes two results differ."""
        if not isinstance(other, ScoutResult):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # mutable model, as BaseModel

    def parsed_evidence(self) -> ParsedEvidence:
        """This SKU's parsed Documents and offline extractions (filled by an offline Scout, reused by the
        Judge instead of re-extracting; created empty on first use). Not serialised."""
        private = self.__pydantic_private__  # read directly: pydantic's __getattr__ costs microseconds
        parsed = private.get("_parsed") if private is not None else None
        if parsed is None:
            parsed = self._parsed = ParsedEvidence()
        return parsed

    def document(self, source_ref: str) -> Document | None:
        """The stored Document a piece of evidence points to (``None`` when unknown)."""
        for doc in self.documents:
            if doc.source_ref == source_ref:
                return doc
        return None


def build_queries(
    sku: SKU, spec: AttributeSpec, policy: SourcePolicy | None = None
) -> list[tuple[QueryKind, str]]:
    """The seed's query order for one attribute: GTIN → brand+name(+variant) → MPN → site → attribute."""
    policy = policy or SourcePolicy()
    brand = (sku.brand or "").strip()
    title = sku.title.strip()
    name = title if not brand or title.lower().startswith(brand.lower()) else f"{brand} {title}"
    queries: list[tuple[QueryKind, str]] = []
    if sku.gtin and identity.valid_gtin(sku.gtin):
        queries.append(("gtin", sku.gtin.strip()))
    queries.append(("brand_name_variant", name))
    if sku.mpn:
        queries.append(("mpn", f"{brand} {sku.mpn}".strip()))
    if brand:
        domains = policy.official_for(brand)
        queries.append(
            (
                "manufacturer_site",
                f"site:{domains[0]} {title}" if domains else f"{brand} official site {title}",
            )
        )
    queries.append(("attribute", f"{name} {spec.name}"))
    return queries


def _rank(source_type: str | None) -> int:
    return 99 if source_type is None else SOURCE_TYPE_RANK.get(source_type, 50)


class ScoutAgent:
    """Algorithm 1 of the seed for one SKU at a time (see module docstring)."""

    def __init__(
        self,
        templates: Any,
        sources: list[EvidenceSource],
        search: SearchProvider | None = None,
        engine: ExtractionEngine | None = None,
        *,
        policy: SourcePolicy | None = None,
        hits_per_query: int = 5,
        max_queries: int = 12,
    ) -> None:
        self.templates = templates
        self.sources = list(sources)
        self.search = search
        self.engine: ExtractionEngine = engine or LexiconEngine()
        self.policy = policy or SourcePolicy()
        self.hits_per_query = hits_per_query
        self.max_queries = max_queries
        self._probe = LexiconEngine()

    # -- Algorithm 1 --------------------------------------------------------------------------------
    def scout(self, sku: SKU) -> ScoutResult:
        template = self.templates.for_category(sku.category)
        ident = IdentitySummary(
            gtin=sku.gtin,
            gtin_valid=identity.valid_gtin(sku.gtin) if sku.gtin else None,
            mpn=sku.mpn,
            brand=sku.brand,
        )
        engine_name = getattr(self.engine, "name", type(self.engine).__name__)
        result = ScoutResult(sku_id=sku.sku_id, category=sku.category, engine=engine_name, identity=ident)
        if template is None or not template.attributes:
            return result
        result.template = template.category
        attributes = list(template.attributes)

        own_docs = self._own_documents(sku, result)
        own = self._extract(self.engine, result, sku, attributes, own_docs)
        self._absorb(result, own)
        candidates = reconcile(
            sku.sku_id, attributes, own.findings, abstentions=own.abstentions, engine=engine_name
        )
        result.documents = list(own_docs)

        unresolved = [a for a in attributes if candidates[a.slug].status == CandidateStatus.NOT_FOUND]
        gtin_check = not unresolved and bool(sku.gtin and identity.valid_gtin(sku.gtin))
        if self.search is not None and (unresolved or gtin_check):
            # nothing unresolved: only the GTIN query runs, to look for GTIN-matched pages that disagree
            pages = self._web(sku, unresolved or attributes[:1], attributes, result, gtin_only=gtin_check)
            if unresolved:
                candidates.update(self._fill_gaps(sku, unresolved, attributes, own, pages, result))
            self._conflicts_with_pages(sku, attributes, own, pages, candidates, result)
            result.documents.extend(pages.matched)
        result.candidates = candidates
        return result

    def _fill_gaps(
        self,
        sku: SKU,
        unresolved: list[AttributeSpec],
        attributes: list[AttributeSpec],
        own: EngineOutput,
        pages: WebPages,
        result: ScoutResult,
    ) -> dict[str, Candidate]:
        """Candidates of the unresolved attributes from identity-matched pages; a variant-invariant attribute
        still without one may take a sibling-variant page's value (read by the offline probe, never sent to an
        LLM), flagged for REVIEW (:data:`~groundtrace.catalog.identity.FLAG_SIBLING_VARIANT`)."""
        engine_name = result.engine
        web = (
            self._extract(self.engine, result, sku, unresolved, pages.matched, attributes)
            if pages.matched
            else EngineOutput()
        )
        self._absorb(result, web)
        others = pages.rejected + pages.siblings
        rejected_findings = (
            self._extract(self._probe, result, sku, unresolved, others, attributes).findings if others else []
        )
        own_by_attr = [f for f in own.findings if f.attribute in {a.slug for a in unresolved}]
        abstentions = {**own.abstentions, **web.abstentions}
        out = reconcile(
            sku.sku_id,
            unresolved,
            own_by_attr + web.findings,
            rejected_findings,
            abstentions,
            engine_name,
            rejected_reasons=pages.reasons,
            gtin_matched=pages.gtin_matched,
        )
        invariant = [
            a for a in unresolved if a.variant_invariant and out[a.slug].status != CandidateStatus.EXTRACTED
        ]
        if invariant and pages.siblings:
            # the offline probe reads them: a rejected page is never sent to an LLM engine
            lent = self._extract(self._probe, result, sku, invariant, pages.siblings, attributes)
            for spec in invariant:
                findings = [f for f in lent.findings if f.attribute == spec.slug]
                if not findings:
                    continue
                cand = reconcile(sku.sku_id, [spec], findings, engine=engine_name)[spec.slug]
                if cand.status == CandidateStatus.EXTRACTED:
                    refs = ", ".join(sorted({f.evidence.source_ref for f in findings})[:3])
                    note = (
                        f"{identity.FLAG_SIBLING_VARIANT}: value from a sibling-variant page of the same "
                        f"product line ({refs}; {pages.reasons.get(findings[0].evidence.source_ref, '')}); "
                        "a person must confirm it"
                    )
                    out[spec.slug] = cand.model_copy(
                        update={"note": "; ".join(n for n in (note, cand.note) if n)}
                    )
                    result.documents.extend(d for d in pages.siblings if d not in result.documents)
        return out

    def _conflicts_with_pages(
        self,
        sku: SKU,
        attributes: list[AttributeSpec],
        own: EngineOutput,
        pages: WebPages,
        candidates: dict[str, Candidate],
        result: ScoutResult,
    ) -> None:
        """A catalog value that a GTIN-matched page contradicts (an explicit field naming another value)
        becomes a ``conflict`` candidate with both sides' evidence (reconcile rule 5): never written
        silently, shown to a person."""
        gtin_docs = [d for d in pages.matched if d.source_ref in pages.gtin_matched]
        if not gtin_docs:
            return
        checked = [
            a
            for a in attributes
            if not a.multi_valued
            and candidates[a.slug].status == CandidateStatus.EXTRACTED
            and candidates[a.slug].evidence
            and candidates[a.slug].evidence[0].source == "catalog"
        ]
        if not checked:
            return
        found = self._probe.extract(sku, checked, gtin_docs, template_attributes=attributes).findings
        for spec in checked:
            extra = [f for f in found if f.attribute == spec.slug and f.explicit]
            if not extra:
                continue
            mine = [f for f in own.findings if f.attribute == spec.slug]
            cand = reconcile(
                sku.sku_id, [spec], mine + extra, engine=result.engine, gtin_matched=pages.gtin_matched
            )[spec.slug]
            if cand.status == CandidateStatus.CONFLICT:
                candidates[spec.slug] = cand  # its page joins result.documents with every matched page

    # -- steps --------------------------------------------------------------------------------------
    @staticmethod
    def _extract(
        engine: ExtractionEngine,
        result: ScoutResult,
        sku: SKU,
        attributes: list[AttributeSpec],
        docs: list[Document],
        template_attributes: list[AttributeSpec] | None = None,
    ) -> EngineOutput:
        """``engine.extract``; the offline engine (exactly :class:`LexiconEngine`, not a subclass that may
        change the signature) and an engine that says it takes them (``shares_parsed_evidence``: the learned
        engine, which adds to the offline one) record their parses in ``result.parsed_evidence()`` for the
        Judge."""
        if type(engine) is LexiconEngine or getattr(engine, "shares_parsed_evidence", False) is True:
            return engine.extract(
                sku,
                attributes,
                docs,
                template_attributes=template_attributes,
                parsed=result.parsed_evidence(),
            )
        if template_attributes is None:
            return engine.extract(sku, attributes, docs)
        return engine.extract(sku, attributes, docs, template_attributes=template_attributes)

    def _own_documents(self, sku: SKU, result: ScoutResult) -> list[Document]:
        docs: list[Document] = []
        for source in self.sources:
            per_sku = getattr(source, "documents_and_issues", None)
            try:
                if per_sku is not None:  # issues of this SKU only (thread-safe; e.g. a refused image path)
                    found, issues = per_sku(sku)
                    docs.extend(found)
                    result.errors.extend(e for e in issues if e not in result.errors)
                    continue
                docs.extend(source.documents(sku))
            except SourceError as exc:
                result.errors.append(f"{getattr(source, 'name', type(source).__name__)}: {exc}")
                log.warning("evidence source failed for %s: %s", sku.sku_id, exc)
            errors = getattr(source, "errors", None)  # run-level problems (a feed's bad rows)
            if errors:
                result.errors.extend(e for e in errors if e not in result.errors)
        seen: set[str] = set()
        unique = []
        for doc in docs:
            if doc.source_ref not in seen:
                seen.add(doc.source_ref)
                unique.append(doc)
        return unique

    @staticmethod
    def _absorb(result: ScoutResult, out: EngineOutput) -> None:
        for slug, flags in out.flags.items():
            bucket = result.flags.setdefault(slug, [])
            bucket.extend(f for f in flags if f not in bucket)
        if out.identity is not None:
            result.identity.engine_identity = out.identity
        result.llm_calls += out.calls

    def _web(
        self,
        sku: SKU,
        unresolved: list[AttributeSpec],
        attributes: list[AttributeSpec],
        result: ScoutResult,
        *,
        gtin_only: bool = False,
    ) -> WebPages:
        assert self.search is not None
        hits_cache: dict[str, list[Any]] = {}
        pages: dict[str, tuple[Document | None, bool]] = {}  # url -> (doc, matched)
        found = WebPages()
        matched, rejected = found.matched, found.rejected
        probe_findings: list[Finding] = []

        def resolved(spec: AttributeSpec) -> bool:
            return any(f.attribute == spec.slug for f in probe_findings)

        for spec in unresolved:
            for kind, query in build_queries(sku, spec, self.policy):
                if gtin_only and kind != "gtin":
                    continue
                if resolved(spec):
                    break
                step = SearchStep(attribute=spec.slug, kind=kind, query=query)
                if query not in hits_cache:
                    if len(hits_cache) >= self.max_queries:
                        step.error = f"query budget ({self.max_queries}) exhausted"
                        result.search_steps.append(step)
                        break
                    try:
                        hits_cache[query] = self.search.search(query, self.hits_per_query)
                    except SourceError as exc:
                        hits_cache[query] = []
                        step.error = str(exc)
                else:
                    step.cached = True
                    result.search_steps.append(step)
                    continue
                hits = sorted(
                    hits_cache[query], key=lambda h: _rank(classify_url(h.url, sku.brand, self.policy))
                )
                for hit in hits:
                    source_type = classify_url(hit.url, sku.brand, self.policy)
                    decision = HitDecision(
                        url=hit.url, title=hit.title, source_type=source_type, decision="used"
                    )
                    step.hits.append(decision)
                    if source_type is None:
                        decision.decision, decision.reason = "blocked", "blog/forum/UGC is never evidence"
                        continue
                    if hit.url in pages:
                        doc, ok = pages[hit.url]
                        decision.decision = "seen_before"
                        decision.reason = "matched earlier" if ok else "rejected or unavailable earlier"
                        continue
                    doc = self.search.fetch(hit.url)
                    if doc is None:
                        pages[hit.url] = (None, False)
                        decision.decision, decision.reason = "fetch_failed", "page unavailable"
                        continue
                    doc = doc.model_copy(update={"source": "web", "source_type": source_type})
                    verdict = identity.identity_match(sku, doc)
                    result.identity.pages.append(
                        PageIdentity(
                            url=hit.url,
                            source_type=source_type,
                            matched=verdict.matched,
                            reason=verdict.reason,
                            confidence=verdict.confidence,
                            checks=verdict.checks,
                            relation=verdict.relation,
                            differing=verdict.differing,
                        )
                    )
                    result.identity.pages_checked += 1
                    pages[hit.url] = (doc, verdict.matched)
                    if verdict.matched:
                        result.identity.pages_matched += 1
                        matched.append(doc)
                        if verdict.checks.get("gtin") is True:
                            found.gtin_matched.add(doc.source_ref)
                        probe_findings.extend(
                            self._probe.extract(
                                sku, unresolved, [doc], template_attributes=attributes
                            ).findings
                        )
                        decision.reason = verdict.reason
                    else:
                        result.identity.pages_rejected += 1
                        (found.siblings if verdict.relation == "sibling_variant" else rejected).append(doc)
                        found.reasons[doc.source_ref] = verdict.reason
                        decision.decision, decision.reason = "identity_rejected", verdict.reason
                result.search_steps.append(step)
        return found
