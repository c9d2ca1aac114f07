from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.citations import (
    QuotedSpan,
    Tag,
    find_quotes,
    find_tags,
    parse_citations,
    split_sentences,
    strip_tags,
)


def _sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("good [R3]", [("R3", 3)]),
        ("good [R1, R3]", [("R1", 1), ("R3", 3)]),
        ("good [R1,R3]", [("R1", 1), ("R3", 3)]),
        ("good [R1][R3]", [("R1", 1), ("R3", 3)]),
        ("good [ R2 ]", [("R2", 2)]),
        ("good [R1; R12]", [("R1", 1), ("R12", 12)]),
        ("not tags: [R] [r1] [R1 R2] R3 [1] [X2]", []),
    ],
)
def test_find_tags_formats(text: str, labels: list[tuple[str, int]]) -> None:
    tags = find_tags(text)
    assert [(t.label, t.number) for t in tags] == labels
    assert all(text[t.start : t.end] == t.label for t in tags)


def test_each_label_has_its_own_span() -> None:
    text = "ok [R1, R3]"
    assert find_tags(text) == [Tag("R1", 1, 4, 6), Tag("R3", 3, 8, 10)]


def test_custom_prefix() -> None:
    assert [t.number for t in find_tags("see [S2, S5] and [R1]", prefix="S")] == [2, 5]


def test_strip_tags() -> None:
    assert (
        strip_tags('It was "great" [R1]. Staff [R2, R3] were nice. [R4]')
        == 'It was "great". Staff were nice.'
    )


def test_find_quotes_marks_and_apostrophes() -> None:
    text = "It's “cozy”, \"quiet\" and 'friendly staff' — not the chefs' '90s decor."
    assert [q.text for q in find_quotes(text)] == ["cozy", "quiet", "friendly staff"]
    assert all(text[q.start : q.end] == q.text for q in find_quotes(text))
    assert find_quotes('an empty "" and a lone " mark') == []
    assert [q.text for q in find_quotes("'don't miss it' [R1]")] == ["don't miss it"]


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (  # abbreviations, decimals, a terminator inside closing quotes
            'Dr. Smith rated it 4.5 stars. We loved St. Louis! She said "Go now." Then left.',
            ["Dr. Smith rated it 4.5 stars.", "We loved St. Louis!", 'She said "Go now."', "Then left."],
        ),
        (  # no split inside a quote; a tag after the punctuation stays with its sentence
            '"Best pasta ever. Go!" [R1] Next one. It was "great." [R2] Then e.g. the pool... was fine.',
            [
                '"Best pasta ever. Go!" [R1]',
                "Next one.",
                'It was "great." [R2]',
                "Then e.g. the pool... was fine.",
            ],
        ),
        (  # lines and list markers
            "Top picks:\n1. Pasta Place: great [R2]\n- Staff: nice [R3]\nRoom No. 5 was fine.",
            ["Top picks:", "1. Pasta Place: great [R2]", "- Staff: nice [R3]", "Room No. 5 was fine."],
        ),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert _sentences(text) == sentences


def test_parse_tag_placement_variants() -> None:
    claims = parse_citations(
        'The pasta was "great." [R1] The staff were friendly [R2]. Try the "tiramisu" [R3].'
    )
    assert [(c.text, [q.text for q in c.quotes], c.numbers) for c in claims] == [
        ('The pasta was "great."', ["great."], [1]),
        ("The staff were friendly.", [], [2]),
        ('Try the "tiramisu".', ["tiramisu"], [3]),
    ]


def test_each_tag_group_cites_the_quotes_before_it() -> None:
    text = 'Parking was "easy" [R3], and “cheap” [R4][R5] but slow, and "loud".'
    claims = parse_citations(text)
    assert [(c.text, [q.text for q in c.quotes], c.numbers) for c in claims] == [
        ('Parking was "easy"', ["easy"], [3]),
        ("and “cheap”", ["cheap"], [4, 5]),
        ('but slow, and "loud".', ["loud"], []),  # text with a quote after the last tag: untagged claim
    ]
    assert text[claims[0].start : claims[0].end] == 'Parking was "easy" [R3]'
    assert claims[1].quotes == [QuotedSpan("cheap", 30, 35)]


def test_untagged_sentences_are_claims_too() -> None:
    claims = parse_citations("Great location. The rooms are clean [R1]. Breakfast is included.")
    assert [(c.text, c.numbers) for c in claims] == [
        ("Great location.", []),
        ("The rooms are clean.", [1]),
        ("Breakfast is included.", []),
    ]


def test_leading_and_lone_tags_are_not_lost() -> None:
    claims = parse_citations("[R1] Great spot.\n[R2]")
    assert [(c.text, c.numbers) for c in claims] == [("Great spot.", [1]), ("", [2])]


def test_empty_text() -> None:
    assert parse_citations("") == []
    assert split_sentences("   \n ") == []


WORDS = [
    "pasta",
    "staff",
    "view",
    "quiet",
    "cozy",
    "wine",
    "pool",
    "rooms",
    "clean",
    "great",
    "noisy",
    "cheap",
]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)


def _render_tags(numbers: list[int], style: int) -> str:
    if style == 0:
        return "[" + ", ".join(f"R{n}" for n in numbers) + "]"
    if style == 1:
        return "[" + ",".join(f"R{n}" for n in numbers) + "]"
    if style == 2:
        return "".join(f"[R{n}]" for n in numbers)
    return "".join(f"[ R{n} ]" for n in numbers)


claim_specs = st.tuples(
    words,  # lead
    st.one_of(st.none(), words),  # quote
    st.lists(st.integers(1, 99), max_size=3),  # tag numbers
    st.sampled_from(["inside", "outside", "after-quote-punct"]),  # tag placement
    st.integers(0, 3),  # tag style
    st.sampled_from([('"', '"'), ("“", "”")]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(claim_specs, min_size=1, max_size=5))
def test_round_trip(specs: list[tuple]) -> None:
    rendered, expected = [], []
    for lead, quote, numbers, placement, style, (op, cl) in specs:
        lead = lead.capitalize()
        tags = " " + _render_tags(numbers, style) if numbers else ""
        if quote is None:
            body = f"{lead}{tags}." if placement == "inside" else f"{lead}.{tags}"
            text, quotes = f"{lead}.", []
        elif placement == "after-quote-punct":
            body = f"{lead} {op}{quote}.{cl}{tags}"
            text, quotes = f"{lead} {op}{quote}.{cl}", [f"{quote}."]
        else:
            body = (
                f"{lead} {op}{quote}{cl}{tags}."
                if placement == "inside"
                else f"{lead} {op}{quote}{cl}.{tags}"
            )
            text, quotes = f"{lead} {op}{quote}{cl}.", [quote]
        rendered.append(body)
        expected.append((text, quotes, numbers))
    full = " ".join(rendered)
    claims = parse_citations(full)
    assert [(c.text, [q.text for q in c.quotes], c.numbers) for c in claims] == expected
    for claim in claims:
        assert all(full[q.start : q.end] == q.text for q in claim.quotes)
        assert all(full[t.start : t.end] == t.label for t in claim.tags)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab .!?\"'“”‘’[]R12,;\n-:É")), max_size=120) | st.text(max_size=120)
)
def test_never_crashes_and_keeps_invariants(text: str) -> None:
    spans = split_sentences(text)
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(b1 <= a2 for (_, b1), (a2, _) in itertools.pairwise(spans))
    assert all(text[a:b] == text[a:b].strip() for a, b in spans)
    covered = {i for a, b in spans for i in range(a, b)}
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())

    claims = parse_citations(text)
    assert [t for c in claims for t in c.tags] == find_tags(text)  # every tag in exactly one claim
    assert all(b1 <= a2 for c1, c2 in itertools.pairwise(claims) for b1, a2 in [(c1.end, c2.start)])
    for claim in claims:
        assert 0 <= claim.start <= claim.end <= len(text)
        assert all(claim.start <= q.start <= q.end <= claim.end for q in claim.quotes)
        assert all(text[q.start : q.end] == q.text for q in claim.quotes)
