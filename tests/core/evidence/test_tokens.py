from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from groundtrace.core.evidence.tokens import count_tokens, token_spans, tokenize


def test_documented_example() -> None:
    # The module docstring's example, token by token.
    assert tokenize("Great wi-fi, don't miss it! [R1]") == [
        "Great",
        "wi-fi",
        ",",
        "don't",
        "miss",
        "it",
        "!",
        "[",
        "R1",
        "]",
    ]
    assert count_tokens("8.5 stars") == 4  # "8", ".", "5", "stars"


@given(st.text())
def test_count_matches_tokenize_and_spans(text: str) -> None:
    tokens = tokenize(text)
    assert count_tokens(text) == len(tokens)
    assert [text[a:b] for a, b in token_spans(text)] == tokens
    assert all(not t.isspace() and t for t in tokens)


@given(st.text())
def test_tokens_cover_every_non_space_character_once(text: str) -> None:
    # Spans are disjoint and increasing, and together cover exactly the non-whitespace characters.
    spans = token_spans(text)
    assert all(a < b <= c for (a, b), (c, _) in pairwise(spans))
    covered = "".join(text[a:b] for a, b in spans)
    assert covered == "".join(ch for ch in text if not ch.isspace())


@given(st.lists(st.sampled_from(["wi-fi", "don't", "R1", "8", ".", "!", "café", "[", "]"]), max_size=20))
def test_space_separated_tokens_round_trip(tokens: list[str]) -> None:
    assert tokenize(" ".join(tokens)) == tokens
