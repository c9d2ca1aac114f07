"""Identity matching: is this web page / feed record about exactly this SKU? (``IdentityMatch(p, s)``).

Seed rules (Appendix A): before a page is used, brand, variant, size and pack count must match; a UPC/GTIN
or MPN match confirms; near-variants are rejected. The decision, in order:

1. the page's GTIN equals the SKU's (UPC-A == EAN-13 == GTIN-14 after zero-padding) → **match** (GS1 gives a
   new GTIN to every size/pack/variant, so it outranks any title noise);
2. a conflicting page GTIN or MPN → **reject**;
3. a stated brand, size, pack count or variant that differs → **reject** (near-variant);
4. the MPN found on the page → **match** (overrides title noise: word order, marketing words, missing brand,
   and a variant word the SKU title leaves out) — except an MPN only in the body text of a page whose
   title is another product line (rule 5b): a page lists related products' part numbers;
5. the page states a variant the SKU does not (a flavor / color / scent / dietary word of
   :data:`VARIANT_LEXICON` in a family the SKU title and specs name nothing of: "Acme Crunch Granola
   Chocolate 16 oz" or "... Gluten Free 16 oz" for the SKU "Acme Crunch Granola 16 oz", "Coca-Cola Cherry"
   for "Coca-Cola Classic") → **reject** ("near-variant: page states variant ... the SKU does not"): an
   unnamed SKU variant cannot be confirmed to be that one, and only a GTIN or MPN match (rules 1, 4) can;
5b. **product line and variant** (:func:`compare_titles`, vocabulary in ``data/variant_words.yaml``): after
   the brand, sizes, pack counts, retail suffix and non-distinguishing words are taken out, a title word
   only one side has is a *line* word (another model or product name: "Power Bank" vs "Phone X") →
   **reject** as ``other_product`` (checked before rule 5); or only *variant* words differ (Zero, Diet,
   Crunchy/Creamy, Pro, Mini, Decaf, 128GB/256GB, 10000mAh, colours, flavours ...) → **reject** as
   ``sibling_variant``. :attr:`IdentityResult.relation` and ``differing`` say which and name the words;
   a sibling-variant page may only propose ``variant_invariant`` attributes, for REVIEW (Scout, policy);
6. otherwise **match** only if the brand is confirmed and every size / pack count / variant the SKU states
   is confirmed on the page; else **reject** ("cannot confirm ...").

Checks are ``True`` (agree), ``False`` (conflict) or ``None`` (not determinable). Page identity is read from
``doc.metadata`` keys ``gtin`` (str or list), ``mpn``, ``brand``, ``title``, ``size``, ``pack_count``,
``variant`` when present, else from the page title (the first line of the text when there is no title):
body text lists other variants too often to decide size or variant from it. Sizes found in text are converted
with the shared pint registry (``groundtrace.core.evidence.normalize.UREG``) to grams / millilitres and
compared with ``numbers_close`` (2 % or 0.5): 16 oz == 454 g; 16 oz != 12 oz; ounces never equal fluid ounces.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field
from rapidfuzz import fuzz
from stdnum import ean

from groundtrace.catalog.model import SKU, Document
from groundtrace.core.evidence.normalize import UREG, numbers_close

GTIN_LENGTHS = (8, 12, 13, 14)


# -- GTIN ------------------------------------------------------------------------------------------------
def _digits(code: str) -> str:
    return re.sub(r"[\s\-.]", "", str(code))


def valid_gtin(code: str) -> bool:
    """True for a UPC-A (12), EAN-13, GTIN-14 or EAN-8 whose GS1 mod-10 check digit is right."""
    digits = _digits(code)
    return digits.isdigit() and len(digits) in GTIN_LENGTHS and ean.is_valid(digits)


def normalize_gtin(code: str) -> str | None:
    """The 14-digit GTIN form (left zero-padded) of a valid code, else None; UPC-A and EAN-13 compare
    equal."""
    digits = _digits(code)
    return digits.zfill(14) if valid_gtin(digits) else None


def gtin_check_digit(body: str) -> str:
    """GS1 check digit for the digits before it (weights 3,1,3,... from the right)."""
    return str(ean.calc_check_digit(body))


# -- sizes ---------------------------------------------------------------------------------------------------
# unit spelling → (pint unit, dimension); longest alternatives first in the regex
_SIZE_UNITS: dict[str, tuple[str, str]] = {
    "fluid ounces": ("fluid_ounce", "volume"),
    "fluid ounce": ("fluid_ounce", "volume"),
    "fl. oz.": ("fluid_ounce", "volume"),
    "fl. oz": ("fluid_ounce", "volume"),
    "fl oz": ("fluid_ounce", "volume"),
    "fl.oz": ("fluid_ounce", "volume"),
    "floz": ("fluid_ounce", "volume"),
    "ounces": ("ounce", "mass"),
    "ounce": ("ounce", "mass"),
    "oz.": ("ounce", "mass"),
    "oz": ("ounce", "mass"),
    "pounds": ("pound", "mass"),
    "pound": ("pound", "mass"),
    "lbs.": ("pound", "mass"),
    "lbs": ("pound", "mass"),
    "lb.": ("pound", "mass"),
    "lb": ("pound", "mass"),
    "kilograms": ("kilogram", "mass"),
    "kilogram": ("kilogram", "mass"),
    "kg": ("kilogram", "mass"),
    "grams": ("gram", "mass"),
    "gram": ("gram", "mass"),
    "gr": ("gram", "mass"),
    "g": ("gram", "mass"),
    "milligrams": ("milligram", "mass"),
    "mg": ("milligram", "mass"),
    "milliliters": ("milliliter", "volume"),
    "millilitres": ("milliliter", "volume"),
    "milliliter": ("milliliter", "volume"),
    "millilitre": ("milliliter", "volume"),
    "ml": ("milliliter", "volume"),
    "centiliters": ("centiliter", "volume"),
    "cl": ("centiliter", "volume"),
    "liters": ("liter", "volume"),
    "litres": ("liter", "volume"),
    "liter": ("liter", "volume"),
    "litre": ("liter", "volume"),
    "ltr": ("liter", "volume"),
    "l": ("liter", "volume"),
    "gallons": ("gallon", "volume"),
    "gallon": ("gallon", "volume"),
    "gal": ("gallon", "volume"),
    "quarts": ("quart", "volume"),
    "quart": ("quart", "volume"),
    "qt": ("quart", "volume"),
    "pints": ("pint", "volume"),
    "pint": ("pint", "volume"),
    "pt": ("pint", "volume"),
}
_NUMBER = r"(\d+\s+\d+/\d+|\d+/\d+|\d+(?:[.,]\d+)?)"
_SIZE_RE = re.compile(
    _NUMBER
    + r"\s*-?\s*("
    + "|".join(re.escape(u) for u in sorted(_SIZE_UNITS, key=len, reverse=True))
    + r")(?![a-z])",
    re.IGNORECASE,
)
_BASE_UNIT = {"mass": "gram", "volume": "milliliter"}


@lru_cache(maxsize=64)
def _factor(unit: str, dimension: str) -> float:
    return float(UREG.Quantity(1.0, unit).to(_BASE_UNIT[dimension]).magnitude)


def _parse_number(text: str) -> float:
    text = text.strip()
    if " " in text:  # "1 1/2"
        whole, frac = text.split(None, 1)
        return float(int(whole) + Fraction(frac))
    if "/" in text:
        return float(Fraction(text))
    return float(text.replace(",", "."))


@dataclass(frozen=True)
class Size:
    """A net quantity found in text: ``amount`` in grams (mass) or millilitres (volume)."""

    value: float
    unit: str
    dimension: str
    amount: float
    text: str

    def same_as(self, other: Size) -> bool | None:
        """Equal in grams / millilitres by :func:`groundtrace.core.evidence.normalize.numbers_close` (2 % or
        0.5); None when dimensions differ (ounces vs fluid ounces are not comparable)."""
        if self.dimension != other.dimension:
            return None
        if self.unit == other.unit:  # same unit: compare as stated (no conversion rounding at the 2 % edge)
            return numbers_close(self.value, other.value)
        return numbers_close(self.amount, other.amount)


def extract_sizes(text: str) -> list[Size]:
    """Every mass/volume quantity in ``text`` ("16 oz", "1.5 L", "12 fl. oz.", "2,5 kg"), in text order."""
    sizes: list[Size] = []
    for match in _SIZE_RE.finditer(text or ""):
        unit, dimension = _SIZE_UNITS[match.group(2).lower()]
        try:
            value = _parse_number(match.group(1))
        except (ValueError, ZeroDivisionError):
            continue
        sizes.append(Size(value, unit, dimension, value * _factor(unit, dimension), match.group(0)))
    return sizes


# -- pack count ------------------------------------------------------------------------------------------
_WORD_NUMBERS = {"single": 1, "twin": 2, "double": 2, "triple": 3, "dual": 2}
_PACK_PATTERNS = [
    re.compile(r"\b(?:pack|case|box|set|lot|carton|bundle)\s+of\s+(\d+)\b", re.IGNORECASE),
    re.compile(r"\b(\d+)\s*-?\s*(?:pack|pk|packs|pcs|ct|count)\b", re.IGNORECASE),
    re.compile(r"\b(\d+)\s*/\s*(?:case|carton|box|pack|pk|ct|cs)\b", re.IGNORECASE),
    re.compile(r"\b(\d+)\s*[x×]\s*" + _NUMBER + r"\s*(?:oz|fl|ml|l|g|kg|lb|cl)\b", re.IGNORECASE),
]
_PACK_WORDS = re.compile(
    r"\b(single|twin|double|triple|dual)[\s-]*(?:pack|pk|bottle|can|unit|item)\b", re.IGNORECASE
)


def extract_pack_count(text: str) -> int | None:
    """Units per sellable pack stated in ``text``: "pack of 4", "6-pack", "12 ct", "24/case", "6 x 330 ml",
    "twin pack" (2), "single pack" (1); the earliest statement wins; None when nothing is stated.
    ("single serve" is a format, not a pack count.)"""
    found: list[tuple[int, int]] = []
    for pattern in _PACK_PATTERNS:
        for match in pattern.finditer(text or ""):
            count = int(match.group(1))
            if count > 0:
                found.append((match.start(), count))
    for match in _PACK_WORDS.finditer(text or ""):
        found.append((match.start(), _WORD_NUMBERS[match.group(1).lower()]))
    return min(found)[1] if found else None


# -- variant words -----------------------------------------------------------------------------------------
VARIANT_LEXICON: dict[str, tuple[str, ...]] = {
    "flavor": (
        "original",
        "unflavored",
        "unsweetened",
        "sweetened",
        "vanilla",
        "french vanilla",
        "chocolate",
        "dark chocolate",
        "milk chocolate",
        "white chocolate",
        "strawberry",
        "raspberry",
        "blueberry",
        "cherry",
        "black cherry",
        "lemon",
        "lime",
        "orange",
        "grape",
        "apple",
        "green apple",
        "peach",
        "mango",
        "pineapple",
        "banana",
        "coconut",
        "watermelon",
        "mixed berry",
        "berry",
        "cranberry",
        "pomegranate",
        "mint",
        "peppermint",
        "spearmint",
        "caramel",
        "salted caramel",
        "toffee",
        "butterscotch",
        "hazelnut",
        "almond",
        "peanut butter",
        "honey",
        "maple",
        "cinnamon",
        "pumpkin spice",
        "ginger",
        "mocha",
        "espresso",
        "decaf",
        "decaffeinated",
        "light roast",
        "medium roast",
        "dark roast",
        "french roast",
        "breakfast blend",
        "house blend",
        "sea salt",
        "salt and vinegar",
        "barbecue",
        "bbq",
        "sour cream",
        "cheddar",
        "jalapeno",
        "spicy",
        "smoked",
        "garlic",
        "onion",
        "tomato",
        "cola",
        "root beer",
        "earl grey",
        "english breakfast",
        "chamomile",
        "green tea",
        "black tea",
        "matcha",
    ),
    "color": (
        "black",
        "white",
        "red",
        "blue",
        "navy",
        "green",
        "yellow",
        "orange",
        "pink",
        "purple",
        "violet",
        "brown",
        "beige",
        "gray",
        "grey",
        "silver",
        "gold",
        "rose gold",
        "bronze",
        "copper",
        "clear",
        "transparent",
        "ivory",
        "teal",
        "turquoise",
        "maroon",
        "burgundy",
        "charcoal",
        "tan",
        "khaki",
        "olive",
        "walnut",
        "oak",
    ),
    "scent": (
        "unscented",
        "fragrance free",
        "lavender",
        "fresh scent",
        "original scent",
        "linen",
        "ocean",
        "citrus",
        "eucalyptus",
        "vanilla scent",
        "rose",
        "jasmine",
        "sandalwood",
        "coconut scent",
        "spring meadow",
        "mountain spring",
        "clean linen",
        "tea tree",
        "aloe",
    ),
    # dietary versions sold as separate products next to the regular one (a title claim, not body text)
    "dietary": (
        "gluten free",
        "sugar free",
        "no sugar added",
        "zero sugar",
        "reduced sugar",
        "low sugar",
        "diet",
        "organic",
        "fat free",
        "nonfat",
        "non fat",
        "low fat",
        "reduced fat",
        "lactose free",
        "dairy free",
        "non dairy",
        "caffeine free",
        "low sodium",
        "reduced sodium",
        "no salt added",
        "unsalted",
        "lightly salted",
        "keto",
        "vegan",
        "plant based",
    ),
}


@lru_cache(maxsize=1)
def _variant_patterns() -> list[tuple[str, str, re.Pattern[str]]]:
    items = [(family, word) for family, words in VARIANT_LEXICON.items() for word in words]
    items.sort(key=lambda fw: len(fw[1]), reverse=True)  # longest phrase first: "black cherry" before "black"
    return [
        (
            f,
            w,
            re.compile(r"(?<![a-z])" + re.escape(w).replace(r"\ ", r"[\s-]+") + r"(?![a-z])", re.IGNORECASE),
        )
        for f, w in items
    ]


def extract_variants(text: str, exclude: str | None = None) -> dict[str, set[str]]:
    """Variant words per family (flavor/color/scent/dietary); ``exclude`` (the brand) is blanked out first.
    Longer phrases consume their text, so "dark chocolate" does not also yield "chocolate"."""
    text = text or ""
    if exclude:
        text = re.sub(re.escape(exclude), " ", text, flags=re.IGNORECASE)
    found: dict[str, set[str]] = {}
    consumed = list(text)
    for family, word, pattern in _variant_patterns():
        for match in pattern.finditer("".join(consumed)):
            found.setdefault(family, set()).add(word)
            consumed[match.start() : match.end()] = " " * (match.end() - match.start())
    return found


# -- product line and variant (title comparison) ---------------------------------------------------------
#: ``Candidate.note`` marker of a value lent by a sibling-variant page (policy: REVIEW, never WRITE)
FLAG_SIBLING_VARIANT = "flag:sibling_variant"
Relation = Literal["same", "sibling_variant", "other_product", "unknown"]

_CAPACITY_RE = re.compile(
    r"(?<![a-z0-9.])(\d+(?:[.,]\d+)?)\s*-?\s*(tb|gb|mb|mah|wh|kwh|watts?|w|volts?|v|mp|megapixels?|ghz|mhz|hz|"
    r"mm|cm|inch(?:es)?|in|\"|ft|feet|ctw?|carats?|tw|mcg|iu|spf|%|k|x|pt|lb|yards?|yd|gauge|awg)(?![a-z0-9])",
    re.IGNORECASE,
)
_DOMAIN_RE = re.compile(
    r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|co\.uk|co|de|fr|ca|au|uk|us|shop|store|io)\b", re.IGNORECASE
)
_SUFFIX_SPLIT = re.compile(r"\s+[|\-\u2013\u2014:]\s+|\s*\|\s*")
_SPF_RE = re.compile(r"(?<![a-z])spf\s*#?\s*(\d+)\+?", re.IGNORECASE)
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SMALL_NUMBER = re.compile(r"^\d{1,2}(?:[.,]5)?$")


@dataclass(frozen=True)
class Vocabulary:
    """The identity vocabulary (``data/variant_words.yaml`` plus :data:`VARIANT_LEXICON`)."""

    variant: tuple[tuple[str, str, re.Pattern[str]], ...]  # (class, phrase, pattern), longest first
    ignore: frozenset[str]
    ignore_phrases: tuple[re.Pattern[str], ...]
    retail: frozenset[str]


def _phrase_pattern(phrase: str) -> re.Pattern[str]:
    body = re.escape(phrase).replace(r"\ ", r"[\s-]+").replace(r"\-", r"[\s-]+")
    return re.compile(r"(?<![a-z0-9])" + body + r"(?![a-z0-9])", re.IGNORECASE)


@lru_cache(maxsize=1)
def vocabulary() -> Vocabulary:
    """Load ``data/variant_words.yaml`` once (the curated word classes; see its header)."""
    raw = yaml.safe_load(
        (resources.files("groundtrace.catalog") / "data" / "variant_words.yaml").read_text(encoding="utf-8")
    )
    items: dict[str, str] = {}
    for family, words in VARIANT_LEXICON.items():
        for word in words:
            items.setdefault(word, family)
    for family, words in (raw.get("variant") or {}).items():
        for word in words:
            items.setdefault(str(word).lower(), family)
    ordered = sorted(items.items(), key=lambda kv: len(kv[0]), reverse=True)
    ignore = [str(w).lower() for w in raw.get("ignore") or []]
    return Vocabulary(
        variant=tuple((family, word, _phrase_pattern(word)) for word, family in ordered),
        ignore=frozenset(w for w in ignore if " " not in w),
        ignore_phrases=tuple(_phrase_pattern(w) for w in sorted(ignore, key=len, reverse=True) if " " in w),
        retail=frozenset(str(w).lower() for w in raw.get("retail_suffix_words") or []),
    )


@dataclass(frozen=True)
class TitleUnits:
    """A title reduced to what tells products apart: variant phrases (with their class) and line tokens."""

    variants: frozenset[str]
    line: tuple[str, ...]


@dataclass(frozen=True)
class TitleComparison:
    """``relation`` of a page title to a SKU title and the differing words on each side.

    ``same``: no differing line token or variant word; ``sibling_variant``: only variant words (flavour,
    diet, texture, tier, form, colour, capacity, small sizes) differ; ``other_product``: a line (model /
    name) token differs; ``unknown``: a title is missing."""

    relation: Relation
    sku_line: tuple[str, ...] = ()
    page_line: tuple[str, ...] = ()
    sku_variant: tuple[str, ...] = ()
    page_variant: tuple[str, ...] = ()

    def describe(self) -> str:
        """ "line words: SKU 'power bank', page 'phone'; variant words: page '256gb x'" — the differing
        words, for notes and reasons."""
        parts = []
        for kind, mine, theirs in (
            ("line", self.sku_line, self.page_line),
            ("variant", self.sku_variant, self.page_variant),
        ):
            sides = [
                f"{side} {' '.join(words)!r}" for side, words in (("SKU", mine), ("page", theirs)) if words
            ]
            if sides:
                parts.append(f"{kind} words: {', '.join(sides)}")
        return "; ".join(parts) or "no differing words"


def _strip_retail(title: str, vocab: Vocabulary) -> str:
    """Drop trailing "| Store" / "- shop.com" / ": Amazon.com" segments that hold nothing but a site (a
    domain) or retail words; a domain elsewhere is blanked by the caller."""
    parts = _SUFFIX_SPLIT.split(title)
    while len(parts) > 1:
        last = _DOMAIN_RE.sub(" ", parts[-1]).strip().lower()
        words = set(_WORD_RE.findall(last))
        if not words or last in vocab.retail or words <= vocab.retail | vocab.ignore:
            parts.pop()
            continue
        break
    return " ".join(parts)


def _stem(token: str) -> str:
    token = token.removesuffix("'s").removesuffix("'")
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def title_units(title: str, brands: list[str] | tuple[str, ...] = ()) -> TitleUnits:
    """Reduce a title (rules in ``data/variant_words.yaml``): retail suffix and domains dropped, brands,
    sizes and pack counts blanked (they are compared by the size/pack checks), capacity quantities
    ("256GB" → ``cap:256gb``) and variant phrases collected, ignored words dropped; every other word
    (stemmed: "bars" → "bar") is a line token. Bare 1-2 digit numbers ("size 7") count as variants."""
    vocab = vocabulary()
    text = unicodedata.normalize("NFKC", title or "").lower().replace("&", " and ").replace("’", "'")
    text = _DOMAIN_RE.sub(" ", _strip_retail(text, vocab))
    for brand in sorted({b.lower().strip() for b in brands if b and b.strip()}, key=len, reverse=True):
        text = _blank(text, re.compile(r"(?<![a-z0-9])" + re.escape(brand) + r"(?:'s)?(?![a-z0-9])"))
    for pattern in (_SIZE_RE, *_PACK_PATTERNS, _PACK_WORDS):
        text = _blank(text, pattern)
    variants: set[str] = set()
    for match in _CAPACITY_RE.finditer(text):
        number = (
            match.group(1).replace(",", ".").rstrip("0").rstrip(".")
            if "." in match.group(1)
            else match.group(1)
        )
        variants.add(f"{number}{match.group(2).lower().replace('inches', 'in').replace('inch', 'in')}")
    text = _blank(text, _CAPACITY_RE)
    for match in _SPF_RE.finditer(text):
        variants.add(f"spf{match.group(1)}")
    text = _blank(text, _SPF_RE)
    for pattern in vocab.ignore_phrases:
        text = _blank(text, pattern)
    for _family, word, pattern in vocab.variant:
        if pattern.search(text):
            variants.add(word)
            text = _blank(text, pattern)
    line: list[str] = []
    for raw in _WORD_RE.findall(text):
        if raw in vocab.ignore:
            continue
        if _SMALL_NUMBER.match(raw) or (len(raw) == 1 and raw.isalpha()):
            variants.add(raw)  # a size ("7", "9.5") or a size/width letter ("M", "W", "N")
            continue
        token = _stem(raw)
        if token and token not in vocab.ignore and token not in line:
            line.append(token)
    return TitleUnits(frozenset(variants), tuple(line))


def _present(token: str, others: tuple[str, ...], joined: str) -> bool:
    """A line token has a counterpart: equal, a close spelling (rapidfuzz ratio >= 88 for 5+ letters), or
    written together on the other side ("powerbank" / "power bank", "t-shirt" / "tshirt")."""
    if token in others:
        return True
    if len(token) >= 5 and any(len(o) >= 5 and fuzz.ratio(token, o) >= 88 for o in others):
        return True
    return len(token) >= 4 and token in joined


def compare_titles(
    sku_title: str,
    page_title: str,
    brands: list[str] | tuple[str, ...] = (),
    sku_context: str = "",
    sku_variant_text: str = "",
) -> TitleComparison:
    """Compare two titles of (presumably) the same brand (classes in :class:`TitleComparison`).

    ``sku_context`` (the SKU's description and spec values) may vouch for a page-only *line* word — a
    descriptor the SKU's own record uses ("Portable Charger" on the page of the SKU "Power Bank" whose
    description says "portable charger") — never for a variant word. ``sku_variant_text`` (the SKU's
    flavour / colour / variant spec values) states variants the page title may name too."""
    if not (sku_title or "").strip() or not (page_title or "").strip():
        return TitleComparison("unknown")
    mine, theirs = title_units(sku_title, brands), title_units(page_title, brands)
    joined_mine, joined_theirs = "".join(mine.line), "".join(theirs.line)
    context = set(title_units(sku_context, brands).line)
    sku_line = tuple(t for t in mine.line if not _present(t, theirs.line, joined_theirs))
    page_line = tuple(t for t in theirs.line if not _present(t, mine.line, joined_mine) and t not in context)
    sku_variant = tuple(sorted(mine.variants - theirs.variants))
    stated = title_units(sku_variant_text, brands).variants if sku_variant_text else frozenset()
    page_variant = tuple(sorted(theirs.variants - mine.variants - stated))
    if sku_line or page_line:
        relation: Relation = "other_product"
    elif sku_variant or page_variant:
        relation = "sibling_variant"
    else:
        relation = "same"
    return TitleComparison(relation, sku_line, page_line, sku_variant, page_variant)


# -- matching ------------------------------------------------------------------------------------------
class IdentityResult(BaseModel):
    """Outcome of ``IdentityMatch(page, sku)`` with the per-check evidence (seed ``identity`` object)."""

    matched: bool
    reason: str
    checks: dict[str, bool | None] = Field(
        default_factory=dict, description="gtin, mpn, brand, variant, size, pack_count: True/False/None."
    )
    matched_brand: str | None = None
    matched_variant: str | None = None
    matched_size: str | None = None
    matched_pack: str | None = None
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    relation: Relation = Field(
        default="unknown",
        description="same (matched), sibling_variant (same line, another variant/size: may lend only "
        "variant-invariant attributes, to REVIEW), other_product, unknown (not decidable).",
    )
    differing: list[str] = Field(
        default_factory=list, description="Differing title words: '-word' SKU only, '+word' page only."
    )


_LABELLED_GTIN = re.compile(
    r"\b(?:upc|ean|gtin|barcode)(?:-?1[234]|-?a|-?8)?\b\D{0,12}(\d[\d \-]{6,18}\d)", re.IGNORECASE
)
_BARE_GTIN = re.compile(r"(?<!\d)(\d{12,14})(?!\d)")
_SIZE_SPEC_KEYS = ("size", "net content", "net_content", "net weight", "volume", "weight", "size/weight")
_PACK_SPEC_KEYS = ("pack", "pack_count", "pack count", "pack quantity", "pack size", "count")
_VARIANT_SPEC_KEYS = (
    "flavor",
    "flavour",
    "color",
    "colour",
    "scent",
    "variant",
    "dietary",
    "dietary labels",
    "dietary_labels",
    "diet type",
)


def _norm_id(text: str) -> str:
    return re.sub(r"[^0-9A-Z]", "", str(text).upper())


def _norm_words(text: str) -> str:
    return " ".join(re.findall(r"[0-9a-z]+", text.lower()))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple | set):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)] if str(value).strip() else []


def _spec_text(sku: SKU, keys: tuple[str, ...]) -> str:
    return " ".join(v for k, v in sku.specs.items() if k.lower() in keys)


def _identity_text(doc: Document) -> str:
    title = str(doc.metadata.get("title") or doc.title or "").strip()
    if title:
        return title
    first = (doc.text or "").strip().splitlines()
    return first[0][:200] if first else ""


def _check_gtin(sku: SKU, doc: Document) -> tuple[bool | None, str | None]:
    target = normalize_gtin(sku.gtin) if sku.gtin else None
    if target is None:
        return None, None
    declared = [g for g in (normalize_gtin(c) for c in _as_list(doc.metadata.get("gtin"))) if g]
    labelled = [g for g in (normalize_gtin(m.group(1)) for m in _LABELLED_GTIN.finditer(doc.text or "")) if g]
    if target in declared or target in labelled:
        return True, None
    # bare 12-14 digit numbers in the body can only confirm (a page may list related products)
    if any(normalize_gtin(m.group(1)) == target for m in _BARE_GTIN.finditer(f"{doc.title} {doc.text}")):
        return True, None
    page_own = declared or labelled
    if page_own:
        return False, page_own[0]
    return None, None


_MPN_LABEL = re.compile(
    r"\b(?:model|mpn|part|mfr|manufacturer|item|sku|style|product|catalog)\b[^\n]{0,20}$", re.IGNORECASE
)


def _check_mpn(sku: SKU, doc: Document) -> tuple[bool | None, str | None]:
    target = _norm_id(sku.mpn) if sku.mpn else ""
    if len(target) < 4:
        return None, None
    declared = [_norm_id(m) for m in _as_list(doc.metadata.get("mpn")) if _norm_id(m)]
    if declared:
        return (True, None) if target in declared else (False, declared[0])
    if any(target in _norm_id(t) for t in re.split(r"\s+", _identity_text(doc)) if t):
        return True, None
    body = doc.text or ""
    for match in re.finditer(r"\S+", body):
        if target in _norm_id(match.group(0)):
            if _MPN_LABEL.search(body[max(0, match.start() - 30) : match.start()]):
                return True, None  # "Model: 106R01409": the page's own part number
            return True, "text"  # a bare mention: a page may list related products' part numbers
    return None, None


def _check_brand(sku: SKU, doc: Document, title: str) -> tuple[bool | None, str | None]:
    if not sku.brand or not _norm_words(sku.brand):
        return None, None
    want = _norm_words(sku.brand)
    declared = _as_list(doc.metadata.get("brand"))
    if declared:
        for brand in declared:
            have = _norm_words(brand)
            if have and (
                have == want
                or f" {want} " in f" {have} "
                or f" {have} " in f" {want} "
                or fuzz.ratio(have, want) >= 90
            ):
                return True, brand
        return False, declared[0]
    haystack = f" {_norm_words(title)} {_norm_words(doc.text or '')} "
    return (True, sku.brand) if f" {want} " in haystack else (None, None)


def _check_sizes(sku_sizes: list[Size], page_sizes: list[Size]) -> tuple[bool | None, str | None]:
    if not sku_sizes or not page_sizes:
        return None, None
    comparable = False
    for mine in sku_sizes:
        for theirs in page_sizes:
            same = mine.same_as(theirs)
            if same:
                return True, theirs.text
            comparable = comparable or same is False
    return (False, page_sizes[0].text) if comparable else (None, None)


def _check_pack(sku_pack: int | None, page_pack: int | None) -> tuple[bool | None, str | None]:
    if sku_pack is None and page_pack is None:
        return None, None
    mine, theirs = sku_pack or 1, page_pack or 1  # an unstated pack count is a single unit
    return mine == theirs, str(theirs)


def _check_variant(sku_v: dict[str, set[str]], page_v: dict[str, set[str]]) -> tuple[bool | None, str | None]:
    outcome: bool | None = None
    for family in sorted(set(sku_v) & set(page_v)):
        if sku_v[family] != page_v[family]:
            return False, ", ".join(sorted(page_v[family]))
        outcome = True
    shown = ", ".join(sorted(w for words in page_v.values() for w in words)) or None
    return outcome, shown


def _unstated_variants(sku_v: dict[str, set[str]], page_v: dict[str, set[str]]) -> list[str]:
    """Variant words the page states in a family the SKU states nothing of (rule 5 of the module doc)."""
    return sorted(w for family in set(page_v) - set(sku_v) for w in page_v[family])


def _relation_when_rejected(checks: dict[str, bool | None], titles: TitleComparison) -> Relation:
    """A rejected page is another product when the brand or a line word differs, else (only variant words,
    size, pack count or the GTIN/MPN of another variant differ) a sibling variant of the same line."""
    if checks.get("brand") is False or titles.relation == "other_product":
        return "other_product"
    if titles.relation == "unknown" or checks.get("brand") is not True:
        return "unknown"
    return "sibling_variant"


def _unconfirmed(
    checks: dict[str, bool | None], has_size: bool, has_variant: bool, has_pack: bool
) -> list[str]:
    """Rule 6: the brand and every size / variant / pack count the SKU states must be confirmed."""
    wanted = (("brand", True), ("size", has_size), ("variant", has_variant), ("pack_count", has_pack))
    return [name for name, stated in wanted if stated and checks[name] is not True]


def _compare_with_page(sku: SKU, title: str, meta: dict[str, Any]) -> TitleComparison:
    """:func:`compare_titles` of the SKU title and the page title (plus its ``variant`` metadata); the
    SKU's description and spec values vouch for page-only descriptors, its variant specs for variants."""
    brands = [b for b in (sku.brand, *_as_list(meta.get("brand"))) if b]
    sku_context = " ".join([sku.description or "", *sku.specs.values()])
    page_title = " ".join([title, *_as_list(meta.get("variant"))])
    return compare_titles(sku.title, page_title, brands, sku_context, _spec_text(sku, _VARIANT_SPEC_KEYS))


def identity_match(sku: SKU, doc: Document) -> IdentityResult:
    """Decide whether ``doc`` describes exactly ``sku`` (rules in the module docstring)."""
    title = _identity_text(doc)
    meta = doc.metadata
    page_size_text = " ".join([*_as_list(meta.get("size")), title])
    page_pack_text = " ".join([*_as_list(meta.get("pack_count") and f"pack of {meta['pack_count']}"), title])
    page_variant_text = " ".join([*_as_list(meta.get("variant")), title])
    sku_title = f"{sku.title} "
    checks: dict[str, bool | None] = {}
    shown: dict[str, str | None] = {}
    titles = _compare_with_page(sku, title, meta)
    checks["gtin"], page_gtin = _check_gtin(sku, doc)
    checks["mpn"], page_mpn = _check_mpn(sku, doc)
    if checks["mpn"] is True and page_mpn == "text" and titles.relation == "other_product":
        checks["mpn"] = None  # the SKU's MPN in the body of another product line's page confirms nothing
    checks["brand"], shown["brand"] = _check_brand(sku, doc, title)
    sku_variants = extract_variants(sku_title + _spec_text(sku, _VARIANT_SPEC_KEYS), exclude=sku.brand)
    page_variants = extract_variants(page_variant_text, exclude=sku.brand)
    checks["variant"], shown["variant"] = _check_variant(sku_variants, page_variants)
    sku_sizes = extract_sizes(sku_title + _spec_text(sku, _SIZE_SPEC_KEYS))
    checks["size"], shown["size"] = _check_sizes(sku_sizes, extract_sizes(page_size_text))
    sku_pack = extract_pack_count(sku_title + _spec_text(sku, _PACK_SPEC_KEYS))
    checks["pack_count"], shown["pack"] = _check_pack(sku_pack, extract_pack_count(page_pack_text))

    differing = [
        *(f"-{t}" for t in (*titles.sku_line, *titles.sku_variant)),
        *(f"+{t}" for t in (*titles.page_line, *titles.page_variant)),
    ]

    def result(
        matched: bool, reason: str, confidence: float, relation: Relation | None = None
    ) -> IdentityResult:
        if relation is None:
            relation = "same" if matched else _relation_when_rejected(checks, titles)
        return IdentityResult(
            matched=matched,
            reason=reason,
            checks=checks,
            confidence=confidence,
            matched_brand=shown["brand"],
            matched_variant=shown["variant"],
            matched_size=shown["size"],
            matched_pack=shown["pack"],
            relation=relation,
            differing=differing if relation != "same" else [],
        )

    conflicts = [k for k in ("brand", "variant", "size", "pack_count") if checks[k] is False]
    if checks["gtin"] is True:
        note = f" (title differs on {', '.join(conflicts)}; GTIN wins)" if conflicts else ""
        return result(True, "GTIN matches" + note, 0.99 if not conflicts else 0.9)
    if checks["gtin"] is False:
        return result(False, f"conflicting GTIN {page_gtin} (SKU {normalize_gtin(sku.gtin or '')})", 0.0)
    if checks["mpn"] is False:
        return result(False, f"conflicting MPN {page_mpn} (SKU {sku.mpn})", 0.0)
    if conflicts:
        details = {
            "brand": f"brand {shown['brand']!r} vs {sku.brand!r}",
            "variant": f"variant {shown['variant']!r}",
            "size": f"size {shown['size']!r} vs {', '.join(s.text for s in sku_sizes)!r}",
            "pack_count": f"pack count {shown['pack']} vs {sku_pack or 1}",
        }
        return result(False, "near-variant: " + "; ".join(details[k] for k in conflicts), 0.0)
    unstated = _unstated_variants(sku_variants, page_variants)
    if checks["mpn"] is True:
        note = (
            f" (page states variant {', '.join(unstated)!r} the SKU does not; MPN wins)" if unstated else ""
        )
        return result(True, "MPN matches" + note, 0.9)
    if titles.relation == "other_product":
        checks["line"] = False
        return result(False, f"identity_mismatch: another product line ({titles.describe()})", 0.0)
    if unstated:
        checks["variant"] = False
        return result(
            False, f"near-variant: page states variant {', '.join(unstated)!r} the SKU does not", 0.0
        )
    if titles.relation == "sibling_variant":
        checks["variant"] = False
        return result(False, f"near-variant: sibling variant of the same line ({titles.describe()})", 0.0)
    missing = _unconfirmed(checks, bool(sku_sizes), bool(sku_variants), sku_pack is not None)
    if missing:
        return result(False, "cannot confirm " + ", ".join(missing), 0.3 if checks["brand"] else 0.1)
    confirmed = sum(checks[k] is True for k in ("size", "pack_count", "variant"))
    return result(True, "brand and every stated size/pack/variant match", min(0.9, 0.6 + 0.1 * confirmed))
