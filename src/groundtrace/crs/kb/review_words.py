"""Review words and keys shared by the KB's review miners (``mining``: attributes, ``price``: the learned
price level), in one module both import, so neither imports the other.

* :data:`CHEAP` / :data:`PRICEY`: sentences that call a place cheap or pricey (word-boundary start,
  case-insensitive);
* :data:`EVIDENCE_KEY`: the POI attribute holding the review sentences behind each mined value
  (``"review_id:start-end"`` references, per attribute key).
"""

from __future__ import annotations

import re

EVIDENCE_KEY = "mined_from_reviews"


def _p(words: str) -> re.Pattern[str]:
    """``words`` (a regex alternation) as a case-insensitive pattern anchored at a word start."""
    return re.compile(rf"\b(?:{words})", re.IGNORECASE)


CHEAP = _p(
    r"cheap|affordable|inexpensive|bargain|budget|good value|great value|reasonabl[ey] priced|fair prices?|"
    r"won't break the bank|prices are (?:great|good|reasonable|low)"
)
PRICEY = _p(r"pric(?:e)?y|expensive|overpriced|splurge|fine dining|high[- ]end|upscale|steep prices?|costly")
