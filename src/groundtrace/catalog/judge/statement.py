"""Does the quoted sentence STATE the value? The rule judge's check that does not run the extractor.

The rule judge used to decide "directly supported" only by re-running the offline extractor on the quote's
Document, so it could not catch the extractor's own misreadings. :func:`statement` re-reads the sentence(s)
that hold the quote (``sentences.sentence_spans`` of the STORED Document, overlapping the located quote) with
different, simpler logic and returns one of:

* ``stated`` — one sentence holds an attribute cue AND the value (normalised comparison,
  ``reconcile.same_value`` → ``core.normalize.values_equal``), the value is neither negated nor hedged;
* ``negated`` — the value (or a bool cue) appears only negated: "not organic", "free of peanuts",
  "no gluten", a negative bool phrase ("batteries not included"), or a ``key: no`` field for a true value;
* ``hedged`` — the value appears only after a precautionary hedge: "may contain peanuts", "traces of
  milk", "made in a facility that processes tree nuts" (not a Contains statement);
* ``no_cue`` — the value appears, but no sentence that holds it names the attribute;
* ``absent`` — no sentence of the quote holds the value (numbers: an equal quantity whose unit has the
  template unit's dimension; a unitless number counts only when the template has no unit).

Cues: the attribute's slug and name, the field aliases of ``lexicons.KEY_ALIASES``, the bool phrases of
``lexicons.BOOL_CUES`` and the few claim words of :data:`CLAIM_CUES`. Values: the value itself, its
synonyms and abbreviation expansion (``lexicons.value_phrases``). The vocabulary is shared with the
extractor; the decision (same sentence, negation, hedge, unit dimension) is the judge's own.
"""

from __future__ import annotations

import re
from typing import Literal

from groundtrace.catalog.model import AttributeSpec, Document
from groundtrace.catalog.scout.ingredients import allergen_mentions
from groundtrace.catalog.scout.lexicons import BOOL_CUES, KEY_ALIASES, value_phrases
from groundtrace.catalog.scout.numbers import find_numbers
from groundtrace.catalog.scout.quantities import quantities
from groundtrace.catalog.scout.reconcile import same_value
from groundtrace.catalog.scout.sentences import phrase_re, sentence_spans
from groundtrace.core.evidence.normalize import (
    parse_bool,
    parse_quantity,
    parse_unit,
    same_dimension,
)
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, locate_quote

Statement = Literal["stated", "negated", "hedged", "no_cue", "absent"]

#: Claim words that name a dietary/allergen attribute in running text besides its field aliases.
CLAIM_CUES: dict[str, tuple[str, ...]] = {
    "dietary_labels": ("certified", "suitable for", "label", "labelled", "labeled"),
    "allergens": ("contains", "allergy", "allergen"),
    "caffeine_content": ("caffeine", "caffeinated", "decaf"),
}
_NEGATION = re.compile(
    r"(?:\bnot|\bnon|\bno|\bnever|\bwithout|n't|\bfree\s+(?:of|from)|\bzero)\s*[-\s]?\s*$", re.IGNORECASE
)
_HEDGE = re.compile(
    r"\b(?:may\s+contain|may\s+also\s+contain|traces?\s+of|facility|shared\s+equipment|same\s+equipment|"
    r"same\s+line|cross[\s-]?contact)\b",
    re.IGNORECASE,
)
_KV = re.compile(r"^\s*([^:]{1,50}):\s*(.+)$")
_ORDER: dict[Statement, int] = {"stated": 0, "negated": 1, "hedged": 2, "no_cue": 3, "absent": 4}


def cue_phrases(spec: AttributeSpec) -> tuple[str, ...]:
    """Words that name ``spec`` in a sentence (module docstring)."""
    positive = BOOL_CUES.get(spec.slug, ((), ()))[0]
    return (
        spec.slug.replace("_", " "),
        spec.name,
        *KEY_ALIASES.get(spec.slug, ()),
        *CLAIM_CUES.get(spec.slug, ()),
        *positive,
    )


def _has_cue(sentence: str, spec: AttributeSpec) -> bool:
    return any(phrase_re(p).search(sentence) for p in cue_phrases(spec) if p.strip())


def _clause_before(sentence: str, start: int) -> str:
    return re.split(r"[,;:.!?()\n]", sentence[max(0, start - 25) : start])[-1]


def _value_positions(item: str, sentence: str, spec: AttributeSpec) -> list[int]:
    """Start offsets in ``sentence`` where ``item`` is written (numbers: an equal, dimension-compatible
    quantity)."""
    if spec.type == "number":
        target = parse_unit(spec.unit) if spec.unit else None
        out = []
        for q in quantities(sentence):  # numbers.find_numbers: "10 000 mAh" is 10000, never "000 mAh"
            qty = parse_quantity(q.raw)
            if qty is None or q.ambiguous:
                continue  # "1.500 W" (1.5 or 1500) states neither
            if target is not None and not same_dimension(qty, target):
                continue  # another dimension does not state "16 oz"
            if same_value(item, q.raw, spec):
                out.append(q.start)
        if target is None:  # a unitless attribute (pack count): bare numbers state it
            out += [
                n.span[0]
                for n in find_numbers(sentence)
                if not n.ambiguous and same_value(item, repr(n.value), spec)
            ]
        return sorted(set(out))
    phrases = {*value_phrases(item), item.replace("_", " ")}
    return sorted({m.start() for p in phrases if p.strip() for m in phrase_re(p).finditer(sentence)})


def _bool_statement(item: str, sentence: str, spec: AttributeSpec) -> Statement:
    want = parse_bool(item)
    if want is None:
        return "absent"
    kv = _KV.match(sentence)
    if kv and _has_cue(kv.group(1), spec):
        said = parse_bool(kv.group(2).strip().rstrip("."))
        if said is not None:
            return "stated" if said == want else "negated"
    positive, negative = BOOL_CUES.get(spec.slug, ((), ()))
    neg_hit = any(phrase_re(p).search(sentence) for p in negative)
    pos_hits = [
        m.start()
        for p in positive or (spec.name, spec.slug.replace("_", " "))
        for m in phrase_re(p).finditer(sentence)
    ]
    pos_plain = [s for s in pos_hits if not _NEGATION.search(_clause_before(sentence, s))]
    says_true = bool(pos_plain) and not neg_hit
    says_false = neg_hit or (bool(pos_hits) and not pos_plain)
    if want and says_true or not want and says_false:
        return "stated"
    if want and says_false or not want and says_true:
        return "negated"
    return "absent"


_LIST_CUE = re.compile(r"\bingredients?\b|\bcontains?\b|\ballerg", re.IGNORECASE)


def _ingredient_statement(item: str, sentence: str, spec: AttributeSpec) -> Statement | None:
    """For an allergen attribute: an ingredient the Annex II / Open Food Facts map makes a source of
    ``item`` ("wheat flour" for wheat and gluten) states it — ``stated`` in an ingredient list or a Contains
    / Allergens sentence, ``no_cue`` elsewhere, ``hedged`` when only inside a may-contain clause; ``None``
    when no ingredient names it."""
    if "allergen" not in spec.slug or "trace" in spec.slug:
        return None
    mentions = [m for m in allergen_mentions(sentence) if item.lower() in m.values]
    if not mentions:
        return None
    if all(m.trace for m in mentions):
        return "hedged"
    return "stated" if _LIST_CUE.search(sentence) else "no_cue"


def sentence_statement(item: str, sentence: str, spec: AttributeSpec) -> Statement:
    """How one sentence states ``item`` for ``spec`` (module docstring; allergens also by the ingredients
    that are their sources, :func:`_ingredient_statement`)."""
    if spec.type == "bool":
        return _bool_statement(item, sentence, spec)
    usual = _sentence_statement(item, sentence, spec)
    if usual in ("stated", "negated", "hedged"):
        return usual
    by_ingredient = _ingredient_statement(item, sentence, spec)
    if by_ingredient is None:
        return usual
    return min(usual, by_ingredient, key=_ORDER.__getitem__)


def _sentence_statement(item: str, sentence: str, spec: AttributeSpec) -> Statement:
    positions = _value_positions(item, sentence, spec)
    if not positions:
        return "absent"
    plain = [p for p in positions if not _NEGATION.search(_clause_before(sentence, p))]
    if not plain:
        return "negated"
    unhedged = [p for p in plain if not _HEDGE.search(sentence[:p])]
    if not unhedged:
        return "hedged"
    return "stated" if _has_cue(sentence, spec) else "no_cue"


def quote_sentences(quote: str, doc: Document) -> list[str]:
    """The sentences/lines of the stored ``doc`` that overlap the located ``quote`` (none if not located)."""
    match = locate_quote(quote, doc.text)
    if match.score < GROUNDED_THRESHOLD:
        return []
    return [doc.text[s:e] for s, e in sentence_spans(doc.text) if s < match.end and match.start < e]


def statement(item: str, quote: str, doc: Document, spec: AttributeSpec) -> Statement:
    """The best statement of ``item`` over the sentences holding ``quote`` in ``doc`` (stated > negated >
    hedged > no_cue > absent)."""
    found = [sentence_statement(item, s, spec) for s in quote_sentences(quote, doc)]
    return min(found, key=_ORDER.__getitem__, default="absent")
