"""Extractive citation selection, quote verification and the answer template.

:func:`select_quotes` picks up to ``k`` quotable sentences (``reference.quotable_sentences``: verbatim
review sentences of 12+ characters) of the recommended POI's tagged reviews:

1. for each active constraint in order, the first unused sentence that *supports* it
   (the memo's understanding: ``expresses``);
2. then the unused sentences most similar to the query (TF-IDF, :class:`~.sparse.SparseIndex`).

Sentences, their term vectors and the support tests come from the system's :class:`~.memo.Memo`.

With ``stance_aware`` only sentences whose stored polarity is not negative are candidates, positive ones
first — a complaint is never quoted as praise. :func:`verify_quotes` is the verification pass: a quote is
kept only when ``core.evidence.quotes.quote_score(quote, review) >= GROUNDED_THRESHOLD`` against the review
its tag resolves to, and (with ``stance_aware``) when it is not a negative sentence nor carries a negation
cue for the constraint it is quoted for.
"""

from __future__ import annotations

from collections.abc import Sequence

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.predictions import TaggedReview
from groundtrace.crs.systems.reference import TaggedSentence
from groundtrace.crs.systems.toolkit.memo import Memo, PoiView
from groundtrace.crs.systems.understanding.language import NEGATION_RE


def select_quotes(
    view: PoiView,
    reviews: Sequence[TaggedReview],
    constraints: list[Constraint],
    query: str,
    memo: Memo,
    *,
    k: int = 2,
    stance_aware: bool = False,
) -> list[TaggedSentence]:
    """Up to ``k`` quotable sentences of the recommended POI (``view``, with this turn's tagged
    ``reviews``) to quote (module docstring), in selection order."""
    if k <= 0 or not view.sentences:
        return []
    order = view.stance_order if stance_aware else range(len(view.sentences))
    sent = view.sentences
    chosen: list[int] = []
    taken: set[tuple[int, str, int]] = set()  # a sentence repeated in one review is one quote
    for c in constraints:
        if len(chosen) >= k:
            break
        support = view.supporting(c)
        hit = next((i for i in order if i in support and sent[i] not in taken), None)
        if hit is not None:
            chosen.append(hit)
            taken.add(sent[hit])
    rest = [i for i in order if sent[i] not in taken]
    if len(chosen) < k and rest:
        sims = memo.index.scores_texts([sent[i][1] for i in rest], query)
        ranked = sorted(range(len(rest)), key=lambda j: (-sims[j], j))
        chosen += [rest[j] for j in ranked[: k - len(chosen)]]
    return view.tagged(reviews, chosen)


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
