"""The placeholder grammar of redacted releases (``crs/dataset/placeholders.py``): write, escape, parse."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.dataset.placeholders import (
    Placeholder,
    RedactionError,
    escape_text,
    placeholder_text,
    split_redacted,
)


def test_placeholder_and_escape_grammar() -> None:
    p = Placeholder(review_id="rv:1", start=3, end=9, edit=2)
    assert placeholder_text(p) == "⟦Q:rv:1:3-9~2⟧"  # a ':' in the id is fine: offsets are matched last
    text = escape_text("a ⟦b⟧ ") + placeholder_text(p) + escape_text(" ⟦⟦Q:x:1-2⟧")
    assert split_redacted(text) == ["a ⟦b⟧ ", p, " ⟦⟦Q:x:1-2⟧"]
    with pytest.raises(RedactionError, match="malformed placeholder"):
        split_redacted("a lone ⟦ bracket")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab ⟦⟧Q:~-019"), max_size=40))
def test_escaped_text_parses_back_to_itself(text: str) -> None:
    parts = split_redacted(escape_text(text))
    assert "".join(p for p in parts if isinstance(p, str)) == text
    assert not any(isinstance(p, Placeholder) for p in parts)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet=st.sampled_from("ab ⟦⟧Q:~-0"), min_size=1, max_size=8),
            st.builds(
                Placeholder,
                review_id=st.text(alphabet=st.sampled_from("rv:-_1é"), min_size=1, max_size=6),
                start=st.integers(0, 999),
                end=st.integers(0, 999),
                edit=st.none() | st.integers(0, 9),
            ),
        ),
        max_size=6,
    )
)
def test_written_parts_parse_back(parts: list) -> None:
    """Any sequence of literal text and placeholders, written with escapes, parses back to the same
    placeholders and the same text between them."""
    text = "".join(placeholder_text(p) if isinstance(p, Placeholder) else escape_text(p) for p in parts)
    parsed = split_redacted(text)
    assert [p for p in parsed if isinstance(p, Placeholder)] == [
        p for p in parts if isinstance(p, Placeholder)
    ]
    literal = "".join(p for p in parts if isinstance(p, str))
    assert "".join(p for p in parsed if isinstance(p, str)) == literal
