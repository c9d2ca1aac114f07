"""Which tags and quotes of a response count as grounding: the anti-gaming rules of GS, CD, PC and CGS.

A response's *quoted citations* (a quote inside a claim that carries tags, :mod:`._evidence`) and *tag
groups* are sorted into what counts and what does not. With ``n(x)`` the matching normalisation of
``groundtrace.core.evidence.quotes`` (case-folded, punctuation deleted, spaces collapsed):

* **Support.** Tag ``t`` *supports* quote ``q`` when ``t`` resolves to a review ``r`` and

  - S1 ``q`` has at least :data:`MIN_QUOTE_WORDS` word tokens (``core.evidence.tokens`` tokens with a
    letter or digit) and at most :data:`MAX_QUOTE_CHARS` characters;
  - S2 ``n(q)`` is not a substring of ``n(U)``, ``U`` = the dialogue's user turns before this turn
    (a quote copied from the user is an echo, not evidence);
  - S3 ``quote_score(q, r) >= 0.80``;
  - S4 when ``q`` holds a negation or hedge cue (:data:`CUES`), ``n(q)`` is a substring of ``n(r)``:
    a cue word is never one of the fuzzy match's tolerated edits (``"Not <review sentence>"`` fails);
  - S5 when the *scope* before the quote (the at most :data:`SCOPE_WORDS` word tokens before its
    opening mark, not crossing ``. , ; : ! ? ( ) [ ] { }``, a quote mark, a dash or a line break) holds a
    cue, ``n(tail + " " + q)`` is a substring of ``n(r)``, ``tail`` = the scope from its first cue on
    (``I doubt that "<review sentence>"`` fails unless the review itself doubts it).

* **Counted citation.** A quoted citation *counts* when some tag of its claim supports it and the
  pairs ``(n(q), review id)`` of its supporting tags are not all taken by an earlier counted citation
  of the response (a repeat counts once). Only the first :data:`MAX_QUOTES_PER_TURN` quoted citations
  are examined; the rest never count (and are reported as over the limit).
* **Backed tag group.** A tag group is *backed* when one of its tags supports a counted citation of
  the claim it closes. A *bare* group closes a claim without any quote: it is not a citation.
* **Unresolved tag.** A tag occurrence that resolves to no review (``[R999]``) is an error.

The metrics then read (``grounding.py``):
``GS = counted / (quoted citations + bare groups + unresolved tags)`` (1.0 when all three are 0),
CD counts the tokens of counted quotes and backed groups, PC counts a mention as covered only near a
backed group. A response over :data:`MAX_RESPONSE_CHARS` characters is analysed on its first
``MAX_RESPONSE_CHARS`` characters and scores 0 on GS, CD, PC and CGS (the turn is counted as over the
limit).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from groundtrace.core.evidence.quotes import normalize_text
from groundtrace.core.evidence.tokens import TOKEN_PATTERN
from groundtrace.crs.metrics._evidence import GROUNDED_AT, Claim, QuotedCitation, TagGroup

MIN_QUOTE_WORDS = 2
MAX_QUOTE_CHARS = 2_000
MAX_QUOTES_PER_TURN = 64
MAX_RESPONSE_CHARS = 50_000
SCOPE_WORDS = 4

NEGATION_CUES = frozenset(
    ("not", "no", "never", "nor", "neither", "none", "nothing", "nobody", "nowhere", "cannot", "dont",
     "doesnt", "didnt", "isnt", "wasnt", "arent", "werent", "cant", "couldnt", "wont", "wouldnt",
     "shouldnt", "hasnt", "havent", "hadnt", "aint", "mustnt", "neednt")
)  # fmt: skip
HEDGE_CUES = frozenset(
    ("doubt", "doubts", "doubted", "doubtful", "unlikely", "allegedly", "supposedly", "reportedly",
     "hardly", "barely", "scarcely", "seldom", "rarely", "maybe", "perhaps", "possibly", "might", "false",
     "untrue", "myth")
)  # fmt: skip
CUES = NEGATION_CUES | HEDGE_CUES
"""Cue words, lower-cased with apostrophes removed (``don't`` → ``dont``)."""

_APOSTROPHES = str.maketrans("", "", "'’")
_BOUNDARY = re.compile(r"[.,;:!?()\[\]{}\"“”„«»‘’'\n—–]")
_ALNUM = re.compile(r"[^\W_]")  # exactly the characters for which str.isalnum() is true


def cue_words(text: str) -> list[str]:
    """The cue words of ``text`` in order (word tokens lower-cased, apostrophes removed)."""
    out = []
    for m in TOKEN_PATTERN.finditer(text):
        word = m.group().lower().translate(_APOSTROPHES)
        if word in CUES:
            out.append(word)
    return out


def word_count(text: str) -> int:
    """Word tokens of ``text``: ``core.evidence.tokens`` tokens holding a letter or digit."""
    return sum(1 for w in TOKEN_PATTERN.findall(text) if _ALNUM.search(w))


def scope_before(text: str, quote_start: int) -> list[str]:
    """The at most SCOPE_WORDS word tokens before the quote whose inner text starts at ``quote_start``
    (its opening mark at ``quote_start - 1`` excluded), stopping at a clause boundary."""
    before = text[max(0, quote_start - 1 - 400) : max(0, quote_start - 1)]
    last = _BOUNDARY.search(before[::-1])  # the last boundary (one character) is the first from the end
    if last is not None:
        before = before[len(before) - last.start() :]
    words = [w for w in TOKEN_PATTERN.findall(before) if _ALNUM.search(w)]
    return words[-SCOPE_WORDS:]


@lru_cache(maxsize=1 << 16)
def quote_facts(quote: str) -> tuple[str, str, bool]:
    """What rules S1, S2 and S4 read of a quote alone: (S1's failure reason or ``""``, ``n(quote)``,
    whether the quote holds a cue word); cached, as the same review sentences are quoted over and over."""
    if len(quote) > MAX_QUOTE_CHARS:
        reason = "quote_too_long"
    elif word_count(quote) < MIN_QUOTE_WORDS:
        reason = "quote_too_short"
    else:
        reason = ""
    return reason, normalize_text(quote), bool(cue_words(quote))


@lru_cache(maxsize=1 << 12)
def _normalized_review(text: str) -> str:
    return normalize_text(text)


@dataclass(frozen=True, slots=True)
class QuoteContext:
    """What the support test needs besides the quote and review: the answer text and the user's text."""

    response: str
    user_norm: str


def supports(quote: QuotedCitation, review_text: str, ctx: QuoteContext, score: float) -> str:
    """``""`` when the quote is support from ``review_text`` (rules S1–S5), else the failed rule's reason.

    ``score`` is ``quote_score(quote.quote, review_text)`` (cached by the caller).
    """
    return _reason(quote, review_text, ctx, score, None)


def _reason(
    quote: QuotedCitation, review_text: str, ctx: QuoteContext, score: float, scope: list[list[str]] | None
) -> str:
    """:func:`supports`; ``scope`` (``[]`` or ``[scope_before(...)]``) keeps the quote's scope between the
    tags of one quote."""
    q = quote.quote
    reason, nq, cued = quote_facts(q)
    if reason:
        return reason
    if ctx.user_norm and nq in ctx.user_norm:
        return "echo_of_user"
    if score < GROUNDED_AT:
        return "not_in_review"
    if cued and nq not in _normalized_review(review_text):
        return "negated_or_hedged"
    if scope is None:
        words = scope_before(ctx.response, quote.start)
    else:
        if not scope:
            scope.append(scope_before(ctx.response, quote.start))
        words = scope[0]
    first = next((i for i, w in enumerate(words) if w.lower().translate(_APOSTROPHES) in CUES), None)
    if first is not None:
        tail = " ".join(words[first:])
        if normalize_text(f"{tail} {q}") not in _normalized_review(review_text):
            return "negated_or_hedged"
    return ""


@dataclass(slots=True)
class Grounding:
    """The per-turn sorting of a response's citations (see the module docstring)."""

    counted: list[QuotedCitation]
    n_quoted: int
    bare_groups: int
    unresolved_tags: int
    backed_groups: list[TagGroup]
    over_limit: bool
    reasons: dict[str, int]

    @property
    def attempts(self) -> int:
        """GS's denominator: quoted citations + bare tag groups + unresolved tags."""
        return self.n_quoted + self.bare_groups + self.unresolved_tags


def analyse(
    claims: list[Claim],
    groups: list[TagGroup],
    resolve: Callable[[str], str | None],
    review_text: Callable[[str], str],
    score: Callable[[str, str], float],
    ctx: QuoteContext,
    over_limit: bool = False,
) -> Grounding:
    """Sort the citations of one response: counted quotes, bare and backed groups, unresolved tags.

    ``resolve(tag)`` is the review id a tag points to (``None``: unresolved), ``review_text(id)`` its
    text and ``score(quote, id)`` the (cached) ``quote_score``; ``claims``/``groups`` are in text order.
    """
    reasons: dict[str, int] = {}
    unresolved = sum(1 for g in groups for t in g.tags if resolve(t) is None)
    counted: list[QuotedCitation] = []
    seen: set[tuple[str, str]] = set()
    backed: list[TagGroup] = []
    bare = 0
    n_quoted = 0
    g = 0
    for claim in claims:
        claim_groups = []
        while g < len(groups) and groups[g].start < claim.end:
            if groups[g].start >= claim.start:
                claim_groups.append(groups[g])
            g += 1
        if not claim.quotes:
            bare += len(claim_groups)
            continue
        backing: set[str] = set()
        for quote in claim.quotes:
            n_quoted += 1
            if n_quoted > MAX_QUOTES_PER_TURN:
                reasons["over_quote_limit"] = reasons.get("over_quote_limit", 0) + 1
                continue
            keys: list[tuple[str, str, str]] = []
            why = "unresolved_tag"
            scope: list[list[str]] = []
            for tag in quote.tags:
                rid = resolve(tag)
                if rid is None:
                    continue
                reason = _reason(quote, review_text(rid), ctx, score(quote.quote, rid), scope)
                if reason:
                    why = reason
                else:
                    keys.append((quote_facts(quote.quote)[1], rid, tag))
            if not keys:
                reasons[why] = reasons.get(why, 0) + 1
                continue
            fresh = [k for k in keys if (k[0], k[1]) not in seen]
            if not fresh:
                reasons["repeat"] = reasons.get("repeat", 0) + 1
                continue
            seen.update((k[0], k[1]) for k in keys)
            counted.append(quote)
            backing.update(k[2] for k in keys)
        backed += [grp for grp in claim_groups if any(t in backing for t in grp.tags)]
    return Grounding(counted, n_quoted, bare, unresolved, backed, over_limit, reasons)
