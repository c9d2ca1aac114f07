"""The support judge: does a quoted review excerpt, as the answer frames it, support a claim or a constraint?

One public function, :func:`judge_support`, used by ``evidence_support`` and ``constraint_evidence``
(:mod:`.stance_evidence`) and by anyone who evaluates support on labelled pairs. It reads only the quote,
the review it is cited from, the constraint (or ``None`` for "supports the recommendation in general")
and the answer text around the quote. Rules, in order (the first failing one is the verdict's reason):

1. **Fold** the quote, the review and the context with ``core.evidence.normalize.fold_unicode`` (NFKC,
   zero-width and bidi controls removed, Latin look-alikes folded): ``n\\u200dot`` and Cyrillic ``nоt``
   read as ``not``.
2. **One sentence** (``sentence``): the quote must lie inside ONE review sentence
   (``kb.stance.split_sentences``): ``quote_score(quote, sentence) >= 0.80`` for some sentence. A quote
   joining a positive sentence to the negative one after it matches neither.
3. **Negation parity** (``negation_dropped`` / ``negation_added``): the quote holds as many negation words
   (:data:`NEGATIONS`) as the part of the sentence it aligns with, widened to whole words and to the at
   most :data:`GOVERNING_WORDS` words before it in the same clause. "do miss the lamb" from "Don't miss
   the lamb." and "classy and upscale" from "Not classy and upscale." fail, whatever their fuzzy score.
4. **Frame** (``reframed``): the answer's clause around the quote — from the previous sentence end or
   tag group to the next sentence end or quote, tags included, *after* the quote too — holds no reversal
   cue (:data:`REVERSAL_WORDS`, :data:`REVERSAL_PHRASES`): ``Some claim "q" [R3], which is simply false.``,
   ``far from "q"``, ``It is not "q"``, ``contrary to "q"``, ``it's a myth that "q"``.
5. **Stance**: the review sentence's polarity (``polarity_at(sentence_start)``, the KB's stored stance;
   without it a lexical fallback, :func:`lexical_polarity`). A quote framed as a warning
   (``dataset.stance.is_warning``: "one reviewer warns: ") of a negative sentence is a *valid warning*
   (``supported=False, warning=True``, reason ``warning``) — evidence against, never support; when a
   constraint is given it must also be about it (its aspect pattern matches the quote), else
   ``warning_off_topic``. A warning cue on a non-negative sentence is ``warning_not_negative``; a negative
   sentence cited without a warning cue is ``negative_as_support``.
6. **Constraint** (``not_about_constraint``): with a constraint, the quote must match its aspect pattern
   and the whole sentence must express it — ``build.evidence.supports(sentence, constraint)``, the very
   test the dataset builder and the oracle use to choose evidence (lexicon match, no negation cue, no
   loudness word for a quiet request). Without a constraint, a non-negative sentence supports.

A verdict with ``supported=True`` has reason ``supported``. Everything is a pure function of its
arguments; the sentence location is cached per (quote, review).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from groundtrace.core.evidence.normalize import fold_unicode
from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.build.evidence import aspect_pattern, supports
from groundtrace.crs.dataset.stance import is_warning
from groundtrace.crs.kb.stance import ASPECTS, COMPLAINT_RE, VaderPolarity, split_sentences
from groundtrace.crs.schema import Constraint

__all__ = [
    "NEGATIONS", "SupportVerdict", "for_constraint", "judge_quote", "judge_support", "lexical_polarity",
    "locate_sentence",
]  # fmt: skip

#: Negation words (lower-cased, apostrophes removed): their count must be the same in a quote and in the
#: review text it stands for.
NEGATIONS = frozenset(
    ("not", "no", "never", "nor", "neither", "none", "nothing", "nobody", "nowhere", "cannot", "dont",
     "doesnt", "didnt", "isnt", "wasnt", "arent", "werent", "cant", "couldnt", "wont", "wouldnt",
     "shouldnt", "hasnt", "havent", "hadnt", "aint", "mustnt", "neednt", "without", "lack", "lacks",
     "lacked", "lacking")
)  # fmt: skip
#: Words in the frame of a quote that reverse or disown it.
REVERSAL_WORDS = NEGATIONS | frozenset(
    ("false", "untrue", "wrong", "myth", "lie", "lies", "lying", "nonsense", "doubt", "doubts", "doubtful",
     "unlikely", "allegedly", "supposedly", "reportedly", "claim", "claims", "claimed", "alleged",
     "exaggerated", "exaggeration", "overstated", "overrated", "overblown", "hype", "hyped", "debunked",
     "mistaken", "incorrect", "inaccurate", "misleading", "fake", "bogus", "baseless", "unfounded",
     "dubious", "questionable", "disagree", "disagrees", "dispute", "disputed", "hardly", "barely",
     "scarcely", "rarely", "seldom", "unlike", "contrary", "ignore", "pretend", "pretends", "sarcastic",
     "sarcasm", "ironic", "irony", "joke", "joking", "kidding", "nope", "nah")
)  # fmt: skip
#: Multi-word reversal cues (matched on the folded, lower-cased frame with apostrophes removed).
REVERSAL_PHRASES = re.compile(
    r"\b(?:far from|rather than|instead of|as if|yeah right|in your dreams|so[- ]called|"
    r"opposite of|anything but|other than|used to be|no longer|not really|too good to be true)\b"
)
#: Words before the aligned part of a sentence that may govern it ("not" in "Not classy and upscale").
GOVERNING_WORDS = 3

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_APOSTROPHES = str.maketrans("", "", "'’")
_CLAUSE_END = re.compile(r"[.!?;:,()\[\]\n—–-]")
_OPEN_QUOTES = "\"“„«‘'"
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")


@dataclass(frozen=True, slots=True)
class SupportVerdict:
    """The judge's answer: ``supported`` (the quote, as framed, is evidence for the claim/constraint),
    ``reason`` (``supported`` or the failed rule, see the module docstring), ``warning`` (a valid warning:
    a negative sentence cited as one), ``polarity`` of the located review sentence (None if not located)
    and ``sentence`` (its text, ``""`` if not located)."""

    supported: bool
    reason: str
    warning: bool = False
    polarity: int | None = None
    sentence: str = ""


def _words(text: str) -> list[str]:
    return [w.lower().translate(_APOSTROPHES) for w in _WORD_RE.findall(text)]


@lru_cache(maxsize=1 << 14)
def _negations(text: str) -> int:
    return sum(1 for w in _words(text) if w in NEGATIONS)


@lru_cache(maxsize=1 << 16)
def locate_sentence(quote: str, review_text: str) -> tuple[int, int, float] | None:
    """``(start, end, score)`` of the review sentence (``kb.stance.split_sentences``; offsets in the raw
    review) whose folded text best contains the folded quote, when its ``quote_score`` is >= 0.80; else
    None."""
    q = fold_unicode(quote).strip()
    if not q:
        return None
    low = q.lower()
    sentences = [
        (start, end, fold_unicode(review_text[start:end])) for start, end in split_sentences(review_text)
    ]
    for start, end, sentence in sentences:  # the common case, verbatim: no fuzzy matching at all
        if low in sentence.lower():
            return (start, end, 1.0)
    best: tuple[int, int, float] | None = None
    for start, end, sentence in sentences:
        score = float(quote_score(q, sentence))
        if score >= GROUNDED_THRESHOLD and (best is None or score > best[2]):
            best = (start, end, score)
    return best


@lru_cache(maxsize=1 << 14)
def _governed_span(quote: str, sentence: str) -> str:
    """The part of ``sentence`` the quote stands for: the aligned span (rapidfuzz partial alignment on
    lower-cased text), widened to whole words and to the :data:`GOVERNING_WORDS` words before it within
    the same clause."""
    low_q, low_s = quote.lower().strip(), sentence.lower()
    at = low_s.find(low_q)
    if at >= 0:
        lo, hi = at, at + len(low_q)
    else:
        al = fuzz.partial_ratio_alignment(low_q, low_s)
        lo, hi = (al.dest_start, al.dest_end) if al is not None else (0, len(low_s))
    while lo > 0 and (sentence[lo - 1].isalnum() or sentence[lo - 1] in "'’"):
        lo -= 1
    while hi < len(sentence) and (sentence[hi].isalnum() or sentence[hi] in "'’"):
        hi += 1
    before = sentence[:lo]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    governing = list(_WORD_RE.finditer(before, cut))[-GOVERNING_WORDS:]
    if governing:
        lo = governing[0].start()
    return sentence[lo:hi]


def _frame(context: str, quote: str, quote_start: int | None) -> tuple[str, int]:
    """The clause of ``context`` around the quote, the quote's own text removed, and where the quote
    starts in ``context`` (-1 when it is not found: the whole context is the frame)."""
    at = quote_start if quote_start is not None else context.find(quote)
    if at < 0:
        return context, -1
    end = at + len(quote)
    before = context[:at]
    lo = max((m.end() for m in _SENTENCE_END.finditer(before)), default=0)
    lo = max(lo, before.rfind("]") + 1)
    if before.rstrip().endswith(tuple(_OPEN_QUOTES)):
        before = before.rstrip()[:-1]
    after = context[end:]
    if after[:1] in "\"”»’'":
        after = after[1:]
    stop = _SENTENCE_END.search(after)
    hi = stop.start() if stop is not None else len(after)
    open_at = min((after.find(c) for c in _OPEN_QUOTES if 0 <= after.find(c) < hi), default=hi)
    return before[lo:] + " " + after[:open_at], at


@lru_cache(maxsize=1 << 14)
def reversal_cue(frame: str) -> str | None:
    """The first reversal cue of a (folded) frame: a word of :data:`REVERSAL_WORDS` or a phrase of
    :data:`REVERSAL_PHRASES`; tags (``[R3]``) are ignored."""
    text = re.sub(r"\[[^\]]*\]", " ", frame)
    for w in _words(text):
        if w in REVERSAL_WORDS:
            return w
    m = REVERSAL_PHRASES.search(" ".join(_words(text)))
    return m.group() if m else None


@lru_cache(maxsize=1 << 14)
def lexical_polarity(sentence: str) -> int:
    """Polarity without a KB (for callers that have none): -1 on a complaint cue (``kb.stance.COMPLAINT_RE``)
    or a VADER compound <= -0.05, +1 on compound >= 0.05, else 0 (VADER when installed, else 0)."""
    if COMPLAINT_RE.search(sentence):
        return -1
    try:
        return VaderPolarity().predict([sentence])[0][0]
    except ImportError:  # vaderSentiment not installed
        return 0


def judge_support(
    quote: str,
    review_text: str,
    constraint: Constraint | None,
    context: str,
    *,
    quote_start: int | None = None,
    polarity_at: Callable[[int], int | None] | None = None,
) -> SupportVerdict:
    """Whether ``quote``, cited from ``review_text`` inside ``context`` (the answer text; ``quote_start``
    = where the quote's text starts in it, else its first occurrence), supports ``constraint`` (or, when
    ``None``, the recommendation in general). ``polarity_at(start)`` gives the stored polarity of the
    review sentence starting at ``start`` of ``review_text`` (KB stance; ``None``: unknown → the
    lexical fallback). Rules: module docstring."""
    base = judge_quote(quote, review_text, context, quote_start=quote_start, polarity_at=polarity_at)
    return base if constraint is None else for_constraint(base, quote, constraint)


def judge_quote(
    quote: str,
    review_text: str,
    context: str,
    *,
    quote_start: int | None = None,
    polarity_at: Callable[[int], int | None] | None = None,
) -> SupportVerdict:
    """:func:`judge_support` without a constraint: rules 1–5, the part that does not depend on one (call
    :func:`for_constraint` on its verdict for each constraint instead of judging the quote again)."""
    q = fold_unicode(quote).strip()
    located = locate_sentence(quote, review_text)
    if located is None:
        return SupportVerdict(False, "sentence")
    start, end, _score = located
    sentence = fold_unicode(review_text[start:end])
    have, want = _negations(q), _negations(_governed_span(q, sentence))
    if have != want:
        reason = "negation_dropped" if have < want else "negation_added"
        return SupportVerdict(False, reason, sentence=sentence)
    folded_context = fold_unicode(context)
    # quote_start indexes the raw context; folding may shift it, so look the quote up again when it moved
    start_in = quote_start if quote_start is not None and folded_context == context else None
    frame, at = _frame(folded_context, q, start_in)
    cue = reversal_cue(frame)
    if cue is not None:
        return SupportVerdict(False, "reframed", sentence=sentence)
    polarity = polarity_at(start) if polarity_at is not None else None
    if polarity is None:
        polarity = lexical_polarity(sentence)
    if at >= 0 and is_warning(folded_context, at):
        if polarity >= 0:
            return SupportVerdict(False, "warning_not_negative", polarity=polarity, sentence=sentence)
        return SupportVerdict(False, "warning", warning=True, polarity=polarity, sentence=sentence)
    if polarity < 0:
        return SupportVerdict(False, "negative_as_support", polarity=polarity, sentence=sentence)
    return SupportVerdict(True, "supported", polarity=polarity, sentence=sentence)


def for_constraint(base: SupportVerdict, quote: str, constraint: Constraint) -> SupportVerdict:
    """The verdict for ``constraint`` from the quote's constraint-free verdict ``base`` (rules 5–6): a
    valid warning must be about the constraint (else ``warning_off_topic``); support must match its
    aspect pattern and the whole sentence must satisfy ``build.evidence.supports``."""
    q = fold_unicode(quote).strip()
    if base.warning:
        if _warning_about(q, constraint):
            return base
        return SupportVerdict(False, "warning_off_topic", polarity=base.polarity, sentence=base.sentence)
    if not base.supported:
        return base
    if not (_about(q, constraint) and supports(base.sentence, constraint)):
        return SupportVerdict(False, "not_about_constraint", polarity=base.polarity, sentence=base.sentence)
    return base


#: The KB stance aspect (``kb.stance.ASPECTS``) a constraint is about, for warnings: a complaint names the
#: aspect ("the room was noisy"), rarely the wished-for value ("quiet").
_KIND_ASPECT = {
    "cuisine": "food", "meal": "food", "price_max": "price", "price_min": "price", "noise_max": "noise",
    "ambience": "ambience", "alcohol": "drinks", "max_distance_km": "location",
}  # fmt: skip
_AMENITY_ASPECT = {
    "wifi": "wifi", "wheelchair_accessible": "accessibility", "good_for_kids": "kids",
    "good_for_groups": "groups", "outdoor_seating": "outdoor", "parking": "parking",
    "bike_parking": "parking", "takes_reservations": "wait",
}  # fmt: skip


def constraint_aspect(constraint: Constraint) -> str | None:
    """The ``kb.stance.ASPECTS`` name a constraint is about (None when no aspect fits, e.g. min_stars)."""
    if constraint.kind == "amenity":
        return _AMENITY_ASPECT.get(str(constraint.value))
    return _KIND_ASPECT.get(constraint.kind)


def _about(quote: str, constraint: Constraint) -> bool:
    """The quote speaks to the constraint: its aspect-lexicon pattern matches (what the builder reads)."""
    pattern = aspect_pattern(constraint.kind, constraint.value)
    return pattern is not None and pattern.search(quote) is not None


def _warning_about(quote: str, constraint: Constraint) -> bool:
    """A warning is about the constraint when :func:`_about` holds or the constraint's stance aspect
    (:func:`constraint_aspect`) matches: "the room was noisy" warns about a quiet request."""
    if _about(quote, constraint):
        return True
    aspect = constraint_aspect(constraint)
    return aspect is not None and ASPECTS[aspect].search(quote) is not None
