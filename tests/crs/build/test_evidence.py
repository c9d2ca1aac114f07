"""Review evidence: sentence splitting and the negation-aware support test (``crs/build/evidence.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from groundtrace.crs.build.evidence import split_sentences, supports
from groundtrace.crs.schema import Constraint


def test_split_sentences() -> None:
    text = "Great tacos! Service was slow. Would return?  Yes."
    assert [text[a:b] for a, b in split_sentences(text)] == [
        "Great tacos!",
        "Service was slow.",
        "Would return?",
        "Yes.",
    ]


@given(
    st.sampled_from(["not", "never", "no"]), st.sampled_from(["quiet", "romantic", "wheelchair accessible"])
)
def test_negated_sentences_never_support(neg: str, word: str) -> None:
    kinds = {
        "quiet": ("noise_max", "quiet"),
        "romantic": ("ambience", "romantic"),
        "wheelchair accessible": ("amenity", "wheelchair_accessible"),
    }
    kind, value = kinds[word]
    c = Constraint(kind=kind, value=value, label=word)
    assert supports(f"It is {word} here.", c)
    assert not supports(f"It is {neg} {word} here.", c)
