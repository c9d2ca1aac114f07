"""Generic keyword rules: the fallback understanding when no trained model is at hand, and one of the two
evidence tests (with the trained evidence model: a sentence that names the value expresses it).

* :data:`KEYWORD_RULES` — everyday words for common preferences ("quiet", "wifi", "kids", "wheelchair",
  "cheap" ...), written here as general language knowledge (not the dataset builder's vocabulary);
* :func:`category_words` — the KB's own category names as the words a user says (``Sushi Bars`` →
  "sushi"), over the candidate cards;
* :func:`keyword_parse` — a text's constraints by those rules plus the numeric amounts of
  :mod:`.language`;
* :func:`keyword_expresses` — whether a review sentence names the constraint by its rule's words (a
  category by its word) and carries no negation cue.
"""

from __future__ import annotations

import re
from functools import lru_cache

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import CandidateCard
from groundtrace.crs.systems.understanding.language import NEGATION_RE, clauses
from groundtrace.crs.systems.understanding.parser import SINGLE_VALUED, amounts

KEYWORD_RULES: tuple[tuple[str, str, str | int | float], ...] = (
    (r"\b(?:quiet|calm|peaceful)\b", "noise_max", "quiet"),
    (r"\bnot too (?:noisy|loud)\b", "noise_max", "average"),
    (r"\bwi-?fi\b", "amenity", "wifi"),
    (r"\bwheelchair|step-free|accessible\b", "amenity", "wheelchair_accessible"),
    (r"\bkids?\b|\bchildren\b|family[- ]friendly", "amenity", "good_for_kids"),
    (r"\bgroups?\b", "amenity", "good_for_groups"),
    (r"\boutdoor|patio|terrace|outside\b", "amenity", "outdoor_seating"),
    (r"\breservations?\b|\bbook a table\b", "amenity", "takes_reservations"),
    (r"\bdogs?\b|\bpets?\b", "amenity", "dogs_allowed"),
    (r"\bparking\b", "amenity", "parking"),
    (r"\bromantic|date night\b", "ambience", "romantic"),
    (r"\bclassy|elegant\b", "ambience", "classy"),
    (r"\btrendy|stylish\b", "ambience", "trendy"),
    (r"\bupscale|fine dining\b", "ambience", "upscale"),
    (r"\bcasual|laid-back\b", "ambience", "casual"),
    (r"\bintimate|cos?zy\b", "ambience", "intimate"),
    (r"\bbreakfast\b", "meal", "breakfast"),
    (r"\bbrunch\b", "meal", "brunch"),
    (r"\blunch\b", "meal", "lunch"),
    (r"\bdinner\b", "meal", "dinner"),
    (r"\blate[- ]night\b", "meal", "latenight"),
    (r"\bcocktails?|full bar\b", "alcohol", "full_bar"),
    (r"\b(?:wines?|beers?)(?:\s+(?:or|and|&)\s+(?:wines?|beers?))?\b", "alcohol", "any"),
    (r"\bcheap|budget|affordable|inexpensive\b", "price_max", 2),
    (r"\bsplurge|high-end|luxur", "price_min", 3),
    (
        (
            r"\b(?:highly|well|top|better|best)[- ]?(?:rated|reviewed)\b"
            r"|\b(?:excellent|great|good|better|best|strong|glowing) reviews\b"
        ),
        "min_stars",
        4.0,
    ),
)
_KEYWORDS = tuple((re.compile(p, re.IGNORECASE), k, v) for p, k, v in KEYWORD_RULES)
_WALK = re.compile(r"walking distance|a short walk|walkable|on foot", re.IGNORECASE)
_GENERIC_CATEGORIES = {
    "restaurants",
    "hotels & travel",
    "hotels",
    "arts & entertainment",
    "active life",
    "food",
}
#: Last words that name the kind of place, not what it serves (``Sushi Bars`` is about sushi).
_PLACE_WORDS = {"bar", "bars", "food", "restaurants", "shop", "shops", "house", "houses", "joints", "stands"}


def category_words(cards: list[CandidateCard]) -> dict[str, str]:
    """Distinctive category → its matching word (``Sushi Bars`` → ``sushi``), over the pool's cards."""
    out: dict[str, str] = {}
    for card in cards:
        for cat in card.categories:
            word = category_word(cat)
            if word is not None:
                out.setdefault(cat, word)
    return out


@lru_cache(maxsize=8192)
def category_word(cat: str) -> str | None:
    """The phrase a user says for a category: its first part (before ``&``, ``/``, ``(``), without a
    trailing place word, last word singular — ``Sushi Bars`` → ``sushi``, ``Hot Dogs`` → ``hot dog``,
    ``Coffee & Tea`` → ``coffee``, ``American (New)`` → ``american``; None for a generic category."""
    if cat.lower() in _GENERIC_CATEGORIES:
        return None
    words = re.findall(r"[a-z]+", re.split(r"[&/(]", cat.lower())[0])
    if len(words) > 1 and words[-1] in _PLACE_WORDS:
        words = words[:-1]
    if not words:
        return None
    last = words[-1]
    words[-1] = last[:-1] if last.endswith("s") and len(last) > 4 else last
    phrase = " ".join(words)
    return phrase if len(phrase) >= 3 else None


def category_matches(text: str, words: tuple[tuple[str, str], ...], cat_kind: str) -> list[Constraint]:
    """A constraint of ``cat_kind`` for each category whose word occurs in ``text`` (plural allowed)."""
    low = text.lower()
    return [
        Constraint(kind=cat_kind, value=cat, label=word)  # type: ignore[arg-type]
        for cat, word in words
        if word in low and re.search(rf"\b{re.escape(word)}(?:e?s)?\b", text, re.IGNORECASE)
    ]


def keyword_parse(text: str) -> list[Constraint]:
    """Constraints of ``text`` by :data:`KEYWORD_RULES` and numeric amounts; one value per single-valued
    kind (the first rule's), a word states one constraint."""
    found: dict[tuple[str, str], Constraint] = {}
    rest = text
    for pattern, kind, value in _KEYWORDS:
        m = pattern.search(rest)
        taken = (kind, str(value)) in found or (kind in SINGLE_VALUED and any(k == kind for k, _ in found))
        if m and not taken:
            found[(kind, str(value))] = Constraint(kind=kind, value=value, label=m.group(0))  # type: ignore[arg-type]
            rest = rest[: m.start()] + " " + rest[m.end() :]
    for s, e in clauses(rest):
        for c in amounts(rest[s:e]):
            if c.kind in ("price_max", "price_min"):
                found = {k: v for k, v in found.items() if k[0] not in ("price_max", "price_min")}
            if not any(k == c.kind for k, _ in found):
                found[(c.kind, str(c.value))] = c
    m = _WALK.search(rest)
    if m and not any(k == "max_distance_km" for k, _ in found):
        found[("max_distance_km", "1.0")] = Constraint(kind="max_distance_km", value=1.0, label=m.group(0))
    return list(found.values())


@lru_cache(maxsize=256)
def _rule_patterns(kind: str, value: str) -> tuple[re.Pattern[str], ...]:
    return tuple(p for p, k, v in _KEYWORDS if k == kind and str(v) == value)


def has_keyword_rule(c: Constraint) -> bool:
    """Whether :func:`keyword_expresses` can judge ``c`` at all."""
    if c.kind in ("cuisine", "category"):
        return category_word(str(c.value)) is not None
    return bool(_rule_patterns(c.kind, str(c.value)))


def keyword_expresses(sentence: str, c: Constraint) -> bool:
    """Whether ``sentence`` names ``c`` by its rule's words (module docstring), without negation."""
    return not NEGATION_RE.search(sentence) and keyword_mentions(sentence, c)


def keyword_mentions(sentence: str, c: Constraint) -> bool:
    """Whether ``sentence`` names ``c`` by its rule's words (a category by its word)."""
    if c.kind in ("cuisine", "category"):
        word = category_word(str(c.value))
        return word is not None and re.search(rf"\b{re.escape(word)}", sentence, re.IGNORECASE) is not None
    return any(p.search(sentence) for p in _rule_patterns(c.kind, str(c.value)))
