"""Redacted releases (``GT-P*``): recognise one, and check what a redacted turn still shows — its
placeholders and its quote spans — since the quotes themselves are not there to score.

A dialogue is redacted (:func:`is_redacted`) when a turn text parses as redacted text
(:func:`groundtrace.crs.dataset.placeholders.split_redacted`) and one of its placeholders
``⟦Q:<review>:<start>-<end>⟧`` stands for one of the turn's ``quote_spans``. Placeholder-like text alone
(an unredacted text may contain ``⟦``) does not count.
"""

from __future__ import annotations

from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext
from groundtrace.crs.dataset.checks.quotes import check_span_ref, report_review_range, review_span_ok
from groundtrace.crs.dataset.placeholders import PLACEHOLDER_MARK, Placeholder, RedactionError, split_redacted
from groundtrace.crs.schema import Dialogue, Turn


def is_redacted(dialogue: Dialogue) -> bool:
    """Whether ``dialogue`` comes from a redacted release (``groundtrace crs export --redact``); see the
    module docstring."""
    for turn in dialogue.turns:
        if PLACEHOLDER_MARK not in turn.text or not turn.quote_spans:
            continue
        try:
            parts = split_redacted(turn.text)
        except RedactionError:
            continue
        spans = {(s.review_id, s.review_start, s.review_end) for s in turn.quote_spans}
        if any(isinstance(p, Placeholder) and (p.review_id, p.start, p.end) in spans for p in parts):
            return True
    return False


def _placeholders(ctx: CheckContext, turn: Turn) -> list[Placeholder]:
    try:
        return [p for p in split_redacted(turn.text) if isinstance(p, Placeholder)]
    except RedactionError as exc:
        ctx.report(R.PLACEHOLDER, turn.index, detail=str(exc))
        return []


def check_redacted_turn(ctx: CheckContext, turn: Turn, used: list[str]) -> None:
    """GT-P002 on each placeholder of ``turn``, GT-P003 / GT-Q001 / GT-Q002 on each of its quote spans."""
    refs = ctx.dialogue.review_refs
    found = _placeholders(ctx, turn)
    tags = dict.fromkeys([*used, *turn.cited_tags])
    cited = {refs[t].review_id for t in tags if t in refs}
    reviews = ctx.kb.reviews if ctx.kb is not None else {}
    for ph in found:
        where = f"placeholder of review {ph.review_id} ({ph.start}-{ph.end})"
        if ph.start > ph.end:
            ctx.report(R.PLACEHOLDER, turn.index, detail=f"{where}: start after end")
        if ph.review_id not in cited:
            ctx.report(
                R.PLACEHOLDER, turn.index, detail=f"{where}: no tag of this turn points to that review"
            )
        review = reviews.get(ph.review_id)
        if ctx.kb is not None and review is None:
            ctx.report(R.KB_REVIEW, turn.index, what="placeholder review", review=ph.review_id)
        elif review is not None and ph.end > len(review.text):
            detail = f"{where}: outside the review (length {len(review.text)})"
            ctx.report(R.PLACEHOLDER, turn.index, detail=detail)
    keys = {(p.review_id, p.start, p.end) for p in found}
    for span in turn.quote_spans:
        check_span_ref(ctx, turn, span, used)
        if (span.review_id, span.review_start, span.review_end) not in keys:
            ctx.report(
                R.PLACEHOLDER_MISSING,
                turn.index,
                tag=span.tag,
                review=span.review_id,
                start=span.review_start,
                end=span.review_end,
            )
        review = reviews.get(span.review_id)
        if review is not None and not review_span_ok(span, len(review.text)):
            report_review_range(ctx, turn, span, len(review.text))
