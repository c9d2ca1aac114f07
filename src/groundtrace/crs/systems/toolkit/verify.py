"""The verification pass of ``trace-hybrid`` for one quote, shared by its offline answer
(``baselines.trace_hybrid``) and its optional LLM step (``baselines.trace_llm``), which imports it without
importing the system back. A quote passes when its tag resolves to a review of the POI it is quoted for,
it matches that review (``quote_score >= GROUNDED_THRESHOLD``), it holds no negation cue, the stored
stance of its sentence is not negative, and it expresses the constraint it is quoted for
(``Understanding.expresses``; with no constraint: a positive sentence, i.e. praise).
"""

from __future__ import annotations

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import TaggedReview
from groundtrace.crs.systems.understanding.language import NEGATION_RE
from groundtrace.crs.systems.understanding.model import GENERIC, Understanding


def verified(
    quote: str,
    tag: str,
    reviews: dict[str, TaggedReview],
    poi_id: str,
    c: Constraint | None,
    understanding: Understanding = GENERIC,
) -> bool:
    """The verification pass for one quote (module docstring)."""
    review = reviews.get(tag)
    if review is None or review.poi_id != poi_id:
        return False
    if quote_score(quote, review.text) < GROUNDED_THRESHOLD:
        return False
    if NEGATION_RE.search(quote):
        return False
    polarity = _polarity(review, quote)
    if polarity is None or polarity < 0:
        return False
    return understanding.expresses(quote, c) if c is not None else polarity > 0


def _polarity(review: TaggedReview, quote: str) -> int | None:
    """The stored polarity of the review sentence containing the quote's start (None: not found)."""
    at = review.text.find(quote.strip())
    if at < 0:
        at = review.text.lower().find(quote.strip().lower())
    if at < 0:
        return None
    for start, end, polarity in review.stance:
        if start <= at < end:
            return polarity
    return 0 if not review.stance else None
