""":class:`LearnedEngine` — the ``learned`` extraction engine (package docstring).

For the attributes the model tags, it proposes the best tagger/lexicon value of the catalog title and
description (:func:`~.predict.select`: highest calibrated confidence, plus the spans of other fields stating
the same value) when its confidence reaches the attribute's θ, each with the sentence around it as a
verbatim quote (finding quality = confidence). Where it proposes a value, the rule engine's free-text
findings for that attribute are dropped (the calibrated value replaces them, so a rule mention of a
shorter or other value cannot make the candidate ambiguous); the rule engine's explicit ``key: value``
fields stay. Every other attribute (allergens, booleans, numbers the model never saw) and every other
Document go to the rule engine (:class:`~groundtrace.catalog.scout.lexicon_engine.LexiconEngine`), so the
learned engine adds to the offline baseline rather than replacing its safety rules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groundtrace.catalog.model import SKU, AttributeSpec, Document, Evidence
from groundtrace.catalog.scout.engine import EngineContext, EngineOutput, Finding
from groundtrace.catalog.scout.injection import instruction_spans
from groundtrace.catalog.scout.learned.model import LearnedModel, load_model
from groundtrace.catalog.scout.learned.predict import FIELDS, Proposal, Tagger, propose, select
from groundtrace.catalog.scout.lexicon_engine import LexiconEngine, ParsedEvidence, _Ctx, assembled
from groundtrace.catalog.scout.sentences import overlaps


class LearnedEngine:
    """Offline engine from a trained model file (``catalog train``); ``model`` is its path."""

    name = "learned"
    shares_parsed_evidence = True  # the Scout passes the SKU's ParsedEvidence (reused by the Judge)

    def __init__(self, model: str | Path | LearnedModel | None = None) -> None:
        if model is None:
            raise ValueError("the learned engine needs a model: --model FILE (from 'catalog train')")
        self.model = model if isinstance(model, LearnedModel) else load_model(Path(model))
        self.tagger = Tagger(self.model)
        self.rules = LexiconEngine()
        self._slugs = frozenset(self.model.attributes)
        # extract only the explicit fields of the attributes a learned value replaces (exact: _RulesView)
        self.explicit_only_where_replaced = True

    @classmethod
    def from_context(cls, context: EngineContext) -> LearnedEngine:
        return cls(**context.options)

    def extract(
        self,
        sku: SKU,
        attributes: list[AttributeSpec],
        documents: list[Document],
        *,
        template_attributes: list[AttributeSpec] | None = None,
        parsed: ParsedEvidence | None = None,
    ) -> EngineOutput:
        """Findings for ``attributes`` (module docstring). ``parsed``: the SKU's
        :class:`~groundtrace.catalog.scout.lexicon_engine.ParsedEvidence`, shared with the rule engine (a new
        one when not given): each Document is parsed once — instruction-like sentences masked, sentence
        spans — for the rule engine and the learned spans alike.

        The learned values are found first; for an attribute they replace, only the rule engine's explicit
        fields are kept, so only those are extracted there (:class:`_RulesView`, where that is exact)."""
        known = self._slugs
        slugs = {a.slug for a in attributes if a.slug in known and not a.safety_critical}
        parsed = parsed if parsed is not None else ParsedEvidence()
        docs = {
            doc.metadata.get("field"): doc
            for doc in documents
            if doc.source == "catalog" and doc.metadata.get("field") in FIELDS
        }
        learned_findings = self._learned(sku, slugs, docs, parsed) if slugs and docs else []
        replaced = {f.attribute for f in learned_findings}
        view = parsed
        if replaced and self.explicit_only_where_replaced:
            view = _RulesView.of(parsed, replaced, attributes, documents)
        base = self.rules.extract(
            sku, attributes, documents, template_attributes=template_attributes, parsed=view
        )
        findings = [f for f in base.findings if f.explicit or f.attribute not in replaced]
        findings += learned_findings
        return EngineOutput(findings=findings, abstentions=base.abstentions, flags=base.flags)

    def _learned(
        self, sku: SKU, slugs: set[str], docs: dict[Any, Document], parsed: ParsedEvidence
    ) -> list[Finding]:
        """The calibrated learned values of the catalog title and description at or above θ (the steps:
        :meth:`contexts`, :meth:`proposals`, :func:`~.predict.select`, :meth:`findings`)."""
        ctxs = self.contexts(docs, parsed)
        proposals = self.proposals(sku, slugs, ctxs)
        gold = self.tagger.lexicon_gold(sku.category)
        return self.findings(select(self.model, proposals, sku.title, sku.category, gold), ctxs)

    @staticmethod
    def contexts(docs: dict[Any, Document], parsed: ParsedEvidence) -> dict[Any, _Ctx]:
        """Per field, the Document as parsed once (masked text, sentences)."""
        return {field: parsed.context(doc) for field, doc in docs.items()}

    def proposals(self, sku: SKU, slugs: set[str], ctxs: dict[Any, _Ctx]) -> list[Proposal]:
        """:func:`~.predict.propose` over the masked texts, for ``slugs`` only, none overlapping
        instruction-like text (never evidence)."""
        masked = {field: instruction_spans(ctx.doc.text) for field, ctx in ctxs.items() if ctx.masked}
        texts = {field: ctx.text for field, ctx in ctxs.items()}
        return [
            p
            for p in propose(self.tagger, sku.category, texts)
            if p.attribute in slugs
            and not (p.field in masked and overlaps((p.start, p.end), masked[p.field]))
        ]

    def findings(
        self, chosen: dict[str, list[tuple[Proposal, float]]], ctxs: dict[Any, _Ctx]
    ) -> list[Finding]:
        """A :class:`Finding` per chosen proposal at or above its attribute's θ, quoting its sentence."""
        out = []
        # one Evidence per quote: the values of a title are mostly quoted by the same sentence (an Evidence
        # is a value object, never changed in place; shared, it serialises as the copies did)
        quotes: dict[tuple[Any, tuple[int, int]], Evidence] = {}
        for slug, items in chosen.items():
            theta = self.model.threshold(slug)
            for p, conf in items:
                if conf < theta:
                    continue
                ctx = ctxs[p.field]
                span = ctx.quote(p.start, p.end)[1]
                evidence = quotes.get((p.field, span))
                if evidence is None:
                    evidence = quotes[(p.field, span)] = ctx.evidence_span(span)
                out.append(
                    learned_finding(slug, ctx.doc.text[p.start : p.end], evidence, round(min(1.0, conf), 4))
                )
        return out


def learned_finding(attribute: str, value: str, evidence: Evidence, score: float) -> Finding:
    """``Finding(attribute=attribute, value=value, evidence=evidence, quality=score, confidence=score)``,
    without running the validator where it provably changes nothing: a ``str`` attribute and value (kept
    as they are), an :class:`Evidence` (an instance is taken as it is: the model does not revalidate
    instances) and a ``float`` score in [0, 1] (a constrained float field keeps the value) give the same
    field values, in field order, with ``explicit`` / ``flags`` at their defaults and the same fields set
    (tests/catalog/scout/learned/test_speed.py compares both); anything else is validated."""
    if (
        type(attribute) is not str
        or type(value) is not str
        or type(evidence) is not Evidence
        or type(score) is not float
        or not 0.0 <= score <= 1.0
    ):
        return Finding(attribute=attribute, value=value, evidence=evidence, quality=score, confidence=score)
    values = {"attribute": attribute, "value": value, "evidence": evidence, "quality": score}
    values["explicit"], values["confidence"], values["flags"] = False, score, []
    return assembled(Finding, values, {"attribute", "value", "evidence", "quality", "confidence"})


class _ExplicitFields(LexiconEngine):
    """The rule engine's explicit ``key: value`` fields of an attribute, nothing else."""

    def extract_one(self, spec: AttributeSpec, ctx: _Ctx, attributes: list[AttributeSpec]) -> list[Finding]:
        return self._explicit(spec, ctx)


class _RulesView(ParsedEvidence):
    """The SKU's :class:`ParsedEvidence` as the rule engine reads it while the learned engine replaces the
    free-text findings of ``explicit_only``: for those attributes ``findings`` gives the explicit fields
    only (memoised in ``parsed`` under :class:`_ExplicitFields`, so a Judge reading ``parsed`` later still
    gets the full rule findings); everything else is ``parsed``'s.

    Exact: after ``_dedupe`` (one finding per attribute, value, source_ref and quote span: the first of the
    highest quality, at the place of that key's first finding) the engine keeps, of a replaced attribute,
    only the explicit findings. An explicit finding has quality ``Q_EXPLICIT`` = 1.0, above every other
    finding's (the rule engine's other qualities are ``Q_NAMED`` / ``Q_MENTION`` / ``Q_BARE``; a test
    checks the order), and ``extract_one`` lists a Document's explicit fields first; so with one Document
    per source_ref and one spec per slug the kept explicit findings and their order are the same whether
    the other findings were extracted or not. :meth:`of` applies the view only then, and only to
    attributes that take ``extract_one``'s common path (not the allergen and trace readers)."""

    def __init__(self, parsed: ParsedEvidence, explicit_only: frozenset[str]) -> None:
        self.parsed, self.explicit_only = parsed, explicit_only
        self._explicit_engine = _ExplicitFields()

    @classmethod
    def of(
        cls,
        parsed: ParsedEvidence,
        replaced: set[str],
        attributes: list[AttributeSpec],
        documents: list[Document],
    ) -> ParsedEvidence:
        """The view for ``replaced`` (``parsed`` itself where it would not be exact)."""
        if len({d.source_ref for d in documents}) != len(documents):
            return parsed
        if len({a.slug for a in attributes}) != len(attributes):
            return parsed
        common = frozenset(
            a.slug
            for a in attributes
            if a.slug in replaced
            and "trace" not in a.slug
            and not (a.type == "enum" and a.multi_valued and a.safety_critical and "allergen" in a.slug)
        )
        return cls(parsed, common) if common else parsed

    def context(self, doc: Document) -> _Ctx:
        return self.parsed.context(doc)

    def findings(
        self,
        engine: LexiconEngine,
        spec: AttributeSpec,
        ctx: _Ctx,
        context: list[AttributeSpec],
        context_key: tuple[str, ...] | None = None,
    ) -> list[Finding]:
        if spec.slug in self.explicit_only:
            if not ctx.fields:  # no key: value line, so no explicit field (_explicit reads only those)
                return []
            engine = self._explicit_engine
        return self.parsed.findings(engine, spec, ctx, context, context_key)
