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

from groundtrace.catalog.model import SKU, AttributeSpec, Document
from groundtrace.catalog.scout.engine import EngineContext, EngineOutput, Finding
from groundtrace.catalog.scout.injection import instruction_spans
from groundtrace.catalog.scout.learned.model import LearnedModel, load_model
from groundtrace.catalog.scout.learned.predict import FIELDS, Tagger, propose, select
from groundtrace.catalog.scout.lexicon_engine import LexiconEngine, _Ctx
from groundtrace.catalog.scout.sentences import mask_spans, overlaps, sentence_spans


class LearnedEngine:
    """Offline engine from a trained model file (``catalog train``); ``model`` is its path."""

    name = "learned"

    def __init__(self, model: str | Path | LearnedModel | None = None) -> None:
        if model is None:
            raise ValueError("the learned engine needs a model: --model FILE (from 'catalog train')")
        self.model = model if isinstance(model, LearnedModel) else load_model(Path(model))
        self.tagger = Tagger(self.model)
        self.rules = LexiconEngine()

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
    ) -> EngineOutput:
        learned = [a for a in attributes if a.slug in self.model.attributes and not a.safety_critical]
        slugs = {a.slug for a in learned}
        base = self.rules.extract(sku, attributes, documents, template_attributes=template_attributes)
        docs = {
            doc.metadata.get("field"): doc
            for doc in documents
            if doc.source == "catalog" and doc.metadata.get("field") in FIELDS
        }
        learned_findings: list[Finding] = []
        if slugs and docs:
            ctxs: dict[Any, _Ctx] = {}
            masked: dict[Any, list[tuple[int, int]]] = {}
            for field, doc in docs.items():
                masked[field] = instruction_spans(doc.text)
                ctxs[field] = _Ctx(doc, mask_spans(doc.text, masked[field]), sentence_spans(doc.text))
            texts = {field: ctx.text for field, ctx in ctxs.items()}
            proposals = [
                p
                for p in propose(self.tagger, sku.category, texts)
                if p.attribute in slugs and not overlaps((p.start, p.end), masked[p.field])
            ]  # instruction-like text is never evidence
            gold = self.tagger.lexicon_gold(sku.category)
            for slug, chosen in select(self.model, proposals, sku.title, sku.category, gold).items():
                for p, conf in chosen:
                    if conf < self.model.threshold(slug):
                        continue
                    ctx = ctxs[p.field]
                    learned_findings.append(
                        Finding(
                            attribute=slug,
                            value=ctx.doc.text[p.start : p.end],
                            evidence=ctx.evidence(p.start, p.end),
                            quality=round(min(1.0, conf), 4),
                            confidence=round(min(1.0, conf), 4),
                        )
                    )
        replaced = {f.attribute for f in learned_findings}
        findings = [f for f in base.findings if f.explicit or f.attribute not in replaced]
        findings += learned_findings
        return EngineOutput(findings=findings, abstentions=base.abstentions, flags=base.flags)
