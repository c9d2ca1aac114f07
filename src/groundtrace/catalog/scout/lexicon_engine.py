"""The offline extraction engine: :class:`LexiconEngine` (registered as ``offline``; the default and a
real baseline) applies, per attribute type, deterministic rules. Every value it returns is backed by a
quote that is an exact substring of the Document text at ``span``.

* **Instruction-like sentences are never evidence.** Before anything is matched, every sentence that
  reads like an instruction to a model ("ignore previous instructions", "mark this product ...",
  "you are now ...", "system prompt", "respond with ...") is masked
  (:func:`groundtrace.catalog.scout.injection.instruction_spans`).
* **explicit fields** — a line ``key: value`` whose key names the attribute (its slug, name or a known
  alias such as "Net Wt" for net_content, "Contains" for allergens) → quality 1.0.
* **enum** — allowed values and their synonyms/abbreviations (``tree_nuts`` ← "almonds", ``nimh`` ←
  "nickel-metal hydride", ``usb_c`` ← "USB-C"), whole-word, case/separator-insensitive, in free text →
  quality 0.75; a mention preceded by a negator (not, non-, no, never, isn't ...) is skipped.
* **bool** — a cue lexicon per attribute (``organic`` ← "USDA Organic", "certified organic";
  ``dishwasher_safe`` ← "dishwasher safe" / "hand wash only" → false ...) plus the attribute's own
  name; a negated cue ("not dishwasher safe", "non-organic", "batteries not included") gives false.
* **number+unit** — quantities (number + unit token) converted to the template unit; in a sentence that
  names the attribute → 0.85; a bare quantity → 0.6 (also in a title: "Folgers Classic Roast, 11.3 oz",
  "HP 146-GB SAS drive"; blocked at the default θ) only when no other number attribute of the template
  shares its dimension and the sentence is not about servings/nutrition. Unit-less numbers (pack counts)
  come only from explicit fields and pack patterns ("6-pack", "pack of 6", "6 x 12 oz", "25/Pack",
  "4Pcs/Lot"); a count ("72 Count", "16 capsules") is the net content when the attribute's definition
  allows counts and the document states no mass/volume (a unit-less attribute whose definition says it
  is a count takes counts only). Dimensions: ``31-1/2"L x 16-1/4"W x 36"H``, ``18" wide``, ``12" deep``
  name their axis (W/D/H/L, wide/deep/high/tall/long) → width/depth/height/length at 0.85.
* **string** — the attribute's recommended vocabulary in free text (0.75) or an explicit field (1.0); for
  an attribute marked ``title_prefix`` (a brand, learned per category by ``templates from-gold``) a
  vocabulary value opening the product title → 0.85.
* **multi-valued, safety-critical** (allergens, dietary labels) — allergens only from explicit
  statements ("Contains: milk, soy", "Allergens: ..."), split into items mapped to the allowed set.
  **"May contain" / "processed in a facility that also ..." statements are traces, never allergens**:
  those clauses are excluded from the allergen attribute (they go to an attribute whose slug contains
  ``trace`` when the template has one).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar, get_args

from pydantic import BaseModel

from groundtrace.catalog.model import SKU, AttributeSpec, Document, Evidence
from groundtrace.catalog.scout.engine import EngineOutput, Finding
from groundtrace.catalog.scout.ingredients import ingredient_list_mentions
from groundtrace.catalog.scout.injection import instruction_spans
from groundtrace.catalog.scout.lexicons import (
    AMBIGUOUS_WORDS,
    BOOL_CUES,
    attribute_keys,
    drop_contained,
    map_to_vocab,
    parse_bool,
    value_phrases,
)
from groundtrace.catalog.scout.numbers import find_numbers
from groundtrace.catalog.scout.quantities import Qty, accepts, convert, dimension_units, fmt, quantities
from groundtrace.catalog.scout.sentences import (
    ABBREVIATIONS,
    ascii_fold,
    first_sentence,
    is_value_text,
    kv_lines,
    mask_spans,
    may_match,
    negated,
    norm_key,
    overlaps,
    phrase_literal,
    phrase_re,
    sentence_spans,
)

Q_EXPLICIT, Q_NAMED, Q_MENTION, Q_BARE = 1.0, 0.85, 0.75, 0.6

_TRACE = re.compile(
    r"\b(?:may|might|can)\s+contain|\btraces?\s+of\b|\b(?:processed|produced|made|manufactured|packed|packaged)"
    r"\s+(?:in|on)\s+(?:a\s+|the\s+)?(?:same\s+|shared\s+)?(?:facility|plant|equipment|line)|\bshared\s+"
    r"(?:equipment|facility)|\bfacility\s+that\s+(?:also\s+)?(?:processes|handles|uses)",
    re.IGNORECASE,
)
_ALLERGEN_STMT = re.compile(
    r"(?P<lead>\b(?:contains?|allergens?|allergen\s+information|allergy\s+(?:information|advice))\b)\s*"
    r"(?::|-|–)?\s*(?P<list>[^.;\n:]+)",
    re.IGNORECASE,
)
_SEPARATORS = re.compile(r"[\s_-]+")
_CPU = re.compile(
    r"\bcache\b|\d\s*[gm]hz\b|\bprocessor\b|\bcpu\b|\bxeon\b|\bopteron\b|-core\b", re.IGNORECASE
)
_INGREDIENTS = re.compile(r"^\s*ingredients?\b", re.IGNORECASE)
_SERVING = re.compile(r"serving|\bper\b|calorie|nutrition|daily value|\bdv\b|each|amount", re.IGNORECASE)
_PACK = re.compile(
    r"\b(?:pack|case|box|set|bundle)\s+of\s+(?P<a>\d+)\b|\b(?P<b>\d+)\s*[-\s]?\s*(?:pack|pk)\b"
    r"|\b(?P<c>\d+)\s*[x×]\s*\d+(?:\.\d+)?\s*(?:fl\.?\s*oz|oz|g|ml|l|cans?|bottles?)\b"
    r"|(?<![\d,.])(?P<d>\d{1,3}(?:,\d{3})+|\d+)\s*/\s*(?:pack|pk|case|box|bx|ctn|carton|bag|set)\b"  # 25/Pack
    r"|\b(?P<e>\d+)\s*pcs?\s*/\s*(?:lot|pack|set|bag)\b",  # "4Pcs/Lot"
    re.IGNORECASE,
)
_NUM = r"\d+(?:\.\d+)?(?:[- ]\d+/\d+)?|\d+/\d+"
_DIM = re.compile(
    rf"(?<![\w./-])(?P<num>{_NUM})\s*(?P<unit>\"|”|''|in\.?|inch(?:es)?|cm|mm|ft\.?|')?\s*"
    r"(?:(?P<letter>[WDHL])\b\.?|(?P<word>wide|width|deep|depth|high|height|tall|long|length)\b)",
)
_AXES = frozenset({"width", "depth", "height", "length"})
_DIM_AXIS = {
    "W": "width",
    "D": "depth",
    "H": "height",
    "L": "length",
    "wide": "width",
    "width": "width",
    "deep": "depth",
    "depth": "depth",
    "high": "height",
    "height": "height",
    "tall": "height",
    "long": "length",
    "length": "length",
}
_COUNT = re.compile(
    r"\b(?P<n>\d+)\s*-?\s*(?:count|ct\b\.?|capsules?|pods?|k-?cups?|tea\s*bags|sachets|tablets|softgels)(?![\w-])",
    re.IGNORECASE,
)
_PIECES = re.compile(
    r"\b(?P<a>\d+)\s*[-\s]?\s*(?:pieces?|pcs?|piece\s+set)\b|\bset\s+of\s+(?P<b>\d+)\b", re.IGNORECASE
)
# up to three capitalised words on one line; a sentence end cuts the name (``_origin_name``: "Product of
# Canada. Store in a cool place" -> "Canada", never "Canada. Store"; "Made in St. Lucia" stays whole)
_ORIGIN = re.compile(
    r"\b(?i:product\s+of|made\s+in|produced\s+in|grown\s+in)\s+"
    r"(?P<c>[A-Z][\w'.-]*(?:[ \t]+[A-Z][\w'.-]*){0,2})"
)


def _origin_name(match: re.Match[str]) -> str:
    """The country named by an ``_ORIGIN`` match, cut at the first sentence end; "" when the capitalised
    words end in a word abbreviation ("Made in No. 7": the name goes on past what the pattern takes)."""
    name = first_sentence(match.group("c"))
    last = name.rsplit(" ", 1)[-1]
    return "" if last.endswith(".") and last[:-1].lower() in ABBREVIATIONS else name


@dataclass
class _Ctx:
    doc: Document
    text: str  # masked text (instruction sentences blanked)
    sentences: list[tuple[int, int]]
    masked: bool = False  # some instruction-like text was blanked
    _starts: list[int] | None = field(default=None, repr=False)
    _folded: str | None = field(default=None, repr=False)
    _fields: tuple[tuple[str, str, str, int, int, int], ...] | None = field(default=None, repr=False)
    _memo: dict[tuple[object, ...], object] = field(default_factory=dict, repr=False)

    @property
    def quantities(self) -> list[Qty]:
        """:func:`quantities` of :attr:`text`, parsed once (every number attribute reads them)."""
        found = self._memo.get(("quantities",))
        if found is None:
            found = self._memo[("quantities",)] = quantities(self.text)
        return found  # type: ignore[return-value]

    def names(self, s: int, e: int, spec: AttributeSpec) -> bool:
        """Does the sentence ``text[s:e]`` name ``spec`` (a phrase of :func:`attribute_keys`)? Memoised per
        sentence and attribute name."""
        key = ("names", s, e, spec.slug, spec.name)
        found = self._memo.get(key)
        if found is None:
            sentence = self.text[s:e]
            found = self._memo[key] = any(phrase_re(k).search(sentence) for k in attribute_keys(spec))
        return found  # type: ignore[return-value]

    def not_product_quantity(self, s: int, e: int) -> bool:
        """Is ``text[s:e]`` a serving/nutrition or ingredients sentence (its quantities are not the
        product's)? Memoised per sentence."""
        key = ("serving", s, e)
        found = self._memo.get(key)
        if found is None:
            sentence = self.text[s:e]
            found = self._memo[key] = bool(_SERVING.search(sentence) or _INGREDIENTS.match(sentence))
        return found  # type: ignore[return-value]

    @property
    def folded(self) -> str:
        """:func:`ascii_fold` of :attr:`text` (same offsets), for the :func:`may_match` prefilter."""
        if self._folded is None:
            self._folded = ascii_fold(self.text)
        return self._folded

    @property
    def fields(self) -> tuple[tuple[str, str, str, int, int, int], ...]:
        """``(norm_key(key), key, value, line_start, line_end, value_start)`` of every :func:`kv_lines`
        line of :attr:`text`, parsed once (every attribute reads them)."""
        if self._fields is None:
            self._fields = tuple((norm_key(k), k, *rest) for k, *rest in kv_lines(self.text))
        return self._fields

    def sentence_of(self, start: int, end: int) -> tuple[int, int]:
        """The first sentence holding ``start`` (stretched to ``end``), else ``(start, end)``: a binary
        search when the sentences are sorted and disjoint (what :func:`sentence_spans` gives), a scan
        otherwise — O(log n) per call, so a 50k-character description is not quadratic."""
        if self._starts is None:
            spans = self.sentences
            ordered = all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1))
            self._starts = [s for s, _ in spans] if ordered else []
        if self._starts or not self.sentences:
            i = bisect_right(self._starts, start) - 1
            if i >= 0:
                s, e = self.sentences[i]
                if s <= start < e:
                    return (s, max(e, end))
            return (start, end)
        for s, e in self.sentences:
            if s <= start < e:
                return (s, max(e, end))
        return (start, end)

    def quote(self, start: int, end: int, max_len: int = 200) -> tuple[str, tuple[int, int]]:
        """The sentence around [start, end) (windowed to ``max_len``) — an exact substring of the doc."""
        s, e = self.sentence_of(start, end)
        if e - s > max_len:
            s = max(s, start - 60)
            e = min(e, max(end + 60, s + 40))
            while s > 0 and s < start and not self.doc.text[s - 1].isspace():
                s += 1
            while e < len(self.doc.text) and e > end and not self.doc.text[e].isspace():
                e -= 1
        return self.doc.text[s:e], (s, e)

    def evidence(self, start: int, end: int) -> Evidence:
        return self.evidence_span(self.quote(start, end)[1])

    def evidence_span(self, span: tuple[int, int]) -> Evidence:
        d = self.doc
        return evidence_of(
            d.source, d.source_type, d.source_ref, d.text[span[0] : span[1]], span, d.metadata.get("url")
        )


_new = object.__new__
_set = object.__setattr__
_M = TypeVar("_M", bound=BaseModel)


def assembled(model: type[_M], values: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance of the pydantic ``model`` holding ``values`` (every field, in field order) with
    ``fields_set`` as the fields set, built without running the validator: only for values the caller
    has proved valid (:func:`evidence_of`, :func:`rule_finding`, the learned engine's findings)."""
    found = _new(model)
    _set(found, "__dict__", values)
    _set(found, "__pydantic_fields_set__", fields_set)
    _set(found, "__pydantic_extra__", None)
    _set(found, "__pydantic_private__", None)
    return found


_SOURCES = frozenset(get_args(Evidence.model_fields["source"].annotation))
_SOURCE_TYPES = frozenset(get_args(Evidence.model_fields["source_type"].annotation))


def evidence_of(
    source: str, source_type: str, source_ref: str, quote: str, span: tuple[int, int], url: str | None
) -> Evidence:
    """``Evidence(source=…, source_type=…, source_ref=…, quote=…, span=…, url=…)`` without running the
    validator where it provably changes nothing: ``str`` values (a ``source`` / ``source_type`` among the
    field's literals), a ``tuple`` of two ``int`` as the span and a ``str`` or None url are kept as they
    are, so the fields hold the same values, in field order, with the same fields set
    (tests/catalog/scout/test_parsed_evidence.py compares both); anything else is validated."""
    if (
        type(source) is not str
        or source not in _SOURCES
        or type(source_type) is not str
        or source_type not in _SOURCE_TYPES
        or type(source_ref) is not str
        or type(quote) is not str
        or type(span) is not tuple
        or len(span) != 2
        or type(span[0]) is not int
        or type(span[1]) is not int
        or not (url is None or type(url) is str)
    ):
        return Evidence(
            source=source,  # type: ignore[arg-type]
            source_type=source_type,  # type: ignore[arg-type]
            source_ref=source_ref,
            quote=quote,
            span=span,
            url=url,
        )
    values = {"source": source, "source_type": source_type, "source_ref": source_ref, "quote": quote}
    values["span"], values["url"] = span, url
    return assembled(Evidence, values, {"source", "source_type", "source_ref", "quote", "span", "url"})


def rule_finding(attribute: str, value: str, evidence: Evidence, quality: float, explicit: bool) -> Finding:
    """``Finding(attribute=…, value=…, evidence=…, quality=…, explicit=…)`` without running the validator
    where it provably changes nothing (``str`` attribute and value, an :class:`Evidence` instance — not
    revalidated —, a ``float`` quality in [0, 1], a ``bool``): the same field values in field order,
    ``confidence`` / ``flags`` at their defaults, the same fields set (tested); anything else is
    validated."""
    if (
        type(attribute) is not str
        or type(value) is not str
        or type(evidence) is not Evidence
        or type(quality) is not float
        or not 0.0 <= quality <= 1.0
        or type(explicit) is not bool
    ):
        return Finding(
            attribute=attribute, value=value, evidence=evidence, quality=quality, explicit=explicit
        )
    values = {"attribute": attribute, "value": value, "evidence": evidence, "quality": quality}
    values["explicit"], values["confidence"], values["flags"] = explicit, None, []
    return assembled(Finding, values, {"attribute", "value", "evidence", "quality", "explicit"})


class ParsedEvidence:
    """One SKU's parsed evidence, shared by the Scout and the Judge (a memo; not thread-safe by design —
    one SKU is processed by one worker).

    * ``context(doc)`` — the Document parsed once: instruction-like sentences masked, sentence spans.
    * ``findings(engine, spec, ctx, context)`` — ``engine.extract_one(spec, ctx, context)`` with empty
      values / blank quotes dropped, computed once per (engine class, attribute, template, Document).
      :meth:`LexiconEngine.extract` is the ``_dedupe`` of these lists in (attribute, Document) order, so
      results are identical with or without the memo.
    """

    def __init__(self) -> None:
        self._contexts: dict[tuple[str, ...], _Ctx] = {}
        self._findings: dict[tuple[object, ...], list[Finding]] = {}

    @staticmethod
    def _doc_key(doc: Document) -> tuple[str, ...]:
        url = doc.metadata.get("url")
        return (doc.source_ref, str(doc.source), str(doc.source_type), str(url), doc.text)

    def context(self, doc: Document) -> _Ctx:
        key = self._doc_key(doc)
        ctx = self._contexts.get(key)
        if ctx is None:
            masked = instruction_spans(doc.text)
            ctx = _Ctx(
                doc=doc,
                text=mask_spans(doc.text, masked) if masked else doc.text,  # nothing blanked: the text
                sentences=sentence_spans(doc.text),
                masked=bool(masked),
            )
            self._contexts[key] = ctx
        return ctx

    def findings(
        self,
        engine: LexiconEngine,
        spec: AttributeSpec,
        ctx: _Ctx,
        context: list[AttributeSpec],
        context_key: tuple[str, ...] | None = None,
    ) -> list[Finding]:
        """``context_key`` = the slugs of ``context`` (computed here when not given). ``ctx`` must come
        from :meth:`context` of this memo (it is keyed by identity: the memo keeps it alive)."""
        if context_key is None:
            context_key = tuple(a.slug for a in context)
        key = (type(engine), spec.slug, spec.type, context_key, id(ctx))
        found = self._findings.get(key)
        if found is None:
            found = engine.extract_one(spec, ctx, context)
            if found:
                found = [
                    f
                    for f in found
                    if is_value_text(f.value, placeholders=False) and f.evidence.quote.strip()
                ]
            self._findings[key] = found
        return found


class LexiconEngine:
    """Offline extractive engine: lexicons, regex, unit parsing (module docstring has the rules)."""

    name = "offline"

    def extract(
        self,
        sku: SKU,
        attributes: list[AttributeSpec],
        documents: list[Document],
        *,
        template_attributes: list[AttributeSpec] | None = None,
        parsed: ParsedEvidence | None = None,
    ) -> EngineOutput:
        """Findings for ``attributes``; ``template_attributes`` (default: ``attributes``) is the whole
        template, used to tell whether a bare quantity could belong to another attribute. ``parsed`` (one
        per SKU) memoises each Document's parse and each (attribute, Document) extraction, so a second
        call on the same SKU — the Judge's — costs a dictionary look-up."""
        context = template_attributes or attributes
        parsed = parsed if parsed is not None else ParsedEvidence()
        findings: list[Finding] = []
        flags: dict[str, list[str]] = {}
        ctxs = []
        for doc in documents:
            ctx = parsed.context(doc)
            ctxs.append(ctx)
            if ctx.masked:
                for spec in attributes:
                    note = f"instruction-like text ignored in {doc.source_ref}"
                    if note not in flags.setdefault(spec.slug, []):
                        flags[spec.slug].append(note)
        context_key = tuple(a.slug for a in context)
        for spec in attributes:
            for ctx in ctxs:
                findings.extend(parsed.findings(self, spec, ctx, context, context_key))
        return EngineOutput(findings=_dedupe(findings), flags={k: v for k, v in flags.items() if v})

    def findings_in(
        self,
        spec: AttributeSpec,
        doc: Document,
        context: list[AttributeSpec],
        parsed: ParsedEvidence,
        context_key: tuple[str, ...] | None = None,
    ) -> list[Finding]:
        """``extract(sku, [spec], [doc], template_attributes=context).findings``, read from ``parsed``
        (the Judge's way to reuse what the Scout already extracted for this SKU); ``context_key`` as in
        :meth:`ParsedEvidence.findings`."""
        return _dedupe(parsed.findings(self, spec, parsed.context(doc), context, context_key))

    # -- dispatch -----------------------------------------------------------------------------------
    def extract_one(self, spec: AttributeSpec, ctx: _Ctx, attributes: list[AttributeSpec]) -> list[Finding]:
        out: list[Finding] = []
        if spec.type == "enum" and spec.multi_valued and spec.safety_critical and "allergen" in spec.slug:
            return self._allergens(spec, ctx)
        if "trace" in spec.slug:
            return self._allergens(spec, ctx, traces=True)
        out.extend(self._explicit(spec, ctx))
        if spec.type in ("enum", "string"):
            vocab = spec.allowed_values if spec.type == "enum" else spec.recommended_values
            out.extend(self._mentions(spec, ctx, vocab))
            if spec.slug == "country_of_origin":
                out.extend(self._origin(spec, ctx))
        elif spec.type == "bool":
            out.extend(self._bool(spec, ctx))
        elif spec.type == "number":
            out.extend(self._numbers(spec, ctx, attributes))
        return out

    def _finding(
        self,
        spec: AttributeSpec,
        ctx: _Ctx,
        value: str,
        span: tuple[int, int],
        quality: float,
        explicit: bool = False,
        quote_span: tuple[int, int] | None = None,
    ) -> Finding:
        evidence = ctx.evidence_span(quote_span) if quote_span else ctx.evidence(*span)
        return rule_finding(spec.slug, value, evidence, quality, explicit)

    # -- explicit key: value fields -----------------------------------------------------------------
    def _explicit(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        if not ctx.fields:  # both loops below read only the key: value lines
            return []
        keys = attribute_keys(spec)
        out: list[Finding] = []
        for nkey, _key, raw, start, end, vstart in ctx.fields:
            if nkey not in keys:
                continue
            raw = first_sentence(raw)  # "Brand: Mt. Olive" stays whole (abbreviation-aware)
            end = vstart + len(raw)
            for value in self._values_from_field(spec, raw):
                out.append(
                    self._finding(spec, ctx, value, (start, end), Q_EXPLICIT, True, quote_span=(start, end))
                )
        if spec.type == "enum":  # "Gluten Free: Yes" names a label of a label attribute
            for _nkey, key, raw, start, end, _vs in ctx.fields:
                labels = map_to_vocab(key, spec.allowed_values)
                if labels and parse_bool(raw) is True:
                    out.extend(
                        self._finding(spec, ctx, v, (start, end), Q_EXPLICIT, True, quote_span=(start, end))
                        for v in labels
                    )
        return out

    def _values_from_field(self, spec: AttributeSpec, raw: str) -> list[str]:
        if spec.type == "bool":
            b = parse_bool(raw)
            return [] if b is None else ["true" if b else "false"]
        if spec.type == "number":
            qs = quantities(raw)
            vals = [v for q in qs if (v := accepts(spec, q)) is not None]
            if vals:
                return vals[:1] if not spec.multi_valued else vals
            nums = find_numbers(raw, ranges=False)
            rest = raw[nums[0].span[1] :] if len(nums) == 1 and not raw[: nums[0].span[0]].strip() else None
            ok = rest is not None and _COUNT_TAIL.fullmatch(rest) and not nums[0].ambiguous
            return [fmt(nums[0].value)] if ok and nums[0].value >= 0 and not spec.unit else []
        vocab = spec.allowed_values if spec.type == "enum" else spec.recommended_values
        items = re.split(r"\s*(?:,|;|/|\||\band\b|&)\s*", raw) if spec.multi_valued else [raw]
        values: list[str] = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            origin = _ORIGIN.search(item) if spec.slug == "country_of_origin" else None
            if origin:  # "Country of Origin: Product of Canada" -> "Canada"
                item = _origin_name(origin)
            mapped = map_to_vocab(item, vocab)
            if not mapped and spec.type == "enum":  # "Battery type: Li-ion, rechargeable" -> one named value
                found = map_to_vocab(item, vocab, search=True)
                mapped = found if len(found) == 1 or spec.multi_valued else []
            if mapped:
                values.extend(v for v in mapped if v not in values)
            elif spec.type == "string" and len(item) <= 80 and is_value_text(item):
                values.append(item)
        return values

    # -- vocabulary mentions ------------------------------------------------------------------------
    def _mentions(self, spec: AttributeSpec, ctx: _Ctx, vocab: list[str]) -> list[Finding]:
        if not vocab:
            return []
        folded = ctx.folded
        hits = [
            (value, m.start(), m.end())
            for value, phrase, literal in _vocab_phrases(tuple(vocab))
            if literal is None or literal in folded
            for m in phrase_re(phrase).finditer(ctx.text)
        ]
        if not hits:  # drop_contained and the loop below keep nothing of no hits
            return []
        hits = drop_contained(hits)
        out = []
        # per sentence once (a long description holds hundreds of hits in one sentence)
        checked: dict[tuple[int, int], tuple[bool, bool]] = {}
        for value, start, end in hits:
            s, e = ctx.sentence_of(start, end)
            if (s, e) not in checked:
                sentence = ctx.text[s:e]
                skip = bool(_INGREDIENTS.match(sentence)) or bool(
                    spec.safety_critical and _TRACE.search(sentence)
                )
                checked[(s, e)] = (skip, not skip and ctx.names(s, e, spec))
            skip, named = checked[(s, e)]
            if skip or negated(ctx.text, start):
                continue
            if spec.title_prefix and start <= 4 and _starts_title(ctx, start):
                named = True  # "Mt. Olive Kosher Dills": a known brand opening the title states the brand
            surface = _SEPARATORS.sub(" ", ctx.text[start:end].lower())
            if surface in AMBIGUOUS_WORDS and not named:
                continue
            if _is_kv_key_position(ctx.text, start):
                continue
            out.append(self._finding(spec, ctx, value, (start, end), Q_NAMED if named else Q_MENTION))
        return out

    def _origin(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        return [
            self._finding(spec, ctx, name, (m.start(), m.start("c") + len(name)), Q_NAMED)
            for m in _ORIGIN.finditer(ctx.text)
            if (name := _origin_name(m))
        ]

    # -- booleans -----------------------------------------------------------------------------------
    def _bool(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        default_pos = tuple(dict.fromkeys([spec.name.lower(), spec.slug.replace("_", " ")]))
        pos, neg = BOOL_CUES.get(spec.slug, (default_pos, ()))  # generic bools: negators flip the name
        folded = ctx.folded
        neg_hits = [
            (m.start(), m.end()) for p in neg if may_match(p, folded) for m in phrase_re(p).finditer(ctx.text)
        ]
        out = []
        for start, end in neg_hits:
            out.append(self._finding(spec, ctx, "false", (start, end), Q_NAMED))
        seen: set[tuple[int, int]] = set()
        for phrase in pos:
            if not may_match(phrase, folded):
                continue
            for m in phrase_re(phrase).finditer(ctx.text):
                span = m.span()
                if (
                    span in seen
                    or overlaps(span, neg_hits)
                    or any(s <= span[0] and span[1] <= e for s, e in seen)
                ):
                    continue
                seen.add(span)
                if _is_kv_key_position(ctx.text, span[0]):
                    continue
                s, e = ctx.sentence_of(*span)
                if _INGREDIENTS.match(ctx.text[s:e]):
                    continue
                value = "false" if negated(ctx.text, span[0]) else "true"
                out.append(self._finding(spec, ctx, value, span, Q_NAMED))
        return out

    # -- numbers ------------------------------------------------------------------------------------
    def _numbers(self, spec: AttributeSpec, ctx: _Ctx, attributes: list[AttributeSpec]) -> list[Finding]:
        if not dimension_units(spec):
            return self._pack_counts(spec, ctx)
        out: list[Finding] = []
        keys = attribute_keys(spec)
        if spec.slug in _AXES:
            out.extend(self._dimensions(spec, ctx))
        siblings = [
            a for a in attributes if a.slug != spec.slug and a.type == "number" and dimension_units(a)
        ]
        explicit = [(s, e) for nk, _k, _v, s, e, _vs in ctx.fields if nk in keys]
        for q in ctx.quantities:
            value = accepts(spec, q)
            if value is None:
                continue
            quality = self._quantity_quality(spec, ctx, q, keys, siblings, explicit)
            if quality is not None:
                out.append(self._finding(spec, ctx, value, (q.start, q.end), quality))
        if not out and "count" in spec.definition.lower():  # "72 Count" K-cups: a count is the net content
            for m in _COUNT.finditer(ctx.text):
                s, e = ctx.sentence_of(m.start(), m.end())
                if not _SERVING.search(ctx.text[s:e]):
                    out.append(self._finding(spec, ctx, f"{int(m.group('n'))} count", m.span(), Q_BARE))
        return out

    def _pack_counts(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        """Unit-less numbers: piece counts (``"12-piece set"``) or pack counts (``"6-pack"``, ``"pack of
        6"``, ``"6 x 12 oz"``, ``"25/Pack"``, ``"4Pcs/Lot"``) for an attribute whose slug names pieces,
        packs or counts; counts (``"60 Count"``, ``"120 capsules"``) for another unit-less number whose
        definition says it is a count (a net content typed from count gold, ``catalog templates
        from-gold``)."""
        if "piece" in spec.slug:
            pattern = _PIECES
        elif "pack" in spec.slug or "count" in spec.slug:
            pattern = _PACK
        elif "count" in spec.definition.lower():
            pattern = _COUNT
        else:
            return []
        out = []
        for m in pattern.finditer(ctx.text):
            count = _count(next(g for g in m.groups() if g))
            if count is not None:
                out.append(self._finding(spec, ctx, fmt(count), m.span(), Q_NAMED))
        return out

    @staticmethod
    def _quantity_quality(
        spec: AttributeSpec,
        ctx: _Ctx,
        q: Qty,
        keys: set[str],
        siblings: list[AttributeSpec],
        explicit: list[tuple[int, int]],
    ) -> float | None:
        """Quality of the free-text quantity ``q`` for ``spec``: ``Q_NAMED`` when its sentence names the
        attribute, ``Q_BARE`` for a bare quantity no sibling attribute could take (also in the title: on the
        WDC-PAVE train part a bare title quantity was the gold value 12 times in 22), None when skipped
        (inside an explicit field of the attribute, a serving/nutrition/ingredients sentence, a processor
        cache size, a bare length for an axis attribute, or a dimension shared with a sibling)."""
        if any(s <= q.start < e for s, e in explicit):
            return None  # already taken as an explicit field
        s, e = ctx.sentence_of(q.start, q.end)
        if ctx.not_product_quantity(s, e):
            return None  # serving sizes and nutrition rows are not the product's quantity
        if q.unit in ("megabyte", "gigabyte", "terabyte") and _CPU.search(ctx.text[s:e]):
            return None  # "2.0GHz/6-core/18MB": a processor cache, not storage capacity
        if ctx.names(s, e, spec):  # a phrase of ``keys``
            return Q_NAMED
        if spec.slug in _AXES:
            return None  # a bare length is no width/depth/height/length without its word or "A x B" chain
        if any(accepts(other, q) is not None for other in siblings):
            return None  # another attribute of the template shares this dimension: a bare number is ambiguous
        return Q_BARE

    def _dimensions(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        """``31-1/2"L x 16-1/4"W x 36"H``, ``18" wide``, ``12" deep`` → the axis named by the letter/word."""
        out = []
        for m in _DIM.finditer(ctx.text):
            axis = _DIM_AXIS.get(m.group("letter") or (m.group("word") or "").lower())
            if axis != spec.slug:
                continue
            if m.group("letter") and not m.group("unit") and not _in_dim_chain(ctx.text, m.start(), m.end()):
                continue  # "1500 W" is watts, "1.7 L" litres: a bare axis letter needs an "A x B x C" chain
            number = _count(m.group("num"))  # "31-1/2" = 31.5 (numbers.find_numbers)
            unit = m.group("unit") or '"'
            unit = {"'": "ft", "''": "in", "”": "in", '"': "in"}.get(unit, unit.rstrip("."))
            converted = None if number is None else convert(f"{number!r} {unit}", spec.unit or "in")
            if converted is not None:
                out.append(
                    self._finding(spec, ctx, f"{fmt(converted)} {spec.unit or 'in'}", m.span(), Q_NAMED)
                )
        return out

    # -- allergens ----------------------------------------------------------------------------------
    def _allergens(self, spec: AttributeSpec, ctx: _Ctx, traces: bool = False) -> list[Finding]:
        out = []
        for m in _ALLERGEN_STMT.finditer(ctx.text):
            s, e = ctx.sentence_of(m.start(), m.end())
            before = ctx.text[max(s, m.start() - 12) : m.start()].lower()
            if re.search(r"(?:\bnot|n't|\bnever)\s*$", before) or (
                m.group("lead").lower() == "contain" and not re.search(r"\b(?:may|might|can)\s*$", before)
            ):
                continue  # "does not contain milk" is no allergen claim
            is_trace = bool(re.search(r"\b(?:may|might|can)\s*$", before)) or bool(
                _TRACE.search(ctx.text[s:e])
            )
            if is_trace != traces or _INGREDIENTS.match(ctx.text[s:e]) and not m.group("lead"):
                continue
            span = (m.start(), m.end("list"))
            for item in re.split(r"\s*(?:,|\band\b|&|/|\bor\b)\s*", m.group("list")):
                if not item.strip() or re.match(r"\s*(?:no|none|nothing)\b", item, re.IGNORECASE):
                    continue
                for value in map_to_vocab(item, spec.allowed_values, search=True):
                    out.append(
                        self._finding(
                            spec, ctx, value, span, Q_EXPLICIT, True, quote_span=_trim(ctx.doc.text, span)
                        )
                    )
        out.extend(self._ingredient_allergens(spec, ctx, traces))
        if traces:
            for m in _TRACE.finditer(ctx.text):
                if not m.group(0).lower().startswith(("may", "might", "can")):
                    s, e = ctx.sentence_of(m.start(), m.end())
                    for value in map_to_vocab(ctx.text[m.end() : e], spec.allowed_values, search=True):
                        out.append(self._finding(spec, ctx, value, (s, e), Q_NAMED))
        return out

    def _ingredient_allergens(self, spec: AttributeSpec, ctx: _Ctx, traces: bool) -> list[Finding]:
        """Allergens an ingredient list names (``scout.ingredients``: the Annex II / Open Food Facts map),
        each quoted by its ingredient words ("wheat flour" -> wheat, gluten) at :data:`Q_NAMED`; with
        ``traces`` the names inside its may-contain clause instead."""
        out = []
        allowed = set(spec.allowed_values or [])
        for mention in ingredient_list_mentions(ctx.text):
            if mention.trace != traces:
                continue
            for value in mention.values:
                if value in allowed:
                    out.append(
                        self._finding(spec, ctx, value, mention.span, Q_NAMED, quote_span=mention.span)
                    )
        return out


_COUNT_TAIL = re.compile(r"\s*(?:pack|pk|count|ct|pcs|pieces|units?)?\s*", re.IGNORECASE)


def _count(text: str) -> float | None:
    """The one unambiguous number of ``text`` ("1,000" -> 1000, "31-1/2" -> 31.5), via
    ``numbers.find_numbers``; None when there is not exactly one or it is ambiguous."""
    nums = find_numbers(text, ranges=False)
    return nums[0].value if len(nums) == 1 and not nums[0].ambiguous else None


_CHAIN_AFTER = re.compile(r"\s*[x×X*]\s*\d")
_CHAIN_BEFORE = re.compile(r"\d\s*(?:\"|”|''|in\.?|cm|mm|')?\s*[WDHL]?\.?\s*[x×X*]\s*$")


def _in_dim_chain(text: str, start: int, end: int) -> bool:
    """True when the mention at ``[start, end)`` is part of an ``A x B x C`` dimension chain."""
    return bool(_CHAIN_AFTER.match(text, end) or _CHAIN_BEFORE.search(text[max(0, start - 16) : start]))


def _trim(text: str, span: tuple[int, int]) -> tuple[int, int]:
    s, e = span
    while e > s and text[e - 1] in " \t,;:":
        e -= 1
    return (s, e)


@lru_cache(maxsize=1024)
def _vocab_phrases(vocab: tuple[str, ...]) -> tuple[tuple[str, str, str | None], ...]:
    """``(value, phrase, its phrase_literal)`` for every surface phrase of every vocabulary value, in order;
    a value that is no value text is left out (a "-" would match the empty string everywhere). A phrase is
    compiled (:func:`phrase_re`) only when some text passes its literal prefilter."""
    return tuple(
        (value, phrase, phrase_literal(phrase))
        for value in vocab
        if is_value_text(value, placeholders=False)
        for phrase in value_phrases(value)
    )


def _starts_title(ctx: _Ctx, start: int) -> bool:
    """True when ``start`` opens the catalog title (only blanks, quotes or an opening bracket before it)."""
    return ctx.doc.metadata.get("field") == "title" and not ctx.text[:start].strip(" \t\"'([")


def _is_kv_key_position(text: str, start: int) -> bool:
    """True when ``start`` lies in the key of a ``key: value`` line (a field name is not a claim)."""
    # O(50) per call: the colon must lie within 50 characters of the line start and after ``start``
    low = max(0, start - 51)
    newline = text.rfind("\n", low, start)
    if newline < 0 and low > 0:
        return False  # the line starts more than 50 characters before ``start``
    line_start = newline + 1
    colon = text.find(":", line_start, line_start + 51)
    return colon >= 0 and start < colon and "\n" not in text[line_start:colon]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: dict[tuple[str, str, str, tuple[int, int] | None], Finding] = {}
    for f in findings:
        key = (f.attribute, f.value, f.evidence.source_ref, f.evidence.span)
        if key not in seen or f.quality > seen[key].quality:
            seen[key] = f
    return list(seen.values())
