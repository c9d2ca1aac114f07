"""The scoring fast paths equal the code they replaced (kept here as the oracle), on generated input.

Each kernel sped up for issue 16 (loading + scoring 10k dialogues) gives the old value on every input:
the scope before a quote, the word count of a quote, the per-quote facts of the support rules, the
normalised user text of a turn, the ASCII scan of the attribute lexicon, the citation-token count of CD
and the tag groups shared between ``tag_groups`` and ``tagged_claims``.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.evidence.citations import parse_citations
from groundtrace.core.evidence.quotes import normalize_text
from groundtrace.core.evidence.tokens import TOKEN_PATTERN, token_spans
from groundtrace.crs.metrics._evidence import (
    Claim,
    QuotedCitation,
    TagGroup,
    find_groups_and_claims,
    find_tag_groups,
)
from groundtrace.crs.metrics.context import DialogueState, RunState
from groundtrace.crs.metrics.grounding import tokens_inside
from groundtrace.crs.metrics.lexicon import _WORD_START, Lexicon, Mention, load_lexicon
from groundtrace.crs.metrics.support import (
    CUES,
    MAX_QUOTE_CHARS,
    MIN_QUOTE_WORDS,
    SCOPE_WORDS,
    cue_words,
    quote_facts,
    scope_before,
    word_count,
)

# -- the replaced code -------------------------------------------------------------------------------
_BOUNDARY = re.compile(r"[.,;:!?()\[\]{}\"“”„«»‘’'\n—–]")


def old_scope_before(text: str, quote_start: int) -> list[str]:
    before = text[max(0, quote_start - 1 - 400) : max(0, quote_start - 1)]
    cuts = [m.end() for m in _BOUNDARY.finditer(before)]
    if cuts:
        before = before[cuts[-1] :]
    words = [m.group() for m in TOKEN_PATTERN.finditer(before) if any(ch.isalnum() for ch in m.group())]
    return words[-SCOPE_WORDS:]


def old_word_count(text: str) -> int:
    return sum(1 for m in TOKEN_PATTERN.finditer(text) if any(ch.isalnum() for ch in m.group()))


def old_mentions(lexicon: Lexicon, text: str) -> list[Mention]:
    out: list[Mention] = []
    resume = 0
    for w in _WORD_START.finditer(text):
        start = w.start()
        if start < resume:
            continue
        candidates = lexicon._buckets.get(w.group().lower())
        if not candidates:
            continue
        best_end, best_term = -1, ""
        for regex, term in candidates:
            m = regex.match(text, start)
            if m is not None and m.end() > best_end:
                best_end, best_term = m.end(), term
        if best_end > 0:
            out.append(Mention(best_term, start, best_end))
            resume = best_end
    return out


def old_tokens_inside(spans: list[tuple[int, int]], regions: list[tuple[int, int]]) -> int:
    inside, r = 0, 0
    for s, e in spans:  # both sorted: two pointers
        while r < len(regions) and regions[r][1] <= s:
            r += 1
        if r < len(regions) and regions[r][0] <= s and e <= regions[r][1]:
            inside += 1
    return inside


def old_find_claims(text: str) -> list[Claim]:
    if "[" not in text:
        return []
    out = []
    for c in parse_citations(text):
        if not c.tags:
            continue
        tags = tuple(t.label for t in c.tags)
        quotes = tuple(QuotedCitation(q.text, q.start, q.end, tags) for q in c.quotes)
        out.append(Claim(c.text, c.start, c.end, tags, quotes))
    return out


# -- generated text ----------------------------------------------------------------------------------
LEXICON = load_lexicon()
_LEXICON_WORDS = sorted(
    {w for t in LEXICON.terms.values() for p in t.patterns for w in re.split(r"[-\s]+", p)}
)
_PIECES = [
    *_LEXICON_WORDS, *sorted(CUES), "the", "This", "THE", "wi-fi", "Wi Fi", "don't", "isn’t", "_", "__x",
    "é", "ﬁ", "İ", "K", "ſ", "1.5", "8", "café", "x_y", "no-", "-", "—", "“", "”", '"', "'", "‘", "’",
    "[R1]", "[R1, R2]", "[R3][R4]", "(", ")", ".", ",", ";", ":", "!", "?", " ", " ", " ", "\n", "\t",
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=60).map("".join) | st.text(max_size=80)
spaced = st.lists(st.sampled_from(_PIECES), max_size=40).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(texts | spaced, st.integers(0, 200))
def test_scope_before_and_word_count_equal_the_old_scan(text: str, at: int) -> None:
    at = min(at, len(text) + 1)
    assert scope_before(text, at) == old_scope_before(text, at)
    assert word_count(text) == old_word_count(text)


@settings(max_examples=300, deadline=None)
@given(texts | spaced)
def test_quote_facts_are_the_support_rules_of_the_quote_alone(quote: str) -> None:
    reason, norm, cued = quote_facts(quote)
    expected = (
        "quote_too_long"
        if len(quote) > MAX_QUOTE_CHARS
        else "quote_too_short"
        if old_word_count(quote) < MIN_QUOTE_WORDS
        else ""
    )
    assert (reason, norm, cued) == (expected, normalize_text(quote), bool(cue_words(quote)))
    assert quote_facts("word " * 1001)[0] == "quote_too_long"


@settings(max_examples=400, deadline=None)
@given(texts | spaced)
def test_lexicon_scan_of_pattern_starts_equals_the_every_word_scan(text: str) -> None:
    assert LEXICON._starts is not None
    assert LEXICON.mentions(text) == old_mentions(LEXICON, text)
    upper = text.upper()
    assert LEXICON.mentions(upper) == old_mentions(LEXICON, upper)


def test_lexicon_scan_on_known_mentions() -> None:
    text = "Free WI-FI, wifi and Wi Fi; no wifi-enabled outdoor seating? The OUTDOOR-seating · 4.5★ ſtreet."
    assert LEXICON.mentions(text) == old_mentions(LEXICON, text)
    assert len(LEXICON.mentions(text)) >= 4


@st.composite
def spans_and_regions(draw: st.DrawFn) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    cuts = sorted(set(draw(st.lists(st.integers(0, 200), max_size=60))))
    spans = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if a < b]
    edges = sorted(set(draw(st.lists(st.integers(0, 210), max_size=12))))
    regions = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=False) if a < b]
    merged: list[tuple[int, int]] = []  # as citation_regions merges them
    for a, b in regions:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return spans, merged


@settings(max_examples=500, deadline=None)
@given(spans_and_regions())
def test_tokens_inside_equals_the_two_pointer_count(case: tuple[list, list]) -> None:  # type: ignore[type-arg]
    spans, regions = case
    assert tokens_inside(spans, regions) == old_tokens_inside(spans, regions)


@settings(max_examples=200, deadline=None)
@given(texts | spaced)
def test_tokens_inside_on_real_token_spans(text: str) -> None:
    spans = token_spans(text)
    regions = [(m.start() + 1, m.end() - 1) for m in re.finditer(r'"[^"]*"|\[[^\]]*\]', text)]
    regions = [r for r in regions if r[0] < r[1]]
    assert tokens_inside(spans, regions) == old_tokens_inside(spans, regions)
    assert bisect_left([s for s, _ in spans], len(text) + 1) == len(spans)


@settings(max_examples=300, deadline=None)
@given(texts | spaced)
def test_groups_and_claims_found_once_equal_the_two_parses(text: str) -> None:
    groups, claims = find_groups_and_claims(text)
    assert groups == find_tag_groups(text)
    assert claims == old_find_claims(text)
    assert all(isinstance(g, TagGroup) for g in groups)


class _Turn:
    def __init__(self, index: int, role: str, text: str) -> None:
        self.index, self.role, self.text = index, role, text


class _Dialogue:
    def __init__(self, turns: list[_Turn]) -> None:
        self.turns = turns
        self.review_refs: dict = {}  # type: ignore[type-arg]
        self.anchor = None
        self.legs: list = []  # type: ignore[type-arg]


@settings(max_examples=300, deadline=None)
@given(st.lists(texts | spaced, max_size=6), st.integers(0, 14))
def test_user_text_of_a_turn_is_the_normalised_join(user_texts: list[str], index: int) -> None:
    turns = []
    for i, text in enumerate(user_texts):
        turns += [_Turn(2 * i, "user", text), _Turn(2 * i + 1, "system", "ignored [R1]")]
    state = DialogueState(_Dialogue(turns), RunState(None, LEXICON, "closed"))  # type: ignore[arg-type]
    expected = normalize_text("\n".join(t.text for t in turns if t.role == "user" and t.index < index))
    assert state.user_norm(index) == expected
    state.release()
    assert state.user_norm(index) == expected
