"""Span proposals of a trained model for one SKU: CRF spans (confidence = the lowest token marginal of
the span) and lexicon matches (confidence = the entry's training precision), best per (attribute, text
span)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from groundtrace.catalog.scout.learned.model import LearnedModel
from groundtrace.catalog.scout.learned.tokens import decode, features, tokenize

FIELDS = ("title", "description")


@dataclass(frozen=True)
class Proposal:
    attribute: str
    value: str
    field: str  # "title" | "description"
    start: int
    end: int
    confidence: float
    how: str  # "tagger" | "lexicon"


def crfsuite() -> Any:
    """The ``pycrfsuite`` module; a ValueError with the install hint when the extra is not installed."""
    try:
        import pycrfsuite
    except ImportError as exc:
        raise ValueError(
            "the learned engine needs python-crfsuite: pip install 'groundtrace[learned]'"
        ) from exc
    return pycrfsuite


class Tagger:
    """A crfsuite tagger opened on the model's weights (in memory)."""

    def __init__(self, model: LearnedModel) -> None:
        self.model = model
        self._tagger = crfsuite().Tagger()
        self._weights = model.crf_bytes()  # crfsuite reads this buffer in place: keep it alive
        self._tagger.open_inmemory(self._weights)

    def spans(self, text: str, category: str, field: str) -> list[Proposal]:
        tokens = tokenize(text)
        if not tokens:
            return []
        self._tagger.set(features(tokens, category, field))
        labels = self._tagger.tag()
        out = []
        for slug, first, end in decode(labels):
            conf = min(self._tagger.marginal(labels[i], i) for i in range(first, end))
            s, e = tokens[first].start, tokens[end - 1].end
            out.append(Proposal(slug, text[s:e], field, s, e, float(conf), "tagger"))
        return out


@lru_cache(maxsize=4096)
def _word_re(value: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.findall(r"\w+", value)]
    return re.compile(r"(?<!\w)" + r"[\s\-_/.,]*".join(words) + r"(?!\w)", re.IGNORECASE)


def lexicon_spans(model: LearnedModel, text: str, category: str, field: str) -> list[Proposal]:
    """Every lexicon value of ``category`` found in ``text`` as whole words, confidence = its precision."""
    out = []
    for slug, entries in model.lexicons.get(category.lower(), {}).items():
        for entry in entries.values():
            if not re.search(r"\w", entry.value):
                continue
            m = _word_re(entry.value).search(text)
            if m:
                out.append(Proposal(slug, m.group(0), field, m.start(), m.end(), entry.precision, "lexicon"))
    return out


def propose(tagger: Tagger, sku_category: str, texts: dict[str, str]) -> list[Proposal]:
    """Tagger and lexicon proposals over ``texts`` (field → text); for one attribute and one text span the
    highest confidence wins."""
    best: dict[tuple[str, str, int, int], Proposal] = {}
    for field, text in texts.items():
        if not text or not text.strip():
            continue
        found = tagger.spans(text, sku_category, field) + lexicon_spans(
            tagger.model, text, sku_category, field
        )
        for p in found:
            key = (p.attribute, field, p.start, p.end)
            if key not in best or p.confidence > best[key].confidence:
                best[key] = p
    return list(best.values())
