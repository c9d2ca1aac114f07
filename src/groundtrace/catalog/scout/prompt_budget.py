"""Prompt budgets for small-context models: token estimates and evidence trimmed to the relevant sentences.

The seed sends one call per SKU with every attribute and every Document. That is the default for
big-context endpoints. A small model (the bundled SmolLM2-135M runs with ``n_ctx`` = 2,048 tokens) cannot
hold that prompt (~2,450 model tokens for a 12-attribute grocery SKU with its catalog text alone), so the
LLM engine and the LLM judge switch to a *compact mode* when the full prompt plus the answer would not fit:

* ``context_window``, ``estimate_tokens`` and ``prompt_limit`` are the core's (``core.llm.budget``, where
  ``TOKEN_RATIO`` and the digit rule are measured);
* evidence is cut into sentences/lines (``sentences.sentence_spans``, so every line is a verbatim
  substring of its stored Document and a quote copied from it is locatable there), instruction-like
  sentences (prompt injection) are dropped, and sentences are ranked per attribute with Okapi BM25
  (``sources.web.BM25Index``) against the attribute's cue words (slug, name, definition, allowed /
  recommended values, unit, field aliases); :func:`select_sentences` takes the best sentence of each
  attribute in turn (round robin) until the evidence budget is spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundtrace.catalog.model import AttributeSpec, Document
from groundtrace.catalog.scout.injection import instruction_spans
from groundtrace.catalog.scout.lexicons import KEY_ALIASES
from groundtrace.catalog.scout.sentences import overlaps, sentence_spans
from groundtrace.core.llm.budget import estimate_tokens

MAX_SENTENCE_CHARS = 400


@dataclass(frozen=True)
class Sentence:
    """One sentence/line of a stored Document (``text == doc.text[start:end]``)."""

    doc: Document
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.doc.text[self.start : self.end]


def doc_sentences(documents: list[Document]) -> list[Sentence]:
    """Every sentence of every Document, instruction-like ones (prompt injection) left out; very long
    lines are cut to ``MAX_SENTENCE_CHARS`` (still a verbatim prefix)."""
    out: list[Sentence] = []
    for doc in documents:
        injected = instruction_spans(doc.text)
        for s, e in sentence_spans(doc.text):
            if overlaps((s, e), injected):
                continue
            out.append(Sentence(doc, s, min(e, s + MAX_SENTENCE_CHARS)))
    return out


def attribute_query(spec: AttributeSpec) -> str:
    """Cue words of an attribute for ranking sentences (slug, name, definition, values, unit, aliases)."""
    parts = [
        spec.slug.replace("_", " "),
        spec.name,
        spec.definition,
        spec.unit or "",
        *spec.allowed_values,
        *spec.recommended_values[:20],
        *spec.examples[:5],
        *KEY_ALIASES.get(spec.slug, ()),
    ]
    return " ".join(p.replace("_", " ") for p in parts if p)


def rank_sentences(sentences: list[Sentence], query: str) -> list[int]:
    """Indices of ``sentences`` with a positive BM25 score for ``query``, best first (ties: text order)."""
    # deferred: sources.web pulls in numpy/scipy/pint and ssl (~0.3 s), only ranking needs BM25
    from groundtrace.catalog.sources.web import BM25Index

    if not sentences:
        return []
    scores = BM25Index([s.text for s in sentences]).scores(query)
    return [int(i) for i in sorted(range(len(sentences)), key=lambda i: (-scores[i], i)) if scores[i] > 0]


def select_sentences(
    sentences: list[Sentence], queries: list[str], budget_tokens: int, doc_cost: Any = None, fill: bool = True
) -> list[Sentence]:
    """Round robin over ``queries``: each takes its next best unused sentence while the summed cost
    stays within ``budget_tokens``; a sentence costs :func:`estimate_tokens` of its text + 1 (line
    break), plus ``doc_cost(doc)`` (its DATA block header) for the first sentence of a Document.
    With ``fill``, budget left over takes the remaining sentences in Document order (context for the
    model; Documents come in priority order, catalog first). Returned in Document and text order."""
    rankings = [rank_sentences(sentences, q) for q in queries]
    used_docs: set[int] = set()

    def cost(s: Sentence) -> int:
        extra = doc_cost(s.doc) if doc_cost is not None and id(s.doc) not in used_docs else 0
        return estimate_tokens(s.text) + 1 + extra

    chosen: set[int] = set()
    spent = 0
    pointers = [0] * len(rankings)
    progress = True
    while progress:
        progress = False
        for qi, ranking in enumerate(rankings):
            while pointers[qi] < len(ranking) and ranking[pointers[qi]] in chosen:
                pointers[qi] += 1
            if pointers[qi] >= len(ranking):
                continue
            idx = ranking[pointers[qi]]
            pointers[qi] += 1
            progress = True
            c = cost(sentences[idx])
            if spent + c > budget_tokens:
                continue  # too long for what is left; a shorter one further down may still fit
            chosen.add(idx)
            used_docs.add(id(sentences[idx].doc))
            spent += c
    for idx in range(len(sentences)) if fill else ():  # leftover budget: context in Document order
        if idx not in chosen and spent + cost(sentences[idx]) <= budget_tokens:
            spent += cost(sentences[idx])
            chosen.add(idx)
            used_docs.add(id(sentences[idx].doc))
    order = {d: i for i, d in enumerate(dict.fromkeys(id(s.doc) for s in sentences))}
    return sorted((sentences[i] for i in chosen), key=lambda s: (order[id(s.doc)], s.start))


def group_by_document(selected: list[Sentence]) -> list[tuple[Document, str]]:
    """``(doc, excerpt)`` pairs: the chosen sentences of each Document, one per line, in text order."""
    out: dict[int, tuple[Document, list[str]]] = {}
    for s in selected:
        out.setdefault(id(s.doc), (s.doc, []))[1].append(s.text)
    return [(doc, "\n".join(lines)) for doc, lines in out.values()]
