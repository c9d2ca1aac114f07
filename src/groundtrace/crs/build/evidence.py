"""Review evidence for stages 2–3: sentences, the aspect lexicon, which sentences support a constraint.

Reviews are split into sentences (:func:`split_sentences`: maximal runs ending in ``.``, ``!`` or ``?``),
each carrying the polarity the KB stores for it (``groundtrace.crs.kb.stance``: +1, 0, -1).
A sentence *supports* a constraint when it matches the constraint's lexicon pattern
(:func:`aspect_pattern`), carries no negation cue (``not``, ``no``, ``never``, ``n't``, ``cash only``
...), its polarity is not negative and its review is rated >= :data:`SUPPORT_MIN_STARS` (3): "There are
steps at the entrance and no ramp." never supports ``wheelchair_accessible``, "The pasta was bland and
overpriced." never supports Italian food, and no sentence of a 1-2-star review is cited in support (the
stored stance already reads such sentences as part of a complaint unless strongly positive; this is a
second guard that does not depend on the stance model).
*Praise* (the fallback evidence for a recommendation) needs positive polarity. A *warning* is a
negative sentence; it may only be quoted after a warning cue
(:data:`groundtrace.crs.dataset.stance.WARNING_RE`, e.g. "one reviewer warns"): that is how the text
says so.
:class:`EvidenceIndex` caches, per POI, its sentences and, per (POI, constraint), the supporting ones; the
pools (stage 2, review numbering), the planner and the realisers (stage 3) read evidence through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.stance import COMPLAINT_RE, SENTENCE_RE, split_sentences
from groundtrace.crs.schema import Constraint, ReviewRef

__all__ = ["SENTENCE_RE", "split_sentences"]  # re-exported: one sentence splitter for the KB and the quotes

# --------------------------------------------------------------------------------------------------
# Sentences and the evidence lexicon
# --------------------------------------------------------------------------------------------------

NEGATION_RE = re.compile(
    r"\b(?:not|no|never|nothing|none|without any (?:ramp|wifi|parking)|cash only|lack(?:s|ed)?)\b|n't\b",
    re.IGNORECASE,
)
MIN_QUOTE_CHARS = 12
MIN_QUOTE_WORDS = 4
MAX_QUOTE_CHARS = 300
#: A supporting sentence comes from a review rated at least this (see the module docstring).
SUPPORT_MIN_STARS = 3.0

_CATEGORY_WORDS: dict[str, str] = {
    "sushi bars": r"sushi|nigiri|omakase",
    "italian": r"italian|pasta|carbonara|pizza",
    "japanese": r"japanese|sushi|nigiri|omakase|ramen",
    "middle eastern": r"middle eastern|hummus|falafel|mezze",
    "mexican": r"mexican|tacos?|tortillas?",
    "greek": r"greek|souvlaki|mezze",
    "mediterranean": r"mediterranean|hummus|mezze|greek|souvlaki",
    "thai": r"thai",
    "indian": r"indian\b|curr(?:y|ies)|tandoor|naan",
    "french": r"french|bistro|brasserie",
    "steakhouses": r"steaks?|steakhouse|ribeye",
    "seafood": r"seafood|oysters?|lobster|fish",
    "vegan": r"vegan|plant-based",
    "chinese": r"chinese|dumplings?|dim sum",
    "pizza": r"pizza",
    "cafes": r"cafe|caf\u00e9|coffee|espresso",
    "korean": r"korean|bibimbap|banchan",
    "hotels": r"hotel",
    "bed & breakfast": r"bed and breakfast|b&b|bed & breakfast",
    "resorts": r"resort",
    "hostels": r"hostel",
    "motels": r"motel",
    "guest houses": r"guest ?house",
    "museums": r"museum|exhibits?|collection",
    "parks": r"park",
    "art galleries": r"galler(?:y|ies)|\bart\b",
    "landmarks & historical buildings": r"historic|history|landmark",
    "aquariums": r"aquarium",
    "botanical gardens": r"botanical|gardens?",
    "zoos": r"\bzoo\b|animals?",
    "beaches": r"beach|sand\b|sandy\b",  # not "sandwich"
    "performing arts": r"theat(?:er|re)|performances?|show",
    "tours": r"tours?\b|guide",
}
_NOISE_WORDS = {
    "quiet": r"quiet|calm|peaceful|hear each other|without raising|slept soundly",
    "average": (
        r"quiet|calm|peaceful|hear each other|talk comfortably|background buzz|moderate noise|"
        r"(?:have|had|having|hold|holding|carry on|enjoy(?:ed)?) (?:a |our |the )?(?:\w+ )?conversations?|"
        r"conversations? (?:was|were|is) easy"
    ),
    "loud": r"quiet|calm|conversation|lively|buzz|noisy|loud|chatter",
    "very_loud": r"quiet|calm|conversation|lively|buzz|noisy|loud|deafening",
}
_AMBIENCE_WORDS = {
    "romantic": r"romantic|date night|candlelit",
    "intimate": r"intimate|cozy|cosy",
    "classy": r"classy|elegant|sophisticated",
    "hipster": r"hipster|indie|vinyl",
    "divey": r"\bdive\b|divey|no-frills|unpretentious",
    "touristy": r"touristy|tourist|visitors",
    "trendy": r"trendy|stylish",
    "upscale": r"upscale|high-end|special occasion|fine dining|luxur",
    "casual": r"casual|laid-back|relaxed|come as you are",
}
_AMENITY_WORDS = {
    "wifi": r"(?:free|fast|reliable)\W+wi-?fi|wi-?fi\W+(?:is|was|that)\W+(?:free|fast)|wi-?fi, free",
    # not "accessible" alone: "It's only accessible from Saint Lawrence Ave." is about the way in
    "wheelchair_accessible": (
        r"wheelchair|ramps?\b|step-free|accessible (?:restrooms?|bathrooms?|entrances?|seating)|"
        r"(?:handicap(?:ped)?|ada)[- ]accessible"
    ),
    "good_for_kids": r"\bkids?\b|children|family[- ]friendly|families with|high chairs?|toddler|stroller",
    "good_for_groups": r"\bgroups?\b|large party|big tables?",
    "outdoor_seating": (
        r"patio|outdoor|terrace|outside (?:seating|tables?|dining|area)|"
        r"(?:sit|sat|seat(?:s|ed|ing)?|tables?|chairs?|dine|dining|eat|ate|eating)(?: \w+){0,2} outside"
    ),
    "takes_reservations": r"reserv(?:e|ed|ations?)\b|book ahead",
    "dogs_allowed": r"\bdogs?\b|\bpup\b|pets?\b",
    "parking": r"parking|garage|valet|\b(?:free|small|big|large|own|private|their|the) lot\b",
    "bike_parking": r"bike (?:racks?|parking|corral)|(?:lock|park)(?:ed)? (?:up )?(?:my|our|your|the) bikes?",
    "has_tv": r"\btvs?\b|screens|the game",
    "happy_hour": r"happy hour",
    "delivery": r"deliver",
    "takeout": r"takeout|take-out|take out|to-go|carry-?out|\b(?:food|order|coffee|lunch|meal)s? to go\b",
    "accepts_credit_cards": r"credit cards?|card payment",
    "by_appointment_only": r"by appointment",
}
_MEAL_WORDS = {
    "breakfast": r"breakfast",
    "brunch": r"brunch",
    "lunch": r"lunch",
    "dinner": r"dinner",
    "latenight": r"late-night|late night|open late|after midnight",
    "dessert": r"desserts?|tart|cake|gelato",
}
_CHEAP = r"cheap|affordable|inexpensive|bargain|budget|good value|great value|fair prices?|reasonably priced"
_PRICEY = r"pricey|expensive|splurge|high-end prices|upscale"
_PRAISE = r"outstanding|excellent|fantastic|highlight|amazing|loved|best|superb|wonderful|perfect"
_NEAR = (
    r"walk(?:ing|able)? distance|walkable|within walking|(?:an? |short |easy |quick )walk (?:from|to|away)|"
    r"central(?:ly)? located|central location|(?:great|good|perfect|convenient|prime) location|"
    r"close to (?:the |downtown|everything|our hotel)"
)


def _compile(words: str) -> re.Pattern[str]:
    """The lexicon words as one pattern matched at a word start ("tart" is not in "started", "ramp" not
    in "cramped"); a word that must also end there carries its own ``\\b``."""
    return re.compile(rf"\b(?:{words})", re.IGNORECASE)


_PATTERN_CACHE: dict[tuple[str, str], re.Pattern[str] | None] = {}


def aspect_pattern(kind: str, value: object) -> re.Pattern[str] | None:
    """The lexicon pattern whose match (without negation) supports ``Constraint(kind, value)``.

    Category/cuisine labels outside the built-in table fall back to their first word (plural ``s``
    dropped). Returns ``None`` for a value with no lexicon entry.
    """
    key = (kind, str(value))
    if key in _PATTERN_CACHE:
        return _PATTERN_CACHE[key]
    words: str | None = None
    text = str(value).lower()
    if kind in ("cuisine", "category"):
        words = _CATEGORY_WORDS.get(text)
        if words is None:
            first = re.split(r"[^a-z]+", text.strip())[0]
            words = (
                re.escape(first[:-1] if first.endswith("s") and len(first) > 3 else first) if first else None
            )
    elif kind == "noise_max":
        words = _NOISE_WORDS.get(text)
    elif kind == "ambience":
        words = _AMBIENCE_WORDS.get(text)
    elif kind == "amenity":
        words = _AMENITY_WORDS.get(text)
    elif kind == "meal":
        words = _MEAL_WORDS.get(text)
    elif kind == "alcohol":
        words = (
            r"cocktails?|full bar|bartender" if text == "full_bar" else r"wines?|beers?|cocktails?|full bar"
        )
    elif kind == "price_max":
        words = _CHEAP if int(float(text)) <= 2 else _CHEAP + "|" + r"worth it|worth every"
    elif kind == "price_min":
        words = _PRICEY if int(float(text)) >= 3 else _PRICEY + "|" + r"reasonably priced|fair prices?"
    elif kind == "min_stars":
        words = _PRAISE
    elif kind == "max_distance_km":
        words = _NEAR
    pattern = _compile(words) if words else None
    _PATTERN_CACHE[key] = pattern
    return pattern


#: Openers that point back at an earlier sentence: "However, expensive and only filled us up ...",
#: "Which, by the way, is the best ranch I've had." do not read alone.
BACK_REFERENCE_RE = re.compile(
    r"(?:however|but|which|though|otherwise|instead|besides|nevertheless|nonetheless|that said|"
    r"even so|then again|on the other hand)\b",
    re.IGNORECASE,
)


def quotable(text: str) -> bool:
    """Whether a review sentence reads well as a quote on its own: :data:`MIN_QUOTE_CHARS` to
    :data:`MAX_QUOTE_CHARS` characters and >= :data:`MIN_QUOTE_WORDS` words, on one line, starting with a
    letter or digit (not ", and affordable prices ..." or "- Even with ..."), no double quote, balanced
    parentheses, not a question ("Would it be a hard fix?" means nothing out of context) and not opening
    with a word that points back at an earlier sentence (:data:`BACK_REFERENCE_RE`)."""
    return (
        MIN_QUOTE_CHARS <= len(text) <= MAX_QUOTE_CHARS
        and text[0].isalnum()
        and len(text.split()) >= MIN_QUOTE_WORDS
        and '"' not in text
        and "\n" not in text
        and text.count("(") == text.count(")")
        and not text.rstrip().endswith("?")
        and BACK_REFERENCE_RE.match(text) is None
    )


#: Words that contradict a quiet/average noise constraint: such a sentence never supports it
#: ("... loudly had a blue-tooth conversation" mentions conversation but complains about noise).
LOUD_RE = re.compile(
    r"\b(?:loud(?:ly|er|est)?|noisy|deafening|blaring|shout\w*|yell\w*|can'?t hear)", re.IGNORECASE
)


def reads_as_complaint(s: Sentence) -> bool:
    """A sentence the builder may quote as a *warning*: stored stance negative with a negative score
    (<= -0.1), and either a complaint cue (``kb.stance.COMPLAINT_RE``), a clearly negative score (<= -0.3)
    or a 1-2-star review. A stored negative stance alone is not enough: the model errs towards negative
    (praise such as "You simply can't buy something like this in the store." or "Staff was delightful,
    turning what would've been a boring evening into a memorable one." must not be cited as a warning, nor
    a plain "Stopped in for lunch with my daughter." of a 3-star review)."""
    if s.polarity >= 0 or s.score > -0.1:
        return False
    return s.score <= -0.3 or s.stars <= 2 or COMPLAINT_RE.search(s.text) is not None


def supports(sentence: str, constraint: Constraint) -> bool:
    """True when ``sentence`` expresses ``constraint`` (lexicon match and no negation cue)."""
    pattern = aspect_pattern(constraint.kind, constraint.value)
    if (
        constraint.kind == "noise_max"
        and str(constraint.value) in ("quiet", "average")
        and LOUD_RE.search(sentence) is not None
    ):
        return False
    return (
        pattern is not None and pattern.search(sentence) is not None and NEGATION_RE.search(sentence) is None
    )


@dataclass(frozen=True, slots=True)
class Sentence:
    """A review sentence: where it sits in its review, its stored polarity (+1, 0, -1) and its review's
    stars."""

    review_id: str
    poi_id: str
    start: int
    end: int
    text: str
    polarity: int = 0
    stars: float = 0.0
    score: float = 0.0


class EvidenceIndex:
    """Per-POI review sentences and, cached, the ones supporting each constraint."""

    def __init__(self, kb: KnowledgeBase, *, max_reviews_per_poi: int | None = None) -> None:
        self.kb = kb
        self.max_reviews_per_poi = max_reviews_per_poi
        self._sentences: dict[str, list[Sentence]] = {}
        self._support: dict[tuple[str, str, str], list[Sentence]] = {}
        self._refs: dict[str, list[ReviewRef]] = {}

    def reviews(self, poi_id: str) -> list:
        reviews = self.kb.reviews_of(poi_id)
        return reviews if self.max_reviews_per_poi is None else reviews[: self.max_reviews_per_poi]

    def review_refs(self, poi_id: str) -> list[ReviewRef]:
        """:class:`ReviewRef` of each of :meth:`reviews` (cached, shared: treat as read-only)."""
        refs = self._refs.get(poi_id)
        if refs is None:
            refs = [ReviewRef(review_id=r.review_id, poi_id=poi_id) for r in self.reviews(poi_id)]
            self._refs[poi_id] = refs
        return refs

    def sentences(self, poi_id: str) -> list[Sentence]:
        """Quotable sentences of the POI's reviews (:func:`quotable`)."""
        cached = self._sentences.get(poi_id)
        if cached is None:
            cached = []
            stances = self.kb.stances
            for review in self.reviews(poi_id):
                stance = {s.start: s for s in stances.get(review.review_id, ())}
                for start, end in split_sentences(review.text):
                    text = review.text[start:end]
                    if quotable(text):
                        cached.append(
                            Sentence(
                                review.review_id,
                                poi_id,
                                start,
                                end,
                                text,
                                stance[start].polarity if start in stance else 0,
                                review.stars,
                                stance[start].score if start in stance else 0.0,
                            )
                        )
            self._sentences[poi_id] = cached
        return cached

    def support(self, poi_id: str, constraint: Constraint) -> list[Sentence]:
        """Non-negative sentences of reviews rated >= :data:`SUPPORT_MIN_STARS` of ``poi_id`` that express
        ``constraint`` (see :func:`supports`)."""
        key = (poi_id, constraint.kind, str(constraint.value))
        cached = self._support.get(key)
        if cached is None:
            cached = [
                s
                for s in self.sentences(poi_id)
                if s.polarity >= 0 and s.stars >= SUPPORT_MIN_STARS and supports(s.text, constraint)
            ]
            self._support[key] = cached
        return cached

    def praise(self, poi_id: str) -> list[Sentence]:
        """Positive sentences with a praise word (fallback evidence when no aspect is expressed)."""
        return [s for s in self.support(poi_id, PRAISE) if s.polarity > 0]

    def positive(self, poi_id: str) -> list[Sentence]:
        """Every positive sentence of a review rated >= :data:`SUPPORT_MIN_STARS` of ``poi_id``."""
        return [s for s in self.sentences(poi_id) if s.polarity > 0 and s.stars >= SUPPORT_MIN_STARS]

    def warnings(self, poi_id: str, focus: list[Constraint]) -> list[Sentence]:
        """Sentences of ``poi_id`` that read as a complaint on their own (:func:`reads_as_complaint`) on
        the aspect of a ``focus`` constraint (lexicon match, negation allowed), else any such sentence."""
        negative = [s for s in self.sentences(poi_id) if reads_as_complaint(s)]
        for c in focus:
            pattern = aspect_pattern(c.kind, c.value)
            hits = [s for s in negative if pattern is not None and pattern.search(s.text)]
            if hits:
                return hits
        return negative

    def positive_share(self, poi_id: str) -> float:
        """Share of the POI's sentences with positive polarity (0.0 when it has none)."""
        sentences = self.sentences(poi_id)
        return sum(s.polarity > 0 for s in sentences) / len(sentences) if sentences else 0.0


PRAISE = Constraint(kind="min_stars", value=0.0, label="praise")
