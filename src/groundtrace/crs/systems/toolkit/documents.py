"""POI documents and quotable review sentences, built only from what a system sees at a turn."""

from __future__ import annotations

from collections import defaultdict

from groundtrace.crs.systems.predictions import CandidateCard, TaggedReview

_NOISE_WORDS = {"quiet": "quiet calm", "average": "moderate", "loud": "loud lively", "very_loud": "very loud"}


def attribute_words(card: CandidateCard) -> str:
    """The card's attributes as words: true booleans by name (``good_for_kids`` → ``good for kids``),
    list values, noise and WiFi levels, price as ``$`` signs."""
    words: list[str] = []
    for key, value in sorted(card.attributes.items()):
        name = key.replace("_", " ")
        if value is True:
            words.append(name)
        elif isinstance(value, list):
            words += [str(v) for v in value]
        elif key == "noise" and isinstance(value, str):
            words.append(_NOISE_WORDS.get(value, value))
        elif key == "wifi" and value == "free":
            words.append("free wifi")
        elif key == "alcohol" and value in ("full_bar", "beer_and_wine"):
            words.append("bar wine beer cocktails" if value == "full_bar" else "wine beer")
    if card.price_level:
        words.append("budget cheap" if card.price_level <= 2 else "upscale pricey")
    return " ".join(words)


def reviews_by_poi(reviews: list[TaggedReview]) -> dict[str, list[TaggedReview]]:
    """The turn's tagged reviews grouped by POI, in input order."""
    out: dict[str, list[TaggedReview]] = defaultdict(list)
    for r in reviews:
        out[r.poi_id].append(r)
    return out


def card_header(card: CandidateCard) -> str:
    """``name · categories · attribute words`` (one line each) — the card's part of its POI document."""
    return "\n".join(p for p in (card.name, " ".join(card.categories), attribute_words(card)) if p)


def document_parts(card: CandidateCard, reviews: list[TaggedReview]) -> list[str]:
    """The parts of a POI document: the card header, then each tagged review's text (input order)."""
    return [p for p in (card_header(card), *(r.text for r in reviews)) if p]


def document_key(card: CandidateCard, reviews: list[TaggedReview]) -> tuple[str, ...]:
    """What a POI document is built from: the POI id and its tagged reviews' ids (a cache key within one
    KB; the card is the KB's, the texts are the reviews')."""
    return (card.poi_id, *(r.review_id for r in reviews))


def poi_document(card: CandidateCard, reviews: list[TaggedReview]) -> str:
    """``name · categories · attribute words · review texts`` — the text a sparse/dense retriever indexes."""
    return "\n".join(document_parts(card, reviews))
