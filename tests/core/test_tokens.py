from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groundtrace.core.tokens import count_tokens, token_spans, tokenize


def test_documented_example() -> None:
    # The module docstring's example, token by token.
    assert tokenize("Great wi-fi, don't miss it! [R1]") == [
        "Great", "wi-fi", ",", "don't", "miss", "it", "!", "[", "R1", "]",
    ]
    assert count_tokens("8.5 stars") == 4  # "8", ".", "5", "stars"


@given(st.text())
def test_count_matches_tokenize_and_spans(text: str) -> None:
    tokens = tokenize(text)
    assert count_tokens(text) == len(tokens)
    assert [text[a:b] for a, b in token_spans(text)] == tokens
    assert all(not t.isspace() and t for t in tokens)
