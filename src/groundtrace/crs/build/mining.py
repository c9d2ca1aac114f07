"""Stage 3b data — phrasings mined from reviews where people say what they were looking for.

``mine_phrasings(kb, bank)`` scans every review for a need statement (:data:`NEED_RE`: "we wanted …",
"I was looking for …", "we needed …", "we came for …", "we were craving …"), cuts the clause after it at
the first punctuation or conjunction (2–7 lower-case words starting "a", "some", "somewhere" …: no
names, digits, quotes, pronouns or time words),
and maps the clause to a constraint with the builder's aspect lexicon
(:func:`groundtrace.crs.build.evidence.aspect_pattern`): the clause must match exactly one ``(kind,
value)`` the bank knows (the longest match wins inside one kind; two kinds, or a tie, is ambiguous and
dropped; ``noise_max`` prefers quiet over average over loud) and carry no negation cue. Price, stars and
distance are not mined (their lexicon says "good value", "best", "walkable", not a level).

Clauses after "wanted to …" are not mined (they tell what people did: "I wanted to reserve the right
…"); a mined phrasing is a list phrase ("somewhere we could sit outside"). Each keeps its provenance
(review id, POI id) and the POI's type, and takes its split by the bank's hash rule
(:func:`groundtrace.crs.build.phrasing.phrase_u`); :meth:`PhrasingBank.with_mined` adds the new ones to
the build's bank. Reviews are read in id order, the first occurrence of a phrasing is kept: the result is
deterministic for a KB. One regex pass per review (a few seconds on 28.5k Yelp reviews).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundtrace.crs.build.evidence import NEGATION_RE, aspect_pattern
from groundtrace.crs.build.phrasing import (
    PHRASE,
    Phrasing,
    PhrasingBank,
    normalise,
    phrase_u,
    split_of_u,
)
from groundtrace.crs.kb.knowledge_base import KnowledgeBase

_VERBS = (
    r"wanted|needed|were looking for|was looking for|came (?:here )?for|were after|was after|"
    r"were hoping for|was hoping for|were craving|was craving|were in the mood for|was in the mood for"
)
#: "(we|I) (wanted|were looking for|needed|came for|…) <clause>"
NEED_RE = re.compile(
    rf"\b(?P<who>we|i)\s+(?P<verb>{_VERBS})\s+(?P<clause>[^.!?;:,()\"\n]{{3,120}})", re.IGNORECASE
)
_CUT_RE = re.compile(
    r"\s+(?:and|but|so|because|since|when|which|while|as|or|that was|then|before|after|until|if)\b.*$",
    re.IGNORECASE,
)
_WORDS_RE = re.compile(r"^[a-z][a-z' -]*[a-z]$")
MIN_WORDS, MAX_WORDS = 2, 7
#: a mined clause starts with one of these (an indefinite description of what was wanted)
OPENERS = frozenset({"a", "an", "some", "somewhere", "something", "anywhere", "anything", "any"})
#: a mined clause holds none of these (they tell a story instead of stating a need)
STOPWORDS = frozenset(
    {
        "i", "me", "my", "he", "him", "his", "she", "her", "they", "them", "their", "it", "its", "was",
        "were", "is", "are", "be", "been", "had", "has", "did", "do", "does", "last", "yesterday", "today",
        "tonight", "ago", "this", "that", "those", "these", "there", "here", "then", "just",
    }
)  # fmt: skip
#: kinds mined (price, stars and distance have no level in the lexicon)
MINED_KINDS = frozenset({"amenity", "noise_max", "ambience", "meal", "alcohol", "cuisine", "category"})
_NOISE_ORDER = ("quiet", "average", "loud")
_WITHOUT_RE = re.compile(r"\bwithout\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class MinedPhrasing:
    """A mined phrasing and what it says: ``(kind, value)``, the phrasing (split, shape, provenance)."""

    kind: str
    value: object
    phrasing: Phrasing

    def record(self) -> dict[str, object]:
        p = self.phrasing
        return {
            "text": p.text,
            "kind": self.kind,
            "value": self.value,
            "shape": p.shape,
            "split": p.split,
            **dict(p.provenance),
        }


def clause_of(match: re.Match[str]) -> tuple[str, str] | None:
    """``(text, shape)`` of a need statement, or None when the clause is unusable: it must read as the
    thing wanted — start with an indefinite word (:data:`OPENERS`: "a", "somewhere", "something" …),
    hold 2–7 lower-case words and none of :data:`STOPWORDS` (pronouns, time words, finite verbs that
    mark a story rather than a need: "a late dinner last night", "a burger he liked")."""
    clause = _CUT_RE.sub("", match["clause"].strip()).strip(" -'")
    if not _WORDS_RE.match(clause):
        return None
    words = clause.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or words[0] not in OPENERS:
        return None
    if STOPWORDS.intersection(words):
        return None
    return clause, PHRASE


def _targets(bank: PhrasingBank) -> list[tuple[str, object, re.Pattern[str]]]:
    """``(kind, value, lexicon pattern)`` of every mined kind's constraint the bank knows."""
    out = []
    for kind, value in bank.known_constraints():
        pattern = aspect_pattern(kind, value) if kind in MINED_KINDS else None
        if pattern is not None:
            out.append((kind, value, pattern))
    return out


def classify(text: str, targets: list[tuple[str, object, re.Pattern[str]]]) -> tuple[str, object] | None:
    """The one ``(kind, value)`` ``text`` states (see module docstring), or None."""
    if NEGATION_RE.search(text) or _WITHOUT_RE.search(text):
        return None
    best: dict[str, list[tuple[int, object]]] = {}
    for kind, value, pattern in targets:
        m = pattern.search(text)
        if m:
            best.setdefault(kind, []).append((len(m.group(0)), value))
    if len(best) != 1:
        return None
    ((kind, hits),) = best.items()
    if kind == "noise_max":
        values = {str(v) for _, v in hits}
        return kind, next(v for v in _NOISE_ORDER if v in values)
    top = max(n for n, _ in hits)
    winners = [v for n, v in hits if n == top]
    return (kind, winners[0]) if len(winners) == 1 else None


def mine_phrasings(kb: KnowledgeBase, bank: PhrasingBank) -> list[MinedPhrasing]:
    """Every new phrasing the KB's reviews offer (see module docstring), in review-id order."""
    targets = _targets(bank)
    seen: set[str] = set()
    out: list[MinedPhrasing] = []
    for rid in sorted(kb.reviews):
        review = kb.reviews[rid]
        for match in NEED_RE.finditer(review.text):
            got = clause_of(match)
            if got is None:
                continue
            text, shape = got
            key = normalise(text)
            if key in seen or key in bank.owner:
                continue
            found = classify(text, targets)
            if found is None:
                continue
            seen.add(key)
            poi = kb.pois.get(review.poi_id)
            types = (poi.poi_type,) if poi is not None else None
            phrasing = Phrasing(
                text,
                shape,
                split_of_u(phrase_u(text)),
                "mined",
                types,
                provenance=(("review_id", rid), ("poi_id", review.poi_id)),
            )
            out.append(MinedPhrasing(found[0], found[1], phrasing))
    return out
