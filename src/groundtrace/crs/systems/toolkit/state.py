"""The dialogue state an offline system reads from the history (no gold labels): what the user asked for,
what they turned down, and which candidates they rejected.

Constraint parser — two lexicons, both over the user's turns only:

* *phrases*: every constraint label of the bundled persona archetypes (``crs/data/personas.yaml``, the
  vocabulary the template realiser speaks; ``{anchor}`` matches any text) → that constraint;
* *keywords*: generic rules (:data:`KEYWORD_RULES`: "quiet", "wifi", "kids", "wheelchair", ``$``-signs,
  "within N km" ...) and every candidate category word (``Sushi Bars`` → "sushi"), so paraphrased
  (LLM-realised) turns still yield constraints.

Rejections: in a ``reject_and_refine`` turn the candidates whose name occurs in the text are rejected
(rejection memory: they stay rejected for the rest of the dialogue). The text before the refinement cue
(``ideally``/``preferably``/``instead``) is the *negative* part: constraints parsed there are dropped from
the active set, and its words form the negative query; the rest is positive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import CandidateCard, SystemInput

REFINE_CUE = re.compile(r"\b(?:ideally|preferably|instead|rather)\b", re.IGNORECASE)

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
    (r"\bwine|beer\b", "alcohol", "any"),
    (r"\bcheap|budget|affordable|inexpensive\b", "price_max", 2),
    (r"\bsplurge|high-end|luxur", "price_min", 3),
    (r"\b(?:highly|well|top)[- ]rated\b|\bexcellent reviews\b", "min_stars", 4.0),
)
_KEYWORDS = tuple((re.compile(p, re.IGNORECASE), k, v) for p, k, v in KEYWORD_RULES)
_PRICE_SIGNS = re.compile(r"(?:above|over|more than|under|below|max(?:imum)?|at most|up to)\s+(\${1,4})")
_DISTANCE = re.compile(r"within\s+(\d+(?:\.\d+)?)\s*km", re.IGNORECASE)
_WALK = re.compile(r"walking distance|a short walk|walkable|on foot", re.IGNORECASE)
_GENERIC_CATEGORIES = {
    "restaurants",
    "hotels & travel",
    "hotels",
    "arts & entertainment",
    "active life",
    "food",
}


@lru_cache(maxsize=1)
def phrase_lexicon() -> tuple[tuple[re.Pattern[str], Constraint, str], ...]:
    """Persona constraint labels as case-insensitive whole-phrase patterns, longest first, each with the
    lower-cased literal text before its first ``{anchor}`` (a cheap necessary condition of a match)."""
    from groundtrace.crs.build.personas import bundled_personas

    seen: dict[str, Constraint] = {}
    for persona in bundled_personas():
        for c in persona.constraints:
            seen.setdefault(c.label.lower(), Constraint(kind=c.kind, value=c.value, label=c.label))
    out = []
    for label in sorted(seen, key=len, reverse=True):
        parts = label.split("{anchor}")
        body = r".{1,60}?".join(re.escape(part) for part in parts)
        out.append((re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE), seen[label], parts[0]))
    return tuple(out)


def category_words(cards: list[CandidateCard]) -> dict[str, str]:
    """Distinctive category → its matching word (``Sushi Bars`` → ``sushi``), over the pool's cards."""
    out: dict[str, str] = {}
    for card in cards:
        for cat in card.categories:
            word = _category_word(cat)
            if word is not None:
                out.setdefault(cat, word)
    return out


@lru_cache(maxsize=8192)
def _category_word(cat: str) -> str | None:
    if cat.lower() in _GENERIC_CATEGORIES:
        return None
    word = re.split(r"[^a-z]+", cat.lower().strip())[0]
    word = word[:-1] if word.endswith("s") and len(word) > 4 else word
    return word if len(word) >= 3 else None


def parse_constraints(text: str, cards: list[CandidateCard] | None = None) -> list[Constraint]:
    """Constraints stated in ``text`` (module docstring); one per (kind, value), phrase matches first."""
    return list(_parse(text, *_parse_context(cards or [])))


def _parse_context(cards: list[CandidateCard]) -> tuple[tuple[tuple[str, str], ...], str]:
    """The pool's part of the parser: its category words and the kind they parse to."""
    kind = "cuisine" if any(c.poi_type == "restaurant" for c in cards) else "category"
    return tuple(sorted(category_words(cards).items())), kind


@lru_cache(maxsize=65536)
def _parse(text: str, words: tuple[tuple[str, str], ...], cat_kind: str) -> tuple[Constraint, ...]:
    found: dict[tuple[str, str], Constraint] = {}
    rest = text
    # for ASCII text, a case-insensitive match implies the lower-cased literal head occurs in it
    low = text.lower() if text.isascii() else None
    for pattern, c, head in phrase_lexicon():
        if low is not None and head not in low:
            continue
        m = pattern.search(rest)
        if m:
            found.setdefault((c.kind, str(c.value)), c)
            rest = rest[: m.start()] + " " + rest[m.end() :]
            low = rest.lower() if low is not None else None
    for pattern, kind, value in _KEYWORDS:
        m = pattern.search(rest)
        if m and not any(k == kind for k, _ in found):
            found[(kind, str(value))] = Constraint(kind=kind, value=value, label=m.group(0))  # type: ignore[arg-type]
    m = _PRICE_SIGNS.search(rest)
    if m and not any(k == "price_max" for k, _ in found):
        found[("price_max", str(len(m.group(1))))] = Constraint(
            kind="price_max", value=len(m.group(1)), label=m.group(0)
        )
    m = _DISTANCE.search(rest) or _WALK.search(rest)
    if m and not any(k == "max_distance_km" for k, _ in found):
        km = float(m.group(1)) if m.re is _DISTANCE else 1.0
        found[("max_distance_km", str(km))] = Constraint(kind="max_distance_km", value=km, label=m.group(0))
    low = rest.lower()
    for cat, word in words:
        if (
            word in low
            and re.search(rf"\b{re.escape(word)}", rest, re.IGNORECASE)
            and (cat_kind, cat) not in found
        ):
            found[(cat_kind, cat)] = Constraint(kind=cat_kind, value=cat, label=word)  # type: ignore[arg-type]
    return tuple(found.values())


@dataclass
class DialogueState:
    """What the user wants at this turn: active constraints, dropped ones, rejected POIs, query texts."""

    constraints: list[Constraint] = field(default_factory=list)
    dropped: list[Constraint] = field(default_factory=list)
    rejected: set[str] = field(default_factory=set)
    positive_text: str = ""
    negative_text: str = ""


def _named(text: str, cards: list[CandidateCard]) -> set[str]:
    low = text.lower()
    return {c.poi_id for c in cards if c.name and c.name.lower() in low}


def track_state(inp: SystemInput) -> DialogueState:
    """The :class:`DialogueState` after the user turns of ``inp.history`` (module docstring)."""
    state = DialogueState()
    active: dict[tuple[str, str], Constraint] = {}
    positive: list[str] = []
    negative: list[str] = []
    context = _parse_context(inp.candidates)
    for turn in inp.history:
        if turn.role != "user":
            continue
        text = turn.text
        if turn.act == "reject_and_refine":
            state.rejected |= _named(text, inp.candidates)
            cue = REFINE_CUE.search(text)
            neg, pos = (text[: cue.start()], text[cue.end() :]) if cue else (text, "")
            for name in (c.name for c in inp.candidates if c.name and c.name.lower() in neg.lower()):
                neg = re.sub(re.escape(name), " ", neg, flags=re.IGNORECASE)
            negative.append(neg)
            for c in _parse(neg, *context):
                if active.pop((c.kind, str(c.value)), None) is not None:
                    state.dropped.append(c)
            text = pos
        elif turn.act in ("ask_comparison", "ask_detail", "accept"):
            continue  # names a POI, states no preference
        positive.append(text)
        for c in _parse(text, *context):
            active[(c.kind, str(c.value))] = c
    state.constraints = list(active.values())
    state.positive_text = " ".join(positive)
    state.negative_text = " ".join(negative)
    return state
