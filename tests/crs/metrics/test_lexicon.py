"""The 41-term attribute lexicon: data file checks, mention finding, KB support rules, bad files."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.crs.metrics.lexicon import LEXICON_SIZE, LexiconError, load_lexicon, parse_lexicon
from groundtrace.crs.schema import POI


@pytest.fixture(scope="module")
def lexicon():
    return load_lexicon()


def test_exactly_41_unique_terms(lexicon):
    assert LEXICON_SIZE == 41 and len(lexicon) == 41
    groups = {t.group for t in lexicon.terms.values()}
    assert {"cuisine", "ambiance", "amenity"} <= groups
    # no surface pattern belongs to two terms
    seen: dict[str, str] = {}
    for term in lexicon.terms.values():
        for p in term.patterns:
            key = p.lower().replace("-", " ")
            assert seen.setdefault(key, term.id) == term.id, f"{p!r} in {seen[key]} and {term.id}"


def test_mentions_are_case_insensitive_word_bounded_and_longest(lexicon):
    text = "Quiet patio, free Wi-Fi and bike parking; not a divey dive-bar. Quietly? Pastaria no."
    found = [(m.term, text[m.start : m.end]) for m in lexicon.mentions(text)]
    assert found == [
        ("quiet", "Quiet"),
        ("outdoor_seating", "patio"),
        ("wifi", "Wi-Fi"),
        ("bike_parking", "bike parking"),
        ("divey", "divey"),
        ("divey", "dive-bar"),
    ]  # fmt: skip  ("Quietly" and "Pastaria" are not words of the lexicon)


@pytest.mark.parametrize("variant", ["wifi", "wi-fi", "Wi Fi", "WI-FI"])
def test_hyphen_space_variants(lexicon, variant):
    assert [m.term for m in lexicon.mentions(f"has {variant}.")] == ["wifi"]


def _poi(**kw):
    base = {
        "poi_id": "X",
        "name": "X",
        "city": "C",
        "poi_type": "restaurant",
        "lat": 0.0,
        "lon": 0.0,
        "stars": 4,
        "review_count": 1,
    }
    return POI(**(base | kw))


def test_support_rules(lexicon):
    t = lexicon.terms
    italian = _poi(categories=["Pizza"])
    assert t["italian"].supported_by_kb(italian) and not t["mexican"].supported_by_kb(italian)
    quiet = _poi(
        attributes={"noise": "quiet", "wifi": "free", "ambience": ["romantic"], "good_for_kids": True}
    )
    assert t["quiet"].supported_by_kb(quiet) and not t["noisy"].supported_by_kb(quiet)
    assert t["wifi"].supported_by_kb(quiet) and t["romantic"].supported_by_kb(quiet)
    assert t["kid_friendly"].supported_by_kb(quiet) and not t["dog_friendly"].supported_by_kb(quiet)
    assert not t["wifi"].supported_by_kb(_poi(attributes={"wifi": "no"}))
    assert not t["romantic"].supported_by_kb(_poi())  # unknown attribute: not supported


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_mentions_are_ordered_disjoint_spans(text):
    lexicon = load_lexicon()
    ends = -1
    for m in lexicon.mentions(text):
        assert m.start >= ends and m.end > m.start
        ends = m.end
        assert m.term in lexicon.terms


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"nope": 1}, "'terms' list"),
        ({"terms": [{"group": "x"}]}, r"terms\[0\]: each term needs an 'id'"),
        ({"terms": [{"id": "a", "patterns": [], "support": [{"category_any": ["A"]}]}]},
         r"terms\[0\] \(a\): 'patterns'"),
        ({"terms": [{"id": "a", "patterns": ["a"], "support": [{"attribute": "colour", "equals": 1}]}]},
         "unknown attribute key 'colour'"),
        ({"terms": [{"id": "a", "patterns": ["a"], "support": [{"attribute": "wifi"}]}]}, "exactly one of"),
        ({"terms": [{"id": "a", "patterns": ["a"], "support": [{"category_any": ["A"]}]}] * 2},
         r"terms\[1\] \(a\): duplicate id"),
    ],
)  # fmt: skip
def test_malformed_lexicon_errors_name_the_entry(data, message):
    with pytest.raises(LexiconError, match=message):
        parse_lexicon(yaml.safe_load(yaml.safe_dump(data)))
