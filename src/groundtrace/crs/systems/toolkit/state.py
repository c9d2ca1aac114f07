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
(:func:`split_rejection`: ``ideally``/``preferably``, or the clause before ``instead``/``rather``) is the
*negative* part: constraints parsed there are dropped from the active set, and its words form the
negative query; the rest is positive.

Slots: a kind of :data:`SINGLE_VALUED` holds one value (a later turn's replaces it); an itinerary leg
starts a new request (:func:`request_start`).
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
#: Kinds with one value at a time: a later turn's value replaces an earlier one ("$$ at most" after
#: "under $$$"; another cuisine). Amenities, ambience and meals accumulate.
SINGLE_VALUED = frozenset(
    {"cuisine", "category", "price_max", "price_min", "noise_max", "min_stars", "max_distance_km", "alcohol"}
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


#: Last words that name the kind of place, not what it serves (``Sushi Bars`` is about sushi).
_PLACE_WORDS = {"bar", "bars", "food", "restaurants", "shop", "shops", "house", "houses", "joints", "stands"}


@lru_cache(maxsize=8192)
def _category_word(cat: str) -> str | None:
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
        taken = (kind, str(value)) in found or (kind in SINGLE_VALUED and any(k == kind for k, _ in found))
        if m and not taken:
            found[(kind, str(value))] = Constraint(kind=kind, value=value, label=m.group(0))  # type: ignore[arg-type]
            rest = rest[: m.start()] + " " + rest[m.end() :]  # a word states one constraint
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
            and re.search(rf"\b{re.escape(word)}(?:e?s)?\b", rest, re.IGNORECASE)
            and (cat_kind, cat) not in found
        ):
            found[(cat_kind, cat)] = Constraint(kind=cat_kind, value=cat, label=word)  # type: ignore[arg-type]
    return tuple(found.values())


@dataclass
class DialogueState:
    """What the user wants at this turn: active constraints, dropped ones, rejected POIs, query texts.

    ``positive_text`` / ``negative_text`` join the turns' positive / negative parts with a space;
    ``positive_parts`` / ``negative_parts`` keep them apart, one (stripped, non-empty) text per turn."""

    constraints: list[Constraint] = field(default_factory=list)
    dropped: list[Constraint] = field(default_factory=list)
    rejected: set[str] = field(default_factory=set)
    positive_text: str = ""
    negative_text: str = ""
    positive_parts: list[str] = field(default_factory=list)
    negative_parts: list[str] = field(default_factory=list)


def _named(text: str, cards: list[CandidateCard]) -> set[str]:
    low = text.lower()
    return {c.poi_id for c in cards if c.name and c.name.lower() in low}


_WISH_CUE = re.compile(r"\b(?:ideally|preferably)\b", re.IGNORECASE)


def split_rejection(text: str) -> tuple[str, str]:
    """``(negative, positive)`` parts of a ``reject_and_refine`` text: split at the last ``ideally`` /
    ``preferably`` (the wish follows it), else at the first ``instead`` / ``rather`` (the wish comes
    just before: "Mediterranean instead?"; the clause holding it — after the last ``—``, ``;``, ``.``,
    ``:`` or ``?`` — is positive), else all negative."""
    wishes = list(_WISH_CUE.finditer(text))
    if wishes:
        return text[: wishes[-1].start()], text[wishes[-1].end() :]
    cue = REFINE_CUE.search(text)
    if cue is None:
        return text, ""
    head = text[: cue.start()]
    cut = max(head.rfind(ch) for ch in "—;.:?")
    return head[: cut + 1], head[cut + 1 :] + " " + text[cue.end() :]


def request_start(inp: SystemInput) -> int:
    """Index in ``inp.history`` where the current request starts (0: the whole history).

    An itinerary leg ("Great, X it is. Now I need a place to eat ...") is measured from the previous
    pick X, which is the turn's anchor: the last user turn naming the anchor *after a system turn named
    it* (the system recommended it) opens the current request — what the user asked for an earlier leg
    (another POI type) does not hold here. A landmark anchor the user introduces changes nothing.
    """
    name = str((inp.anchor or {}).get("name") or "").strip().lower()
    if len(name) < 3:
        return 0
    start, system_named = 0, False
    for i, turn in enumerate(inp.history):
        said = name in turn.text.lower()
        if turn.role == "system":
            system_named = system_named or said
        elif said and system_named:
            start = i
    return start


def track_state(inp: SystemInput) -> DialogueState:
    """The :class:`DialogueState` after the user turns of ``inp.history`` (module docstring): from the
    current request's start (:func:`request_start`), constraints accumulate turn by turn, a value of a
    :data:`SINGLE_VALUED` kind replacing that kind's earlier values."""
    state = DialogueState()
    active: dict[tuple[str, str], Constraint] = {}
    positive: list[str] = []
    negative: list[str] = []
    context = _parse_context(inp.candidates)
    first = request_start(inp)
    for i, turn in enumerate(inp.history):
        if turn.role != "user":
            continue
        text = turn.text
        if turn.act == "reject_and_refine":
            state.rejected |= _named(text, inp.candidates)
            if i < first:
                continue
            neg, text = split_rejection(text)
            for name in (c.name for c in inp.candidates if c.name and c.name.lower() in neg.lower()):
                neg = re.sub(re.escape(name), " ", neg, flags=re.IGNORECASE)
            negative.append(neg)
            for c in _parse(neg, *context):
                if active.pop((c.kind, str(c.value)), None) is not None:
                    state.dropped.append(c)
        elif turn.act in ("ask_comparison", "ask_detail", "accept") or i < first:
            continue  # names a POI, states no preference (or belongs to an earlier request)
        positive.append(text)
        stated = _parse(text, *context)
        replaced = {c.kind for c in stated if c.kind in SINGLE_VALUED}
        active = {k: c for k, c in active.items() if c.kind not in replaced}
        for c in stated:
            active[(c.kind, str(c.value))] = c
    state.constraints = list(active.values())
    state.positive_text = " ".join(positive)
    state.negative_text = " ".join(negative)
    state.positive_parts = [t for t in (p.strip() for p in positive) if t]
    state.negative_parts = [t for t in (n.strip() for n in negative) if t]
    return state
