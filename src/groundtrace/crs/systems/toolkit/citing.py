"""Extractive citation selection, quote verification and the answer template.

:func:`select_quotes` picks up to ``k`` quotable sentences (``reference.quotable_sentences``: verbatim
review sentences of 12+ characters) of the recommended POI's tagged reviews:

1. for each active constraint in order, the first unused sentence that *supports* it
   (``crs.build.evidence.supports``: lexicon match, no negation cue);
2. then the unused sentences most similar to the query (TF-IDF, :class:`~.sparse.SparseIndex`).

With ``stance_aware`` only sentences whose stored polarity is not negative are candidates, positive ones
first — a complaint is never quoted as praise. :func:`verify_quotes` is the verification pass: a quote is
kept only when ``core.evidence.quotes.quote_score(quote, review) >= GROUNDED_THRESHOLD`` against the review
its tag resolves to, and (with ``stance_aware``) when it is not a negative sentence nor carries a negation
cue for the constraint it is quoted for.
"""

from __future__ import annotations

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.build.evidence import NEGATION_RE, supports
from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import TaggedReview
from groundtrace.crs.systems.reference import TaggedSentence, quotable_sentences
from groundtrace.crs.systems.toolkit.sparse import SparseIndex


def select_quotes(
    reviews: list[TaggedReview],
    poi_id: str,
    constraints: list[Constraint],
    query: str,
    index: SparseIndex,
    *,
    k: int = 2,
    stance_aware: bool = False,
) -> list[TaggedSentence]:
    """Up to ``k`` sentences of ``poi_id``'s reviews to quote (module docstring), in selection order."""
    sentences = quotable_sentences(reviews, poi_id)
    if stance_aware:
        sentences = sorted((s for s in sentences if s.polarity >= 0), key=lambda s: -s.polarity)
    chosen: list[TaggedSentence] = []
    for c in constraints:
        if len(chosen) >= k:
            break
        hit = next((s for s in sentences if s not in chosen and supports(s.text, c)), None)
        if hit is not None:
            chosen.append(hit)
    rest = [s for s in sentences if s not in chosen]
    if len(chosen) < k and rest:
        sims = index.scores_texts([s.text for s in rest], query)
        order = sorted(range(len(rest)), key=lambda i: (-sims[i], i))
        chosen += [rest[i] for i in order[: k - len(chosen)]]
    return chosen


def verify_quotes(
    quotes: list[TaggedSentence], reviews: list[TaggedReview], *, stance_aware: bool = False
) -> list[TaggedSentence]:
    """The quotes that pass the verification pass (module docstring), order kept."""
    text_of = {r.tag: r.text for r in reviews}
    kept = []
    for q in quotes:
        source = text_of.get(q.tag)
        if source is None or quote_score(q.text, source) < GROUNDED_THRESHOLD:
            continue
        if stance_aware and (q.polarity < 0 or NEGATION_RE.search(q.text)):
            continue
        kept.append(q)
    return kept
