from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.evidence.quotes import (
    GROUNDED_THRESHOLD,
    QuoteMatch,
    allowed_edits,
    is_grounded,
    locate_quote,
    normalize_text,
    normalize_with_map,
    quote_score,
)

REVIEW = (
    "We stopped by on a Friday night. The carbonara was rich and silky, and the staff were "
    "genuinely friendly — our server even brought extra bread. Parking is a nightmare though."
)


def test_threshold_value() -> None:
    assert GROUNDED_THRESHOLD == 0.80


def test_exact_quote_scores_one_with_its_span() -> None:
    m = locate_quote("the carbonara was rich and silky", REVIEW)
    assert m.score == 1.0
    assert REVIEW[m.start : m.end] == "The carbonara was rich and silky"


def test_normalisation_of_case_quotes_dashes_and_punctuation() -> None:
    source = "Don’t miss the “tiramisu” — really!"
    assert normalize_text(source) == "dont miss the tiramisu really"
    assert normalize_text('DON\'T miss the "Tiramisu" - really') == "dont miss the tiramisu really"
    m = locate_quote('don\'t miss the "tiramisu" - really', source)
    assert m == QuoteMatch(1.0, 0, len(source) - 1)  # the final "!" is not part of the match


def test_nfkc_ligatures_fullwidth_and_combining_marks() -> None:
    assert normalize_text("ＧＲＥＡＴ ﬁsh") == "great fish"
    decomposed = "cafe\u0301 au lait"  # e + COMBINING ACUTE ACCENT
    m = locate_quote("Café", decomposed)
    assert m.score == 1.0
    assert decomposed[m.start : m.end] == "cafe\u0301"  # the combining mark is inside the span
    assert quote_score("Straße", "die strasse") == 1.0  # casefold: ß -> ss


def test_normalisation_is_idempotent_when_casefold_reorders_marks() -> None:
    # casefold("İ") = "i" + U+0307 (combining class 230), which lands before the nukta U+0ABC (class 7):
    # without the second NFKC the result would not be in canonical order and would change when re-normalised.
    once = normalize_text("İ\u0abc")
    assert once == "i\u0abc\u0307" and normalize_text(once) == once


def test_lone_surrogates_and_nul_do_not_break_matching() -> None:
    source = "bad \ud83d escape\x00 then the good part"
    m = locate_quote("the good part", source)
    assert m.score == 1.0 and source[m.start : m.end] == "the good part"
    assert normalize_with_map(source).text == normalize_text(source) == "bad \ud83d escape then the good part"


def test_regex_metacharacters_are_plain_text() -> None:
    source = "Lunch special: $5 (cheap!)* and [tasty]+ portions"
    assert quote_score("$5 (cheap!)*", source) == 1.0
    assert quote_score("[tasty]+", source) == 1.0
    assert quote_score(".*", source) == 0.0  # punctuation only: nothing to match


@pytest.mark.parametrize("quote", ["", "   ", "...", "“—”", "!?"])
def test_empty_or_punctuation_only_quote_scores_zero(quote: str) -> None:
    assert locate_quote(quote, REVIEW) == QuoteMatch(0.0, 0, 0)
    assert not is_grounded(quote, REVIEW)


def test_empty_source_scores_zero() -> None:
    assert locate_quote("carbonara", "") == QuoteMatch(0.0, 0, 0)
    assert locate_quote("carbonara", " ... ") == QuoteMatch(0.0, 0, 0)


def test_fuzzy_hand_computed_short_quote() -> None:
    # q = "staff were genuinly friendly" (n = 28), best window "staff were genuinely friendly":
    # Indel distance 1 (one deleted "e"). D(28) = 2·28·28/32 = 49, score = 1 - 1/49.
    m = locate_quote("staff were genuinly friendly", REVIEW)
    assert m.score == pytest.approx(1 - 1 / 49)
    assert REVIEW[m.start : m.end] == "staff were genuinely friendly"


def test_fuzzy_hand_computed_long_quote() -> None:
    # q = "our server even brougth extra bread" (n = 35 >= 32, so D = 2n = 70); against the window
    # "our server even brought extra bread" the swap "gth"/"ght" costs 2 indels: score = 1 - 2/70.
    m = locate_quote("our server even brougth extra bread", REVIEW)
    assert m.score == pytest.approx(1 - 2 / 70)
    assert REVIEW[m.start : m.end] == "our server even brought extra bread"


def test_quote_longer_than_source() -> None:
    # q = "the staff were friendly and helpful" (n = 35), s = "staff were friendly" (19 chars):
    # window = all of s, Indel = 35 - 19 = 16 deletions, D = 70, character score = 1 - 16/70 ≈ 0.771.
    # Word check: "the", "and", "helpful" of the quote are unaligned, 6 of the 9 words (6 quote + 3
    # window) are covered, so the score is capped at 0.80 · 6/9 ≈ 0.533 (was 0.771 before the cap).
    source = "Staff were friendly."
    m = locate_quote("the staff were friendly and helpful", source)
    assert m.score == pytest.approx(0.8 * 6 / 9)
    assert (m.start, m.end) == (0, 19)
    assert not is_grounded("the staff were friendly and helpful", source)


def test_tolerance_scales_with_length() -> None:
    # allowed Indel edits at 0.80 = floor(0.2 · min(2n, n²/16))
    assert [allowed_edits(n) for n in (1, 8, 9, 12, 13, 16, 20, 32, 100)] == [0, 0, 1, 1, 2, 3, 5, 12, 40]
    # 4-character quotes must match exactly: "food" is absent from "good fod", one edit away.
    assert quote_score("food", "good fod") == 0.0
    assert quote_score("food", "good food") == 1.0
    # 14 normalised characters tolerate one substitution (2 indels): score = 1 - 2/(2·14·14/32) ≈ 0.837
    assert quote_score("rich and silky", "rich and silly") == pytest.approx(1 - 2 / (2 * 14 * 14 / 32))
    assert is_grounded("rich and silky", "rich and silly")
    # ...but the same single substitution sinks a 6-character quote.
    assert not is_grounded("silky!", "it was silly")


def test_absent_quote_scores_low() -> None:
    assert quote_score("the pool was heated and spotless", REVIEW) < 0.6
    assert not is_grounded("the pool was heated and spotless", REVIEW)


def test_threshold_parameter() -> None:
    q = "staff were genuinly friendly"  # score 1 - 1/49 ≈ 0.98
    assert is_grounded(q, REVIEW, threshold=0.95)
    assert not is_grounded(q, REVIEW, threshold=0.99)


SUBSTRING_ALPHABET = string.ascii_letters + string.digits + " \n\t.,;:!?'\"-()[]$%" + "’“”—–éßﬁＧİ"


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_exact_substring_scores_one_with_the_right_span(data: st.DataObject) -> None:
    source = data.draw(st.text(alphabet=SUBSTRING_ALPHABET, min_size=1, max_size=200))
    i = data.draw(st.integers(0, len(source) - 1))
    j = data.draw(st.integers(i + 1, len(source)))
    quote = source[i:j]
    m = locate_quote(quote, source)
    if not normalize_text(quote):
        assert m == QuoteMatch(0.0, 0, 0)
        return
    assert m.score == 1.0
    assert 0 <= m.start < m.end <= len(source)
    assert normalize_text(source[m.start : m.end]) == normalize_text(quote)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_quote_scores_low_against_random_source(seed: int) -> None:
    rng = random.Random(seed)
    letters = string.ascii_lowercase + "      "
    quote = "".join(rng.choice(letters) for _ in range(rng.randint(32, 80)))
    source = "".join(rng.choice(letters) for _ in range(rng.randint(100, 800)))
    assert quote_score(quote, source) < GROUNDED_THRESHOLD


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=200))
def test_score_in_range_span_in_bounds_and_consistent(quote: str, source: str) -> None:
    m = locate_quote(quote, source)
    assert 0.0 <= m.score <= 1.0
    assert 0 <= m.start <= m.end <= len(source)
    assert m.score == quote_score(quote, source)
    assert (m.score > 0) == (m.end > m.start)


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=200)
    | st.text(st.characters(categories=["Cs", "Cc", "Cf", "Mn", "Po", "Pd", "Zs", "Ll", "Lu"]), max_size=50)
)
def test_map_matches_plain_normalisation(text: str) -> None:
    norm = normalize_with_map(text)
    assert norm.text == normalize_text(text)
    assert len(norm.starts) == len(norm.ends) == len(norm.text)
    assert all(0 <= a < b <= len(text) for a, b in zip(norm.starts, norm.ends, strict=True))
    assert norm.starts == sorted(norm.starts)
    assert normalize_text(norm.text) == norm.text  # idempotent


def test_evidence_core_doc_examples_run() -> None:
    # docs/evidence-core.md promises its examples run as written; keep it honest.
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "evidence-core.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    assert len(blocks) == 4  # quotes, citations, normalize, tokens
    for i, block in enumerate(blocks):
        exec(compile(block, f"evidence-core.md block {i}", "exec"), {})  # noqa: S102 - our own doc


WORDS = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=30), st.data())
def test_unique_word_aligned_substring_gets_exactly_its_span(words: list[str], data: st.DataObject) -> None:
    # Words joined by ", " — the quote is a run of whole words, so its span in the ORIGINAL source is
    # [offset of its first word, end of its last word); when it occurs once, no other span is right.
    source = ", ".join(words)
    i = data.draw(st.integers(0, len(words) - 1))
    j = data.draw(st.integers(i + 1, len(words)))
    quote = ", ".join(words[i:j])
    start = sum(len(w) + 2 for w in words[:i])
    m = locate_quote(quote, source)
    assert m.score == 1.0 and quote_score(quote, source) == 1.0
    ns, nq = normalize_text(source), normalize_text(quote)
    if sum(ns.startswith(nq, k) for k in range(len(ns))) == 1:  # unique, overlapping occurrences counted
        assert (m.start, m.end) == (start, start + len(quote))


REGEX_META = ".^$*+?{}[]\\|()"


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=REGEX_META + "ab ", min_size=1, max_size=40).filter(lambda q: any(c in "ab" for c in q)),
    st.text(alphabet=string.ascii_lowercase + " ", max_size=80),
    st.text(alphabet=string.ascii_lowercase + " ", max_size=80),
)
def test_regex_metacharacter_quotes_are_matched_literally(quote: str, left: str, right: str) -> None:
    # A quote of regex metacharacters around letters, embedded verbatim: found exactly, never a regex
    # error, and its span covers the normalised quote (punctuation may be trimmed at the edges).
    source = f"{left} {quote} {right}"
    m = locate_quote(quote, source)
    assert m.score == 1.0
    assert normalize_text(source[m.start : m.end]) == normalize_text(quote)


def test_punctuation_takes_its_combining_marks_along() -> None:
    """Deleting ':' must not bring two combining marks together out of canonical order (hypothesis found
    '𐍶:᳢': U+1CE2 has combining class 1, U+10376 class 230), or normalising is not idempotent."""
    text = "\U00010376:\u1ce2"
    assert normalize_text(text) == normalize_with_map(text).text == "\U00010376"
    assert normalize_text(normalize_text(text)) == normalize_text(text)
    assert normalize_text("a\u0301-\u0316b") == "\xe1b"  # NFKC composes á; the mark on "-" goes with "-"
    assert normalize_text("x \u0316") == "x \u0316"  # a mark after a space is kept


# -- the ASCII span map (locate_quote without the full offset map) ------------------------------------------
_ASCII_TEXT = st.text(alphabet=string.printable + "\x00\x01\x1c\x1f\x7f", max_size=80)


@given(_ASCII_TEXT)
def test_ascii_origin_equals_the_full_map(text: str) -> None:
    """For ASCII text the word table gives exactly ``normalize_with_map``'s start (and end) of every
    normalised character."""
    from groundtrace.core.evidence import quotes as quotes_module

    norm = normalize_with_map(text)
    assert len(norm.text) == len(norm.starts)
    for i in range(len(norm.text)):
        assert quotes_module._ascii_origin(text, i) == norm.starts[i], (text, i)
        assert norm.ends[i] == norm.starts[i] + 1


def _located_with_full_map(quote: str, source: str) -> tuple[float, int, int]:
    """locate_quote as computed through normalize_with_map (the path non-ASCII sources take)."""
    from groundtrace.core.evidence import quotes as quotes_module

    q = normalize_text(quote)
    score, a, b = quotes_module._match(q, source)
    if score <= 0.0:
        return (0.0, 0, 0)
    norm = normalize_with_map(source)
    if score == 1.0 and b == 0:
        a, b = quotes_module._exact_span(q, norm)
    return (score, norm.starts[a], norm.ends[b - 1])


@given(source=_ASCII_TEXT, data=st.data())
def test_ascii_sources_locate_like_the_full_map(source: str, data: st.DataObject) -> None:
    """Exact quotes (any substring) and edited ones (a character dropped or changed) get the same score
    and span as through the full offset map."""
    a = data.draw(st.integers(0, len(source)))
    b = data.draw(st.integers(a, len(source)))
    exact = source[a:b]
    edited = (
        exact[: len(exact) // 2]
        + data.draw(st.sampled_from(["", "x", ".", " "]))
        + exact[len(exact) // 2 + 1 :]
    )
    for quote in (exact, edited, source):
        assert tuple(locate_quote(quote, source)) == _located_with_full_map(quote, source), (quote, source)
