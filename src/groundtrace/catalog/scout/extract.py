"""Extraction engines: Documents → per-attribute findings with verbatim evidence.

Contract (:class:`ExtractionEngine`)::

    engine.extract(sku, attributes, documents, template_attributes=None) -> EngineOutput
        .findings      list[Finding]  one proposed value with ONE Evidence (quote + span in its Document)
        .abstentions   {slug: Abstention}  engine-declared statuses (not_applicable ...) — LLM engines
        .flags         {slug: [flag]}      e.g. quote_not_found, injection_quote

The offline :class:`LexiconEngine` (registered as ``offline``; the default and a real baseline) applies,
per attribute type, deterministic rules. Every value it returns is backed by a quote that is an exact
substring of the Document text at ``span``.

* **Instruction-like sentences are never evidence.** Before anything is matched, every sentence that
  reads like an instruction to a model ("ignore previous instructions", "mark this product ...",
  "you are now ...", "system prompt", "respond with ...") is masked (see :func:`instruction_spans`).
* **explicit fields** — a line ``key: value`` whose key names the attribute (its slug, name or a known
  alias such as "Net Wt" for net_content, "Contains" for allergens) → quality 1.0.
* **enum** — allowed values and their synonyms/abbreviations (``tree_nuts`` ← "almonds", ``nimh`` ←
  "nickel-metal hydride", ``usb_c`` ← "USB-C"), whole-word, case/separator-insensitive, in free text →
  quality 0.75; a mention preceded by a negator (not, non-, no, never, isn't ...) is skipped.
* **bool** — a cue lexicon per attribute (``organic`` ← "USDA Organic", "certified organic";
  ``dishwasher_safe`` ← "dishwasher safe" / "hand wash only" → false ...) plus the attribute's own
  name; a negated cue ("not dishwasher safe", "non-organic", "batteries not included") gives false.
* **number+unit** — quantities (number + unit token) converted to the template unit; in a sentence that
  names the attribute → 0.85; a bare quantity → 0.6 only when no other number attribute of the template
  shares its dimension and the sentence is not about servings/nutrition. Unit-less numbers (pack
  counts) come only from explicit fields and pack patterns ("6-pack", "pack of 6", "6 x 12 oz"); a
  count ("72 Count", "16 capsules") is the net content when the attribute's definition allows counts
  and the document states no mass/volume. Dimensions: ``31-1/2"L x 16-1/4"W x 36"H``, ``18" wide``,
  ``12" deep`` name their axis (W/D/H/L, wide/deep/high/tall/long) → width/depth/height/length at 0.85.
* **string** — the attribute's recommended vocabulary in free text (0.75) or an explicit field (1.0).
* **multi-valued, safety-critical** (allergens, dietary labels) — allergens only from explicit
  statements ("Contains: milk, soy", "Allergens: ..."), split into items mapped to the allowed set.
  **"May contain" / "processed in a facility that also ..." statements are traces, never allergens**:
  those clauses are excluded from the allergen attribute (they go to an attribute whose slug contains
  ``trace`` when the template has one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.catalog.model import SKU, AttributeSpec, CandidateStatus, Document, Evidence
from groundtrace.core.registry import Registry

# -- public records ----------------------------------------------------------------------------------
FLAG_QUOTE_NOT_FOUND = "quote_not_found"
FLAG_INJECTION = "injection_quote"
FLAG_NOT_ALLOWED = "value_not_allowed"
FLAG_UNKNOWN_SOURCE = "unknown_source_ref"


class Finding(BaseModel):
    """One proposed value for one attribute with one piece of evidence."""

    model_config = ConfigDict(extra="forbid")

    attribute: str
    value: str
    evidence: Evidence
    quality: float = Field(
        ge=0.0, le=1.0, description="Match quality: 1 explicit field ... 0.6 bare mention."
    )
    explicit: bool = False
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="Engine's own score (LLM).")
    flags: list[str] = Field(default_factory=list)


class Abstention(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: CandidateStatus
    note: str = ""


class EngineOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    findings: list[Finding] = Field(default_factory=list)
    abstentions: dict[str, Abstention] = Field(default_factory=dict)
    flags: dict[str, list[str]] = Field(default_factory=dict)
    identity: dict[str, Any] | None = None
    calls: int = 0


@runtime_checkable
class ExtractionEngine(Protocol):
    """``extract(sku, attributes, documents) -> EngineOutput`` (see module docstring)."""

    name: str

    def extract(
        self,
        sku: SKU,
        attributes: list[AttributeSpec],
        documents: list[Document],
        *,
        template_attributes: list[AttributeSpec] | None = None,
    ) -> EngineOutput: ...


EXTRACTION_ENGINES: Registry[Any] = Registry("extraction engine")

# -- text helpers ------------------------------------------------------------------------------------
_NEGATORS = re.compile(
    r"(?:\bnot|\bnon|\bno|\bnever|\bwithout|n't|\bisn't|\baren't|\bfree\s+of)\s*[-\s]?\s*$", re.IGNORECASE
)
# who a model-addressed sentence talks to: "the assistant", "the AI", "any LLM" ("AI-powered" is no addressee)
_ADDRESSEE = (
    r"(?:ai|a\.i\.|assistant|ai\s+assistant|ai\s+model|ai\s+agent|model|language\s+model|llm|chatbot|"
    r"bot|gpt|chatgpt|agent)s?(?![\w-])"
)
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,60}\b(?:instruction|prompt|rule|direction|"
    r"guideline|context|above|previous|prior|earlier)"
    r"|\b(?:new|updated|system|developer|hidden)\s+(?:instructions?|prompt|message)\b"
    r"|\byou\s+are\s+(?:now\s+)?(?:an?\s+)?(?:ai|assistant|language model|llm|chatbot|gpt)(?![\w-])"
    r"|\byou\s+are\s+now\s+(?:an?|the|my|our)\s+(?:[\w-]+\s+){0,3}?(?:ai|assistant|model|llm|chatbot|bot|agent|"
    r"expert|system)(?![\w-])"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:developer|admin|god|jailbreak|jailbroken|unrestricted|dan)(?:\s+mode)?\b"
    r"|\bfrom\s+now\s+on,?\s+you\b"
    r"|\bas\s+an?\s+(?:ai|assistant|language model|llm|chatbot)(?![\w-])"
    r"|\b(?:note|notice|message|instructions?|reminder|request|attention|memo|p\.?s\.?)\s+(?:to|for)\s+"
    r"(?:the\s+|any\s+|all\s+|every\s+|an\s+|a\s+)?"
    + _ADDRESSEE
    + r"|\bto\s+(?:the|any|all|every)\s+"
    + _ADDRESSEE
    + r"(?:\s*:|\s+(?:reading|processing|parsing|summari[sz]ing|"
    r"extracting|indexing|crawling|scraping|that\s+reads?|who\s+reads?))"
    r"|^\W{0,3}(?:to|dear|hey|hi|hello|attention|attn)\s*[,:]?\s+(?:the\s+|any\s+|all\s+)?"
    + _ADDRESSEE
    + r"|\b(?:mark|label|classify|tag|flag|set|record|list|treat|report)\s+(?:this|the)\s+(?:product|item|sku|"
    r"attribute|listing)\b"
    r"|\b(?:respond|reply|answer|output)\s+(?:only\s+)?(?:with|that|as)\b"
    r"|^\W{0,3}(?:system|assistant|user|developer|human|ai|chatbot|llm|gpt)\s*:\s"
    r"|<\|?(?:im_start|im_end|system|endoftext)\|?>"
    r"|\[/?(?:inst|system|assistant|user)\]|<</?sys>>|</?(?:system|assistant|user)>"
    r"|#{2,}\s*(?:system|assistant|instruction|response)\b",
    re.IGNORECASE,
)
_SENT_END = re.compile(r"(?<=[.!?])\s+|\n+")
_KV_LINE = re.compile(
    r"^[ \t]*(?P<key>[A-Za-z][^:\n]{0,48}?)[ \t]*:[ \t]*(?P<val>[^\n]*\S)[ \t]*$", re.MULTILINE
)


#: Field fillers that state no value ("Color: -", "Model: N/A").
PLACEHOLDERS = frozenset(
    {
        "n a",
        "na",
        "none",
        "null",
        "nil",
        "unknown",
        "not applicable",
        "not available",
        "tbd",
        "tba",
        "various",
        "other",
        "see description",
        "see below",
        "undefined",
    }
)


def is_value_text(value: str, placeholders: bool = True) -> bool:
    """False for an empty or punctuation-only value ("-", "--", "/", "…"), and, when ``placeholders``, for
    a filler that states no value ("N/A", "none", "unknown")."""
    if not any(ch.isalnum() for ch in value):
        return False
    return not placeholders or _norm_key(value) not in PLACEHOLDERS


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence/line of ``text`` (split at . ! ? + space, and at newlines)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENT_END.finditer(text):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """Spans of sentences that read like instructions to a model — never evidence (prompt injection).

    Cues: ignore/disregard/forget/override ... instructions/prompt/previous; new/system/developer/hidden
    instructions, prompt or message; "you are (now) an AI/assistant", "you are now a ... assistant/bot/
    expert", "you are now in developer mode", "from now on, you"; "as an AI/assistant/LLM"; a note,
    message, reminder or instruction to/for the assistant/AI/model/LLM/chatbot/bot/agent ("IMPORTANT NOTE
    TO THE ASSISTANT: ..."); "to the AI:" or "to the AI reading this"; a sentence opening with "To/Dear/
    Hey/Attention the AI/assistant ..."; mark/label/classify/set ... this product/item/attribute;
    respond/reply/answer/output with/only; a sentence starting with a role prefix (``system:``,
    ``assistant:``, ``user:``, ``developer:``, ``human:``, ``AI:``); chat-template and role tokens
    (``<|im_start|>``, ``[INST]``, ``<<SYS>>``, ``<assistant>``, ``### Response``). "AI" followed by a
    hyphen or letter ("AI-powered", "AIR") is no addressee, and a role word needs its colon at the start of
    the sentence, so "Our assistant manager recommends ...", "AI-powered thermostat", "Voice Assistant:
    Alexa" and "Model: X100" are product text, not instructions."""
    return [(s, e) for s, e in sentence_spans(text) if _INSTRUCTION.search(text[s:e])]


def mask_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every span replaced by spaces (offsets preserved)."""
    chars = list(text)
    for s, e in spans:
        chars[s:e] = " " * (e - s)
    return "".join(chars)


def overlaps(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in spans)


@lru_cache(maxsize=8192)
def phrase_re(phrase: str) -> re.Pattern[str]:
    """Compiled, case-insensitive :func:`phrase_pattern` (cached: lexicons are matched per document)."""
    return re.compile(phrase_pattern(phrase), re.IGNORECASE)


def phrase_pattern(phrase: str) -> str:
    """Regex for ``phrase`` with flexible separators (space/hyphen/underscore) and word boundaries."""
    parts = [re.escape(p) for p in re.split(r"[\s_\-]+", phrase.strip()) if p]
    body = r"[\s\-_]*".join(parts)
    left = r"(?<![\w])" if phrase[:1].isalnum() else ""
    right = r"(?![\w])" if phrase[-1:].isalnum() else ""
    return f"{left}{body}{right}"


def _norm_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _negated(text: str, start: int) -> bool:
    window = text[max(0, start - 20) : start]
    window = re.split(r"[,;:.!?()\n]", window)[-1]
    return bool(_NEGATORS.search(window))


@dataclass
class _Ctx:
    doc: Document
    text: str  # masked text (instruction sentences blanked)
    sentences: list[tuple[int, int]]

    def sentence_of(self, start: int, end: int) -> tuple[int, int]:
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
        return Evidence(
            source=d.source,
            source_type=d.source_type,
            source_ref=d.source_ref,
            quote=d.text[span[0] : span[1]],
            span=span,
            url=d.metadata.get("url"),
        )


def kv_lines(text: str) -> Iterator[tuple[str, str, int, int, int]]:
    """``(key, value, line_start, line_end, value_start)`` for every ``key: value`` line."""
    for m in _KV_LINE.finditer(text):
        yield m.group("key").strip(), m.group("val").strip(), m.start("key"), m.end("val"), m.start("val")


# -- lexicons ----------------------------------------------------------------------------------------
Q_EXPLICIT, Q_NAMED, Q_MENTION, Q_BARE = 1.0, 0.85, 0.75, 0.6

#: Extra phrases per allowed/recommended value (the value itself, separators relaxed, always counts).
VALUE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "tree_nuts": (
        "tree nut",
        "almond",
        "almonds",
        "cashew",
        "cashews",
        "walnut",
        "walnuts",
        "pecan",
        "pecans",
        "hazelnut",
        "hazelnuts",
        "pistachio",
        "pistachios",
        "macadamia",
        "brazil nut",
        "brazil nuts",
    ),
    "peanuts": ("peanut",),
    "eggs": ("egg",),
    "milk": ("dairy",),
    "soybeans": ("soy", "soya", "soybean"),
    "crustacean_shellfish": ("shellfish", "crustacean", "crustaceans", "shrimp", "crab", "lobster"),
    "molluscs": ("mollusc", "mollusk", "mollusks"),
    "sesame": ("sesame seed", "sesame seeds"),
    "sulphites": ("sulfites", "sulphite", "sulfite", "sulfur dioxide", "sulphur dioxide"),
    "non_gmo": ("gmo free", "non-gmo project verified"),
    "no_added_sugar": ("no sugar added",),
    "sugar_free": ("zero sugar",),
    "keto": ("keto friendly",),
    "vegan": ("certified vegan", "plant based vegan"),
    "gluten_free": ("certified gluten free",),
    "lithium_ion": ("li-ion", "li ion", "lithium-ion"),
    "nimh": ("ni-mh", "nickel metal hydride"),
    "nicd": ("ni-cd", "nickel cadmium"),
    "lithium_polymer": ("li-po", "lipo", "li-polymer"),
    "lithium_iron_phosphate": ("lifepo4",),
    "lead_acid": ("sealed lead acid",),
    "wifi": ("wi-fi", "wireless lan", "wlan"),
    "usb_c": ("usb type-c", "type-c", "usb-c"),
    "z_wave": ("z-wave",),
    "infrared": ("ir remote",),
    "rechargeable_battery": ("rechargeable",),
    "battery": ("battery powered", "battery operated"),
    "ac_adapter": ("power adapter",),
    "mains": ("corded", "plug-in"),
    "decaffeinated": ("decaf",),
    "caffeine_free": ("no caffeine",),
    "half_caff": ("half caff",),
    "refrigerated": ("keep refrigerated",),
    "frozen": ("keep frozen",),
    "shelf_stable": ("store in a cool dry place", "store in a cool, dry place"),
    "k-cups": ("k-cup", "k cup pods", "k-cup pods"),
    "tea bags": ("tea bag",),
    "whole bean": ("whole beans",),
    "sparkling_wine": ("champagne", "prosecco", "cava"),
    "hard_seltzer": ("hard seltzer",),
    "aluminum": ("aluminium",),
    "gray": ("grey",),
}
#: Common English words: a free-text mention only counts when the sentence also names the attribute.
AMBIGUOUS_WORDS = frozenset(
    {
        "can",
        "box",
        "none",
        "bar",
        "cup",
        "tin",
        "whole",
        "ground",
        "sour",
        "dry",
        "red",
        "white",
        "original",
        "instant",
        "spread",
        "paste",
        "sliced",
        "square",
        "round",
        "natural",
        "clear",
        "lightning",
        "mains",
        "solar",
        "keg",
        "porter",
        "liquid",
        "orange",
        "honey",
        "mint",
        "lithium",
        "battery",
        "bag",
        "jar",
        "frozen",
        "wood",
        "glass",
        "steel",
        "plastic",
        "ale",
        "wine",
        "beer",
        "spirits",
        "mead",
        "cider",
    }
)
#: Field names (besides slug and name) that name an attribute in ``key: value`` lines.
KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "allergens": ("allergen", "contains", "allergen information", "allergy information", "allergy advice"),
    "dietary_labels": ("dietary", "diet", "diet type", "specialty", "dietary claims", "certifications"),
    "net_content": (
        "net wt",
        "net weight",
        "net contents",
        "net vol",
        "net volume",
        "net quantity",
        "size",
        "weight",
        "volume",
        "item weight",
    ),
    "pack_count": (
        "pack quantity",
        "pack size",
        "count",
        "number of items",
        "units per pack",
        "quantity",
        "pack",
    ),
    "country_of_origin": ("origin", "made in", "product of", "country"),
    "item_form": ("form",),
    "capacity": ("storage", "storage capacity", "memory", "volume"),
    "battery_capacity": ("capacity", "battery"),
    "wattage": ("power", "output power", "watts", "rated power"),
    "voltage": ("input voltage", "rated voltage", "volts"),
    "screen_size": ("display size", "screen", "display"),
    "weight": ("item weight", "product weight", "net weight"),
    "abv": ("alcohol by volume", "alcohol", "alc vol", "alc"),
    "volume": ("size", "net contents", "net vol", "bottle size"),
    "number_of_pieces": ("pieces", "piece count", "set of"),
    "power_source": ("power", "powered by"),
    "packaging_type": ("packaging", "package type", "container"),
    "container_type": ("container", "packaging"),
    "color": ("colour", "finish color"),
    "material": ("materials", "made of", "construction"),
    "storage": ("storage instructions", "keep", "store"),
}
#: Bool cue lexicon: slug → (positive phrases, negative phrases). Negative phrases win on overlap.
BOOL_CUES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "organic": (("usda organic", "certified organic", "organic"), ("non organic", "not organic")),
    "batteries_included": (
        (
            "batteries included",
            "battery included",
            "includes batteries",
            "batteries are included",
            "comes with batteries",
            "batteries come included",
        ),
        (
            "batteries not included",
            "battery not included",
            "batteries sold separately",
            "batteries are not included",
            "batteries are sold separately",
            "no batteries included",
        ),
    ),
    "dishwasher_safe": (
        ("dishwasher safe",),
        (
            "not dishwasher safe",
            "hand wash only",
            "do not put in dishwasher",
            "not safe for dishwasher",
            "not safe in the dishwasher",
        ),
    ),
    "assembly_required": (
        ("assembly required", "requires assembly", "some assembly required"),
        (
            "no assembly required",
            "assembly not required",
            "fully assembled",
            "comes assembled",
            "no assembly needed",
        ),
    ),
}
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
_CPU = re.compile(
    r"\bcache\b|\d\s*[gm]hz\b|\bprocessor\b|\bcpu\b|\bxeon\b|\bopteron\b|-core\b", re.IGNORECASE
)
_INGREDIENTS = re.compile(r"^\s*ingredients?\b", re.IGNORECASE)
_SERVING = re.compile(r"serving|\bper\b|calorie|nutrition|daily value|\bdv\b|each|amount", re.IGNORECASE)
_BOOL_TRUE = {"yes", "y", "true", "1", "included", "certified"}
_BOOL_FALSE = {"no", "n", "false", "0", "not included", "none"}

_UNIT_TOKENS: dict[str, str] = {
    "fl oz": "fluid_ounce",
    "floz": "fluid_ounce",
    "fluid ounce": "fluid_ounce",
    "fluid ounces": "fluid_ounce",
    "oz": "ounce",
    "ounce": "ounce",
    "ounces": "ounce",
    "lb": "pound",
    "lbs": "pound",
    "pound": "pound",
    "pounds": "pound",
    "kg": "kilogram",
    "kilogram": "kilogram",
    "kilograms": "kilogram",
    "mg": "milligram",
    "g": "gram",
    "gram": "gram",
    "grams": "gram",
    "ml": "milliliter",
    "milliliter": "milliliter",
    "milliliters": "milliliter",
    "millilitre": "milliliter",
    "millilitres": "milliliter",
    "cl": "centiliter",
    "l": "liter",
    "liter": "liter",
    "liters": "liter",
    "litre": "liter",
    "litres": "liter",
    "gal": "gallon",
    "gallon": "gallon",
    "gallons": "gallon",
    "qt": "quart",
    "quart": "quart",
    "quarts": "quart",
    "mah": "milliampere_hour",
    "wh": "watt_hour",
    "kwh": "kilowatt_hour",
    "kw": "kilowatt",
    "w": "watt",
    "watt": "watt",
    "watts": "watt",
    "v": "volt",
    "volt": "volt",
    "volts": "volt",
    "hz": "hertz",
    "khz": "kilohertz",
    "mhz": "megahertz",
    "ghz": "gigahertz",
    "mm": "millimeter",
    "cm": "centimeter",
    "m": "meter",
    "in": "inch",
    "inch": "inch",
    "inches": "inch",
    '"': "inch",
    "”": "inch",
    "ft": "foot",
    "feet": "foot",
    "gb": "gigabyte",
    "tb": "terabyte",
    "mb": "megabyte",
    "%": "percent",
    "percent": "percent",
}
_DISPLAY = {
    "fluid_ounce": "fl oz",
    "ounce": "oz",
    "pound": "lb",
    "gram": "g",
    "kilogram": "kg",
    "milligram": "mg",
    "milliliter": "mL",
    "centiliter": "cL",
    "liter": "L",
    "gallon": "gal",
    "quart": "qt",
}
_QTY = re.compile(
    r"(?<![\w.])(?<![A-Za-z]-)(?P<num>\d+(?:[.,]\d+)?)\s*-?\s*(?P<unit>fl\.?\s*oz|fluid\s+ounces?|oz|ounces?|lbs?|pounds?|kg|"
    r"kilograms?|mg|grams?|g|ml|millilit(?:er|re)s?|cl|lit(?:er|re)s?|l|gal(?:lons?)?|qt|quarts?|mah|kwh|wh|"
    r"kw|watts?|w|volts?|v|khz|mhz|ghz|hz|mm|cm|m|inch(?:es)?|in|ft|feet|gb|tb|mb|percent)(?![\w])\.?"
    r"|(?<![\w.])(?P<num2>\d+(?:\.\d+)?)\s*(?P<unit2>%|\"|”)",
    re.IGNORECASE,
)
_PACK = re.compile(
    r"\b(?:pack|case|box|set|bundle)\s+of\s+(?P<a>\d+)\b|\b(?P<b>\d+)\s*[-\s]?\s*(?:pack|pk)\b"
    r"|\b(?P<c>\d+)\s*[x×]\s*\d+(?:\.\d+)?\s*(?:fl\.?\s*oz|oz|g|ml|l|cans?|bottles?)\b",
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
# up to three capitalised words on one line; a word ending in "." ends the name ("Product of Canada. Store
# in a cool place" -> "Canada", never "Canada. Store")
_ORIGIN = re.compile(
    r"\b(?i:product\s+of|made\s+in|produced\s+in|grown\s+in)\s+"
    r"(?P<c>[A-Z][\w'.-]*(?:(?<!\.)[ \t]+[A-Z][\w'.-]*){0,2})"
)


# -- quantities ----------------------------------------------------------------------------------------
def _unit_key(token: str) -> str | None:
    t = re.sub(r"\s+", " ", token.lower().rstrip(".")).replace("fl. oz", "fl oz").replace("fl.oz", "fl oz")
    return _UNIT_TOKENS.get(t)


def _convert(raw: str, target: str) -> float | None:
    """Magnitude of the quantity text ``raw`` in ``target`` units (``core.normalize.parse_quantity``;
    None when unparseable, dimensionless or of another dimension)."""
    from groundtrace.core.evidence.normalize import parse_quantity, parse_unit

    q = parse_quantity(re.sub(r"\s*%$", " percent", raw.strip()))
    unit = parse_unit(target)
    if q is None or unit is None or q.unitless:
        return None
    try:
        return float(q.to(unit).magnitude)
    except Exception:  # noqa: BLE001 - pint DimensionalityError and friends: incompatible units
        return None


def _fmt(x: float) -> str:
    """A number as ``core.normalize`` writes it (4 significant digits, integer digits kept)."""
    from groundtrace.core.evidence.normalize import normalize_value

    return normalize_value(repr(float(x)), "number") or f"{x:g}"


@dataclass(frozen=True)
class _Qty:
    value: float
    unit: str  # pint unit name from the token table (display symbol lookup)
    start: int
    end: int
    raw: str  # the matched text, parsed by core.normalize.parse_quantity


def quantities(text: str) -> list[_Qty]:
    """Every number+unit mention of ``text`` (units from a closed token list)."""
    out = []
    for m in _QTY.finditer(text):
        num, unit = (
            (m.group("num"), m.group("unit")) if m.group("num") else (m.group("num2"), m.group("unit2"))
        )
        key = _unit_key(unit)
        if key is None:
            continue
        raw = m.group(0).rstrip(".")
        raw_num = f"{num} {unit}"  # "2.2-Pound" -> "2.2 Pound" for parse_quantity
        out.append(_Qty(float(num.replace(",", ".")), key, m.start(), m.start() + len(raw), raw_num))
    return out


def _dimension_units(spec: AttributeSpec) -> list[str]:
    """Target units a number attribute accepts: its unit, or its recommended unit symbols."""
    if spec.unit:
        return [spec.unit]
    return [u for u in spec.recommended_values if _unit_key(u) is not None]


def _accepts(spec: AttributeSpec, qty: _Qty) -> str | None:
    """The value string of ``qty`` for ``spec`` (converted to its unit), or None when incompatible."""
    if spec.unit:
        converted = _convert(qty.raw, spec.unit)
        return None if converted is None else f"{_fmt(converted)} {spec.unit}"
    for unit in _dimension_units(spec):
        if _convert(qty.raw, unit) is not None:
            return f"{_fmt(qty.value)} {_DISPLAY.get(qty.unit, qty.unit)}"
    return None


# -- the offline engine --------------------------------------------------------------------------------
def attribute_keys(spec: AttributeSpec) -> set[str]:
    """Normalised field names that name ``spec`` in ``key: value`` lines."""
    keys = {_norm_key(spec.slug), _norm_key(spec.name)}
    keys.update(_norm_key(k) for k in KEY_ALIASES.get(spec.slug, ()))
    return {k for k in keys if k}


@lru_cache(maxsize=4096)
def value_phrases(value: str) -> tuple[str, ...]:
    """Surface phrases of an allowed/recommended value: itself (separators relaxed), its synonyms and
    its ``core.normalize.expand_abbreviation`` expansion; phrases without a letter or digit are dropped."""
    from groundtrace.core.evidence.normalize import expand_abbreviation

    phrases = [value, *VALUE_SYNONYMS.get(value, ())]
    expanded = expand_abbreviation(value)
    if expanded and expanded.lower() != value.lower():
        phrases.append(expanded)
    return tuple(p for p in phrases if any(ch.isalnum() for ch in p))  # "-" would match the empty string


@lru_cache(maxsize=8192)
def _whole_re(phrase: str) -> re.Pattern[str]:
    return re.compile(rf"\s*{phrase_pattern(phrase)}\s*s?", re.IGNORECASE)


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
    ) -> EngineOutput:
        """Findings for ``attributes``; ``template_attributes`` (default: ``attributes``) is the whole
        template, used to tell whether a bare quantity could belong to another attribute."""
        context = template_attributes or attributes
        findings: list[Finding] = []
        flags: dict[str, list[str]] = {}
        ctxs = []
        for doc in documents:
            masked = instruction_spans(doc.text)
            ctxs.append(_Ctx(doc=doc, text=mask_spans(doc.text, masked), sentences=sentence_spans(doc.text)))
            if masked:
                for spec in attributes:
                    note = f"instruction-like text ignored in {doc.source_ref}"
                    if note not in flags.setdefault(spec.slug, []):
                        flags[spec.slug].append(note)
        for spec in attributes:
            for ctx in ctxs:
                findings.extend(self.extract_one(spec, ctx, context))
        findings = [
            f for f in findings if is_value_text(f.value, placeholders=False) and f.evidence.quote.strip()
        ]
        return EngineOutput(findings=_dedupe(findings), flags={k: v for k, v in flags.items() if v})

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
        return Finding(
            attribute=spec.slug, value=value, evidence=evidence, quality=quality, explicit=explicit
        )

    # -- explicit key: value fields -----------------------------------------------------------------
    def _explicit(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        keys = attribute_keys(spec)
        out: list[Finding] = []
        for key, raw, start, end, vstart in kv_lines(ctx.text):
            if _norm_key(key) not in keys:
                continue
            raw = re.split(r"(?<=[.!?])\s", raw)[0].rstrip(".")
            end = vstart + len(raw)
            for value in self._values_from_field(spec, raw):
                out.append(
                    self._finding(spec, ctx, value, (start, end), Q_EXPLICIT, True, quote_span=(start, end))
                )
        if spec.type == "enum":  # "Gluten Free: Yes" names a label of a label attribute
            for key, raw, start, end, _vs in kv_lines(ctx.text):
                labels = _map_to_vocab(key, spec.allowed_values)
                if labels and _parse_bool(raw) is True:
                    out.extend(
                        self._finding(spec, ctx, v, (start, end), Q_EXPLICIT, True, quote_span=(start, end))
                        for v in labels
                    )
        return out

    def _values_from_field(self, spec: AttributeSpec, raw: str) -> list[str]:
        if spec.type == "bool":
            b = _parse_bool(raw)
            return [] if b is None else ["true" if b else "false"]
        if spec.type == "number":
            qs = quantities(raw)
            vals = [v for q in qs if (v := _accepts(spec, q)) is not None]
            if vals:
                return vals[:1] if not spec.multi_valued else vals
            m = re.fullmatch(
                r"\s*(\d+(?:\.\d+)?)\s*(?:pack|pk|count|ct|pcs|pieces|units?)?\s*", raw, re.IGNORECASE
            )
            return [_fmt(float(m.group(1)))] if m and not spec.unit else []
        vocab = spec.allowed_values if spec.type == "enum" else spec.recommended_values
        items = re.split(r"\s*(?:,|;|/|\||\band\b|&)\s*", raw) if spec.multi_valued else [raw]
        values: list[str] = []
        for item in items:
            item = item.strip()
            if not item:
                continue
            origin = _ORIGIN.search(item) if spec.slug == "country_of_origin" else None
            if origin:  # "Country of Origin: Product of Canada" -> "Canada"
                item = origin.group("c").rstrip(".")
            mapped = _map_to_vocab(item, vocab)
            if not mapped and spec.type == "enum":  # "Battery type: Li-ion, rechargeable" -> one named value
                found = _map_to_vocab(item, vocab, search=True)
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
        hits: list[tuple[str, int, int]] = []
        for value in vocab:
            if not is_value_text(value, placeholders=False):
                continue  # a "-" in a vocabulary would match the empty string everywhere
            for phrase in value_phrases(value):
                for m in phrase_re(phrase).finditer(ctx.text):
                    hits.append((value, m.start(), m.end()))
        hits = _drop_contained(hits)
        keys = attribute_keys(spec)
        out = []
        for value, start, end in hits:
            s, e = ctx.sentence_of(start, end)
            sentence = ctx.text[s:e]
            if _INGREDIENTS.match(sentence) or _negated(ctx.text, start):
                continue
            if spec.safety_critical and _TRACE.search(sentence):
                continue
            named = any(phrase_re(k).search(sentence) for k in keys)
            surface = re.sub(r"[\s_-]+", " ", ctx.text[start:end].lower())
            if surface in AMBIGUOUS_WORDS and not named:
                continue
            if _is_kv_key_position(ctx.text, start):
                continue
            out.append(self._finding(spec, ctx, value, (start, end), Q_NAMED if named else Q_MENTION))
        return out

    def _origin(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        return [
            self._finding(spec, ctx, m.group("c").rstrip("."), m.span(), Q_NAMED)
            for m in _ORIGIN.finditer(ctx.text)
        ]

    # -- booleans -----------------------------------------------------------------------------------
    def _bool(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        default_pos = tuple(dict.fromkeys([spec.name.lower(), spec.slug.replace("_", " ")]))
        pos, neg = BOOL_CUES.get(spec.slug, (default_pos, ()))  # generic bools: negators flip the name
        neg_hits = [(m.start(), m.end()) for p in neg for m in phrase_re(p).finditer(ctx.text)]
        out = []
        for start, end in neg_hits:
            out.append(self._finding(spec, ctx, "false", (start, end), Q_NAMED))
        seen: set[tuple[int, int]] = set()
        for phrase in pos:
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
                value = "false" if _negated(ctx.text, span[0]) else "true"
                out.append(self._finding(spec, ctx, value, span, Q_NAMED))
        return out

    # -- numbers ------------------------------------------------------------------------------------
    def _numbers(self, spec: AttributeSpec, ctx: _Ctx, attributes: list[AttributeSpec]) -> list[Finding]:
        out: list[Finding] = []
        kv_spans = [(s, e) for _k, _v, s, e, _vs in kv_lines(ctx.text)]
        if not _dimension_units(spec):
            pattern = (
                _PIECES
                if "piece" in spec.slug
                else _PACK
                if ("pack" in spec.slug or "count" in spec.slug)
                else None
            )
            if pattern is not None:
                for m in pattern.finditer(ctx.text):
                    n = next(g for g in m.groups() if g)
                    out.append(self._finding(spec, ctx, _fmt(float(n)), m.span(), Q_NAMED))
            return out
        keys = attribute_keys(spec)
        if spec.slug in _AXES:
            out.extend(self._dimensions(spec, ctx))
        siblings = [
            a for a in attributes if a.slug != spec.slug and a.type == "number" and _dimension_units(a)
        ]
        for q in quantities(ctx.text):
            if overlaps((q.start, q.end), kv_spans) and any(
                _norm_key(k) in keys for k, _v, s, e, _vs in kv_lines(ctx.text) if s <= q.start < e
            ):
                continue  # already taken as an explicit field
            value = _accepts(spec, q)
            if value is None:
                continue
            s, e = ctx.sentence_of(q.start, q.end)
            sentence = ctx.text[s:e]
            if _SERVING.search(sentence) or _INGREDIENTS.match(sentence):
                continue  # serving sizes and nutrition rows are not the product's quantity
            if q.unit in ("megabyte", "gigabyte", "terabyte") and _CPU.search(sentence):
                continue  # "2.0GHz/6-core/18MB": a processor cache, not storage capacity
            if any(phrase_re(k).search(sentence) for k in keys):
                out.append(self._finding(spec, ctx, value, (q.start, q.end), Q_NAMED))
                continue
            if spec.slug in _AXES:
                continue  # a bare length is no width/depth/height/length without its word or an "A x B" chain
            if any(_accepts(other, q) is not None for other in siblings):
                continue  # another attribute of the template shares this dimension: a bare number is ambiguous
            out.append(self._finding(spec, ctx, value, (q.start, q.end), Q_BARE))
        if not out and "count" in spec.definition.lower():  # "72 Count" K-cups: a count is the net content
            for m in _COUNT.finditer(ctx.text):
                s, e = ctx.sentence_of(m.start(), m.end())
                if not _SERVING.search(ctx.text[s:e]):
                    out.append(self._finding(spec, ctx, f"{int(m.group('n'))} count", m.span(), Q_BARE))
        return out

    def _dimensions(self, spec: AttributeSpec, ctx: _Ctx) -> list[Finding]:
        """``31-1/2"L x 16-1/4"W x 36"H``, ``18" wide``, ``12" deep`` → the axis named by the letter/word."""
        out = []
        for m in _DIM.finditer(ctx.text):
            axis = _DIM_AXIS.get(m.group("letter") or (m.group("word") or "").lower())
            if axis != spec.slug:
                continue
            if m.group("letter") and not m.group("unit") and not _in_dim_chain(ctx.text, m.start(), m.end()):
                continue  # "1500 W" is watts and "1.7 L" litres: a bare axis letter needs an "A x B x C" chain
            number = re.sub(r"(\d)[- ](\d+/\d+)", r"\1 \2", m.group("num"))
            unit = m.group("unit") or '"'
            unit = {"'": "ft", "''": "in", "”": "in", '"': "in"}.get(unit, unit.rstrip("."))
            converted = _convert(f"{number} {unit}", spec.unit or "in")
            if converted is not None:
                out.append(
                    self._finding(spec, ctx, f"{_fmt(converted)} {spec.unit or 'in'}", m.span(), Q_NAMED)
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
                for value in _map_to_vocab(item, spec.allowed_values, search=True):
                    out.append(
                        self._finding(
                            spec, ctx, value, span, Q_EXPLICIT, True, quote_span=_trim(ctx.doc.text, span)
                        )
                    )
        if traces:
            for m in _TRACE.finditer(ctx.text):
                if not m.group(0).lower().startswith(("may", "might", "can")):
                    s, e = ctx.sentence_of(m.start(), m.end())
                    for value in _map_to_vocab(ctx.text[m.end() : e], spec.allowed_values, search=True):
                        out.append(self._finding(spec, ctx, value, (s, e), Q_NAMED))
        return out


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


def _parse_bool(raw: str) -> bool | None:
    try:
        from groundtrace.core.evidence.normalize import parse_bool

        value = parse_bool(raw)
        if value is not None:
            return bool(value)
    except (ImportError, ValueError):
        pass
    low = raw.strip().lower().rstrip(".")
    if low in _BOOL_TRUE:
        return True
    if low in _BOOL_FALSE:
        return False
    return None


def _map_to_vocab(item: str, vocab: list[str], search: bool = False) -> list[str]:
    """Values of ``vocab`` that ``item`` names (whole item, or any phrase inside it when ``search``)."""
    if not vocab:
        return []
    text = item.strip().strip(".()[]").strip()
    hits: list[tuple[str, int, int]] = []
    for value in vocab:
        for phrase in value_phrases(value):
            if search:
                hits.extend((value, m.start(), m.end()) for m in phrase_re(phrase).finditer(text))
            elif _whole_re(phrase).fullmatch(text):
                hits.append((value, 0, len(text)))
    values: list[str] = []
    for value, _s, _e in _drop_contained(hits):
        if value not in values:
            values.append(value)
    return values


def _drop_contained(hits: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Drop a hit strictly inside a longer hit ("lithium" inside "lithium ion"); dedupe equal spans."""
    keep = []
    for i, (value, s, e) in enumerate(hits):
        inside = any(
            (s2 <= s and e <= e2 and (e2 - s2) > (e - s)) for j, (_v, s2, e2) in enumerate(hits) if j != i
        )
        if not inside and (value, s, e) not in keep:
            keep.append((value, s, e))
    return keep


def _is_kv_key_position(text: str, start: int) -> bool:
    """True when ``start`` lies in the key of a ``key: value`` line (a field name is not a claim)."""
    line_start = text.rfind("\n", 0, start) + 1
    colon = text.find(":", line_start)
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    return 0 <= colon < line_end and start < colon and colon - line_start <= 50


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: dict[tuple[str, str, str, tuple[int, int] | None], Finding] = {}
    for f in findings:
        key = (f.attribute, f.value, f.evidence.source_ref, f.evidence.span)
        if key not in seen or f.quality > seen[key].quality:
            seen[key] = f
    return list(seen.values())


EXTRACTION_ENGINES.add(
    "offline",
    LexiconEngine,
    aliases=("lexicon", "extractive"),
    description="Deterministic lexicon/regex/unit extractor (default, no LLM).",
)
EXTRACTION_ENGINES.register_lazy(
    "llm",
    "groundtrace.catalog.scout.llm_engine:LLMEngine",
    aliases=("scout-llm",),
    description="One LLM call per SKU in the seed's JSON contract.",
)
