"""How a turn text cites a review's stance: warning cues, and the stored stance of a quoted sentence.

A quote of a negative review sentence is *evidence against* a POI and may only be cited as a warning: a
:data:`WARNING_RE` cue ("one reviewer warns", "a downside") between the previous tag group and the quote
(:func:`is_warning`). The builder writes such cues, the dataset rule ``GT-Q007 evidence-stance`` checks them
(:mod:`groundtrace.crs.dataset.checks.quotes`), and the stance metrics read them.
"""

from __future__ import annotations

import re

from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.stance import SentenceStance

#: A cue that the quote after it is cited as a warning (negative evidence), within the same clause.
WARNING_RE = re.compile(
    r"\b(?:warns?|warned|warning|downside|complain(?:s|ed)?|caveat|heads-up|be aware)\b", re.IGNORECASE
)

WARNING_WINDOW = 80


def is_warning(text: str, quote_start: int) -> bool:
    """True when the quote starting at ``quote_start`` of ``text`` is introduced as a warning: a
    :data:`WARNING_RE` cue between the previous tag group's ``]`` (or the start of the text, at most
    :data:`WARNING_WINDOW` characters back) and the quote."""
    lo = max(text.rfind("]", 0, quote_start) + 1, quote_start - WARNING_WINDOW, 0)
    return WARNING_RE.search(text, lo, quote_start) is not None


def quote_stance(kb: KnowledgeBase, review_id: str, quote: str) -> SentenceStance | None:
    """The stored stance of the review sentence where ``quote`` (verbatim) starts; None when the quote
    is not a verbatim substring of the review or the KB has no stance for it."""
    review = kb.reviews.get(review_id)
    if review is None:
        return None
    at = review.text.find(quote.strip())
    return kb.sentence_stance(review_id, at) if at >= 0 else None
