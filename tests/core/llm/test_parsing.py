"""JSON extraction from model answers: examples and hypothesis properties."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.llm.parsing import JSONExtractionError, extract_json_object, strip_fences

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
awkward_text = st.text(alphabet='ab{}[]`"\\:, \n', max_size=12)
objects = st.dictionaries(st.text(max_size=8) | awkward_text, json_values | awkward_text, max_size=4)
prose = st.text(alphabet=st.characters(blacklist_characters="{`"), max_size=30)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": [1, {"b": 2}]}\n```', {"a": [1, {"b": 2}]}),
        ('Sure! Here it is: {"a": "x}y"} Hope this helps.', {"a": "x}y"}),
        ('Here {not json} and then {"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}', {"a": 1}),  # unclosed fence (answer cut after the object)
        ('{"outer": {"inner": true}}', {"outer": {"inner": True}}),
        ('```json\n{"code": "```py x```"}\n```', {"code": "```py x```"}),  # backticks inside a string
    ],
)
def test_examples(text: str, expected: dict) -> None:
    assert extract_json_object(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no braces at all", "no JSON object"),
        ('{"a": {"b": 1}, "c": ', "invalid JSON"),  # truncated outer object: its nested one is not taken
        ("[1, 2, 3]", "no JSON object"),
        ("", "no JSON object"),
    ],
)
def test_failures_say_why(text: str, reason: str) -> None:
    with pytest.raises(JSONExtractionError, match=reason):
        extract_json_object(text)


def test_strip_fences_leaves_plain_text_alone() -> None:
    assert strip_fences("plain") == "plain"
    assert strip_fences("a ```json\nX\n``` b") == "X\n"


@settings(max_examples=150, deadline=None)
@given(obj=objects, before=prose, after=prose, fenced=st.booleans(), indent=st.sampled_from([None, 2]))
def test_any_object_survives_prose_and_fences(
    obj: dict, before: str, after: str, fenced: bool, indent
) -> None:
    body = json.dumps(obj, indent=indent)
    text = f"{before}```json\n{body}\n```{after}" if fenced else f"{before}{body}{after}"
    assert extract_json_object(text) == obj


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=60))
def test_any_text_gives_a_dict_or_a_clear_error(text: str) -> None:
    try:
        value = extract_json_object(text)
    except JSONExtractionError as exc:
        assert str(exc)
    else:
        assert isinstance(value, dict)


def test_backticks_inside_a_json_string_are_not_a_fence() -> None:
    """Hypothesis found it: the '```' key opened a "fence" whose body held the nested '{}' string."""
    text = '{"0": "", "```": "", "": "{}"}'
    assert extract_json_object(text) == {"0": "", "```": "", "": "{}"}
    # a real fence after an unrelated object still wins
    assert extract_json_object('e.g. {"a": 1}. Answer:\n```json\n{"b": 2}\n```') == {"b": 2}
