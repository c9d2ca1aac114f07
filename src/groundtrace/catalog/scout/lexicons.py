"""Lexicons of the offline engine and the judge: value synonyms, ambiguous words, field-name aliases, bool
cues — and the mapping of free text onto an attribute's vocabulary through them.

* :func:`value_phrases` — surface phrases of a vocabulary value: itself, :data:`VALUE_SYNONYMS`, its
  abbreviation expansion.
* :func:`map_to_vocab` — the vocabulary values a text names (whole text, or any phrase inside it with
  ``search=True``); a phrase strictly inside a longer matched phrase does not count.
* :func:`attribute_keys` — normalised field names (slug, name, :data:`KEY_ALIASES`) naming an attribute.
"""

from __future__ import annotations

from functools import lru_cache

from groundtrace.catalog.model import AttributeSpec
from groundtrace.catalog.scout.sentences import norm_key, phrase_re, whole_phrase_re

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
        "quantity",
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
_BOOL_TRUE = {"yes", "y", "true", "1", "included", "certified"}
_BOOL_FALSE = {"no", "n", "false", "0", "not included", "none"}


def attribute_keys(spec: AttributeSpec) -> set[str]:
    """Normalised field names that name ``spec`` in ``key: value`` lines (cached per slug and name;
    callers get their own set)."""
    return set(_attribute_keys(spec.slug, spec.name))


@lru_cache(maxsize=4096)
def _attribute_keys(slug: str, name: str) -> frozenset[str]:
    keys = {norm_key(slug), norm_key(name)}
    keys.update(norm_key(k) for k in KEY_ALIASES.get(slug, ()))
    return frozenset(k for k in keys if k)


@lru_cache(maxsize=4096)
def value_phrases(value: str) -> tuple[str, ...]:
    """Surface phrases of an allowed/recommended value: itself (separators relaxed), its synonyms and
    its ``core.normalize.expand_abbreviation`` expansion; phrases without a letter or digit are dropped."""
    # deferred: core.evidence.normalize loads pint, rapidfuzz and scipy (~0.2 s)
    from groundtrace.core.evidence.normalize import expand_abbreviation

    phrases = [value, *VALUE_SYNONYMS.get(value, ())]
    expanded = expand_abbreviation(value)
    if expanded and expanded.lower() != value.lower():
        phrases.append(expanded)
    return tuple(p for p in phrases if any(ch.isalnum() for ch in p))  # "-" would match the empty string


def parse_bool(raw: str) -> bool | None:
    """A field value as a boolean (``core.evidence.normalize.parse_bool``, then the yes/no/included words
    of this module); None when it states neither."""
    try:
        # deferred: core.evidence.normalize loads pint/scipy (~0.2 s)
        from groundtrace.core.evidence.normalize import parse_bool as parse_core_bool

        value = parse_core_bool(raw)
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


def map_to_vocab(item: str, vocab: list[str], search: bool = False) -> list[str]:
    """Values of ``vocab`` that ``item`` names (whole item, or any phrase inside it when ``search``)."""
    if not vocab:
        return []
    text = item.strip().strip(".()[]").strip()
    hits: list[tuple[str, int, int]] = []
    for value in vocab:
        for phrase in value_phrases(value):
            if search:
                hits.extend((value, m.start(), m.end()) for m in phrase_re(phrase).finditer(text))
            elif whole_phrase_re(phrase).fullmatch(text):
                hits.append((value, 0, len(text)))
    values: list[str] = []
    for value, _s, _e in drop_contained(hits):
        if value not in values:
            values.append(value)
    return values


def drop_contained(hits: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Drop a hit strictly inside a longer hit ("lithium" inside "lithium ion"); dedupe equal hits (first
    kept, input order). O(n log n): the distinct spans sorted by (start, -end) are swept with the largest
    end seen so far — a span is inside a longer one exactly when an earlier span in that order (a
    different span starting no later) ends at or after it."""
    spans = sorted({(s, e) for _v, s, e in hits}, key=lambda se: (se[0], -se[1]))
    inside: set[tuple[int, int]] = set()
    max_end = -1
    for s, e in spans:
        if max_end >= e:
            inside.add((s, e))
        max_end = max(max_end, e)
    keep: list[tuple[str, int, int]] = []
    seen: set[tuple[str, int, int]] = set()
    for hit in hits:
        if (hit[1], hit[2]) not in inside and hit not in seen:
            seen.add(hit)
            keep.append(hit)
    return keep
