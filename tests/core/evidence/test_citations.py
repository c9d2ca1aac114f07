from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.citations_v1 import (  # the frozen pre-rewrite parser, shared with the benchmark
    _old_find_quotes,
    _old_find_tags,
    _old_parse_citations,
    _old_split_sentences,
    _old_strip_tags,
)
from groundtrace.core.evidence.citations import (
    CitedClaim,
    QuotedSpan,
    Tag,
    TagGroup,
    find_quotes,
    find_tag_groups,
    find_tags,
    parse_citations,
    split_sentences,
    strip_tags,
)
from tests.conftest import FIXTURES


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


# -- tag groups ---------------------------------------------------------------------------------------


def test_find_tag_groups_spans() -> None:
    text = "a [R1, R3] b [R2][R4] c [ R5 ;R6 ] [r7] [R8"
    groups = find_tag_groups(text)
    assert [(text[g.start : g.end], [t.number for t in g.tags]) for g in groups] == [
        ("[R1, R3]", [1, 3]),
        ("[R2]", [2]),  # adjacent brackets are two groups
        ("[R4]", [4]),
        ("[ R5 ;R6 ]", [5, 6]),
    ]
    assert groups[0] == TagGroup(2, 10, [Tag("R1", 1, 3, 5), Tag("R3", 3, 7, 9)])
    assert find_tag_groups("no tags here") == []
    assert [g.tags[0].label for g in find_tag_groups("[S2] [R1]", prefix="S")] == ["S2"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("R S12;, []\nx")), max_size=80))
def test_find_tag_groups_agree_with_find_tags(text: str) -> None:
    groups = find_tag_groups(text)
    assert [t for g in groups for t in g.tags] == find_tags(text)
    for g in groups:
        assert text[g.start] == "[" and text[g.end - 1] == "]"
        assert g.start < g.tags[0].start and g.tags[-1].end < g.end
        # the group is the brackets around each of its labels (how crs.metrics._evidence derives it)
        assert all(text.rfind("[", 0, t.start) == g.start for t in g.tags)
        assert all(text.find("]", t.end) + 1 == g.end for t in g.tags)
    assert all(g1.end <= g2.start for g1, g2 in itertools.pairwise(groups))


# -- behaviour pinned before the O(n log n) rewrite ----------------------------------------------------
# golden.json holds outputs of the implementation before the rewrite (tests/fixtures/citations/
# make_golden.py, run at that commit); the frozen copy below is that implementation, verbatim but for
# names and docstrings, so hypothesis can compare old and new on inputs nobody wrote down.

GOLDEN = FIXTURES / "citations" / "golden.json"


def _outputs(text: str) -> dict:
    return {
        "tags": [list(t) for t in find_tags(text)],
        "strip": strip_tags(text),
        "quotes": [list(q) for q in find_quotes(text)],
        "sentences": [list(s) for s in split_sentences(text)],
        "claims": [
            [c.text, c.start, c.end, [list(q) for q in c.quotes], [list(t) for t in c.tags]]
            for c in parse_citations(text)
        ],
    }


def test_golden_outputs_unchanged() -> None:
    cases = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert {c["kind"] for c in cases} == {"demo", "handwritten", "random"} and len(cases) >= 250
    assert sum(len(c["claims"]) for c in cases) > 700  # the corpus exercises the claim builder
    mismatched = [
        (i, c["text"][:60])
        for i, c in enumerate(cases)
        if _outputs(c["text"]) != {k: c[k] for k in ("tags", "strip", "quotes", "sentences", "claims")}
    ]
    assert mismatched == []


_FRAGMENTS = [
    "great", "the staff", "Dr.", "St.", "No.", "p.", "e.g.", "i.e.", "vs.", "J.", "4.5", "1.", "10", "²",
    '"', "“", "”", "„", "«", "»", "'", "‘", "’", "don't", "'90s", "chefs'", "U.S.A.", "approx.",
    ".", "!", "?", "…", "...", "!!!", "[R1]", "[R2, R3]", "[R4][R5]", "[ R6 ]", "[R7;R8]", "(R9)",
    "[R]", "[r1]", "[S1]", ",", ";", ":", "-", "*", "•", "\n", " ", "  ", "\t", "\u00a0", "Quiet", "É", "é",
    "x",
]  # fmt: skip
fragment_texts = st.lists(st.sampled_from(_FRAGMENTS), max_size=30).map("".join)
texts = (
    fragment_texts
    | st.text(max_size=150)
    | st.text(alphabet=st.sampled_from(list("ab .!?\"'“”‘’[]R12,;\n-:É")))
)


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(["R", "S"]))
def test_same_as_frozen_implementation(text: str, prefix: str) -> None:
    assert find_tags(text, prefix) == _old_find_tags(text, prefix)
    assert strip_tags(text, prefix) == _old_strip_tags(text, prefix)
    assert find_quotes(text) == _old_find_quotes(text)
    assert split_sentences(text) == _old_split_sentences(text)
    new, old = parse_citations(text, prefix), _old_parse_citations(text, prefix)
    assert new == old  # NamedTuples: text, span, quotes and tags all equal
    assert all(isinstance(c, CitedClaim) for c in new)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=50, max_size=200).map("".join))
def test_same_as_frozen_implementation_on_long_lines(text: str) -> None:
    text = text.replace("\n", " ")  # one long line: the case the old splitter was quadratic on
    assert parse_citations(text) == _old_parse_citations(text)


def test_abbreviation_is_the_whole_word_before_the_period() -> None:
    # the word is the whole letters-and-inner-dots run before the period (looked for in the 40
    # characters before it: any 40-character suffix is longer than every listed abbreviation)
    long_word = "x" * 39 + "Dr"
    assert _sentences(f"See {long_word}. Next") == [f"See {long_word}.", "Next"]
    assert _sentences("See Dr. Next") == ["See Dr. Next"]
    assert _sentences("See e.g. Next. And xe.g. Next") == ["See e.g. Next.", "And xe.g.", "Next"]
    assert _sentences("Go to p. 12. Then p. Two.") == ["Go to p. 12.", "Then p.", "Two."]
    assert _sentences("Met J. Doe. Then A.. Next") == ["Met J. Doe.", "Then A..", "Next"]


def test_regex_classes_match_str_methods_on_every_code_point() -> None:
    # the parser replaces str.isalnum()/str.isspace() calls by these regex classes
    alnum, space = re.compile(r"[^\W_]"), re.compile(r"\s")
    everything = "".join(map(chr, range(0x110000)))
    assert "".join(alnum.findall(everything)) == "".join(filter(str.isalnum, everything))
    assert "".join(space.findall(everything)) == "".join(filter(str.isspace, everything))
