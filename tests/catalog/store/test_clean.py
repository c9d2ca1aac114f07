"""The store's text cleaning: the C-encoded shortcut (``is_clean``) decides exactly like the walk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.catalog.store.clean import (
    _clean_json,
    _text_problems,
    clean_json,
    clean_rows,
    is_clean,
    text_problems,
)

# text drawn with NULs, lone surrogates and backslash-u sequences mixed into ordinary characters
_TEXT = st.lists(
    st.sampled_from(["a", "é", " ", "\x00", "\ud800", "\udfff", "\\u0000", "\\", "u", "0", '"', "\n"]),
    max_size=8,
).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_shortcut_equals_the_walk(value: object) -> None:
    assert clean_json(value) == _clean_json(value)
    assert text_problems(value) == _text_problems(value)
    if is_clean(value):
        assert _clean_json(value) == value
        assert _text_problems(value) == []


def test_dirty_values_are_never_called_clean() -> None:
    assert not is_clean({"a": ["x", {"b": "nul\x00here"}]})
    assert not is_clean({"key\x00": 1})
    assert not is_clean(["lone \ud83d surrogate"])
    assert clean_json({"key\x00": ["lone \ud83d"]}) == {"key": ["lone \ufffd"]}
    assert text_problems({"t": "a\x00b"}) == ["t: 1 NUL character removed"]


def test_clean_values_pass_and_literal_escapes_are_kept() -> None:
    value = {"title": "Oat milk 1 L", "specs": {"Flavor": "plain"}, "n": [1, 2.5, None, True]}
    assert is_clean(value)
    assert clean_json(value) is value
    literal = {"raw": "a backslash-u escape written out: \\u0000"}  # no NUL in it
    assert not is_clean(literal)  # the shortcut errs towards the walk ...
    assert clean_json(literal) == literal  # ... which changes nothing
    assert text_problems(literal) == []


def test_clean_rows_cuts_long_strings_on_both_paths() -> None:
    from datetime import UTC, datetime

    from sqlalchemy import JSON, Column, DateTime, MetaData, String, Table

    table = Table(
        "t",
        MetaData(),
        Column("id", String(255), primary_key=True),
        Column("short", String(5)),
        Column("at", DateTime),
        Column("data", JSON),
    )
    now = datetime.now(UTC)
    clean_row = {"id": "x" * 300, "short": "abcdefgh", "at": now, "data": {"k": ["v"]}}
    dirty_row = {"id": "y", "short": "ab\x00cdefgh", "at": now, "data": {"k\x00": ["\ud800"]}}
    assert clean_rows(table, [clean_row, dirty_row]) == [
        {"id": "x" * 300, "short": "abcde", "at": now, "data": {"k": ["v"]}},  # key columns are never cut
        {"id": "y", "short": "abcde", "at": now, "data": {"k": ["\ufffd"]}},
    ]
