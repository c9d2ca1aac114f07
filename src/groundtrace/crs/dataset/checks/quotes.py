"""Tags, quotes and quote spans (``GT-T*``, ``GT-Q*``) of one turn.

Tags and quoted snippets are read by :mod:`groundtrace.crs.dataset.text`. A cited quote is scored with
:func:`groundtrace.core.evidence.quotes.quote_score` against *each* review its tags point to and must reach
:data:`~groundtrace.core.evidence.quotes.GROUNDED_THRESHOLD` for each (GT-Q003). A quote span must lie in
its turn and its review (GT-Q001), belong to a tag of the text pointing to its review (GT-Q002), match
its review slice at the threshold (GT-Q004), and be verbatim (GT-Q005: an error for the builder, a
warning for a release, whose format allows near-verbatim spans). A quoted negative review sentence must be
cited as a warning, a positive one not (GT-Q007, :mod:`groundtrace.crs.dataset.stance`).
"""

from __future__ import annotations

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.dataset import rules as R
from groundtrace.crs.dataset.checks.context import CheckContext, short
from groundtrace.crs.dataset.stance import is_warning, quote_stance
from groundtrace.crs.dataset.text import quoted_snippets, text_tags
from groundtrace.crs.schema import QuoteSpan, Turn

#: ``(snippet, tags, start, end)`` of each cited quote of a turn
Snippets = list[tuple[str, list[str], int, int]]
#: system acts whose text must cite at least one review
CITING_ACTS = frozenset({"recommend", "compare", "explain"})


def check_tags(ctx: CheckContext, turn: Turn) -> list[str]:
    """GT-T001..T004 on ``turn``; returns the text's tags (for the quote checks)."""
    refs = ctx.dialogue.review_refs
    used = text_tags(turn.text)
    for tag in used:
        if tag not in refs:
            ctx.report(R.TAG_UNKNOWN, turn.index, what="text tag", tag=tag)
    for tag in turn.cited_tags:
        if tag not in refs and tag not in used:
            ctx.report(R.TAG_UNKNOWN, turn.index, what="cited tag", tag=tag)
    if used != turn.cited_tags:
        ctx.report(R.CITED_TAGS, turn.index, listed=turn.cited_tags, used=used)
    if turn.role == "system" and turn.act in CITING_ACTS and not used:
        ctx.report(R.MISSING_CITATION, turn.index, act=turn.act)
    allowed = set(turn.recommended)
    for tag in used:
        ref = refs.get(tag)
        if ref is not None and ref.poi_id not in allowed:
            ctx.report(R.TAG_WRONG_POI, turn.index, tag=tag, poi=ref.poi_id, allowed=sorted(allowed))
    return used


def _review_text(ctx: CheckContext, tag: str) -> str | None:
    ref = ctx.dialogue.review_refs.get(tag)
    if ref is None or ctx.kb is None:
        return None
    review = ctx.kb.reviews.get(ref.review_id)
    return None if review is None else review.text


def cited_snippets(turn: Turn, used: list[str]) -> Snippets:
    """:func:`~groundtrace.crs.dataset.text.quoted_snippets` of ``turn`` (none when the text has no tag)."""
    return quoted_snippets(turn.text) if used else []


def check_quotes(ctx: CheckContext, turn: Turn, snippets: Snippets) -> None:
    """GT-Q003 (with a KB) and GT-Q006 on each quoted snippet a tagged claim of ``turn`` cites."""
    covered = [(s.start, s.end) for s in turn.quote_spans]
    for snippet, tags, q_start, q_end in snippets:
        if not any(a < q_end and q_start < b for a, b in covered):
            ctx.report(R.QUOTE_UNCOVERED, turn.index, quote=short(snippet))
        if ctx.kb is None:
            continue
        failing = []
        for tag in tags:
            text = _review_text(ctx, tag)
            if text is None:
                continue  # an unknown tag or review: GT-T001 / GT-K002
            score = quote_score(snippet, text)
            if score < GROUNDED_THRESHOLD:
                failing.append((tag, score))
        if failing:
            ctx.report(
                R.QUOTE_NOT_IN_REVIEW,
                turn.index,
                quote=short(snippet),
                tags=", ".join(t for t, _ in failing),
                scores=", ".join(f"{s:.2f}" for _, s in failing),
            )


def check_stance(ctx: CheckContext, turn: Turn, snippets: Snippets) -> None:
    """GT-Q007 on the verbatim quotes of a recommend/compare/explain turn: a negative sentence (stored
    stance) must be introduced as a warning (:func:`groundtrace.crs.dataset.stance.is_warning`), a positive
    one must not. Quotes that are not verbatim or cite unknown tags are left to GT-Q003 / GT-T001."""
    kb = ctx.kb
    if kb is None or not snippets or turn.role != "system" or turn.act not in CITING_ACTS:
        return
    refs = ctx.dialogue.review_refs
    for quote, tags, start, _ in snippets:
        warned = is_warning(turn.text, start)
        for tag in tags:
            ref = refs.get(tag)
            stance = quote_stance(kb, ref.review_id, quote) if ref is not None else None
            if stance is None:
                continue
            if stance.polarity < 0 and not warned:
                detail = "negative but cited in support (no warning cue)"
                ctx.report(R.EVIDENCE_STANCE, turn.index, quote=short(quote, 40), tag=tag, detail=detail)
            elif stance.polarity > 0 and warned:
                detail = "positive but introduced as a warning"
                ctx.report(R.EVIDENCE_STANCE, turn.index, quote=short(quote, 40), tag=tag, detail=detail)


def check_span_ref(ctx: CheckContext, turn: Turn, span: QuoteSpan, used: list[str]) -> None:
    """GT-Q002: the span's tag is a tag of the text and points to the span's review."""
    if span.tag not in used:
        ctx.report(
            R.QUOTE_SPAN_REF, turn.index, tag=span.tag, detail="the tag is not a tag of the turn's text"
        )
    ref = ctx.dialogue.review_refs.get(span.tag)
    if ref is not None and ref.review_id != span.review_id:
        detail = f"names review {span.review_id} but {span.tag} points to {ref.review_id}"
        ctx.report(R.QUOTE_SPAN_REF, turn.index, tag=span.tag, detail=detail)


def check_spans(ctx: CheckContext, turn: Turn, used: list[str]) -> None:
    """GT-Q001, Q002, Q004, Q005 on each quote span of an unredacted turn (review checks need a KB)."""
    text = turn.text
    for span in turn.quote_spans:
        check_span_ref(ctx, turn, span, used)
        if not 0 <= span.start < span.end <= len(text):
            ctx.report(
                R.QUOTE_SPAN_RANGE,
                turn.index,
                what="turn",
                start=span.start,
                end=span.end,
                where="the turn text",
                length=len(text),
            )
            continue
        review = ctx.kb.reviews.get(span.review_id) if ctx.kb is not None else None
        if review is None:
            continue  # no KB, or an unknown review: GT-K002
        if not review_span_ok(span, len(review.text)):
            report_review_range(ctx, turn, span, len(review.text))
            continue
        quoted = text[span.start : span.end]
        source = review.text[span.review_start : span.review_end]
        if quoted == source:
            continue
        score = quote_score(quoted, source)
        if score < GROUNDED_THRESHOLD:
            ctx.report(
                R.QUOTE_SPAN_MISMATCH,
                turn.index,
                quote=short(quoted),
                review=span.review_id,
                start=span.review_start,
                end=span.review_end,
                score=score,
            )
        else:
            ctx.report(R.QUOTE_SPAN_VERBATIM, turn.index, start=span.start, end=span.end, tag=span.tag)


def review_span_ok(span: QuoteSpan, length: int) -> bool:
    """Whether the span's review offsets lie inside a review of ``length`` characters."""
    return 0 <= span.review_start <= span.review_end <= length


def report_review_range(ctx: CheckContext, turn: Turn, span: QuoteSpan, length: int) -> None:
    """GT-Q001 for review offsets outside the review."""
    ctx.report(
        R.QUOTE_SPAN_RANGE,
        turn.index,
        what="review",
        start=span.review_start,
        end=span.review_end,
        where=f"review {span.review_id}",
        length=length,
    )
