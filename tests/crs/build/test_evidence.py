"""Review evidence: sentence splitting and the negation-aware support test (``crs/build/evidence.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.crs.build.evidence import Sentence, quotable, reads_as_complaint, split_sentences, supports
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


@pytest.mark.parametrize(
    "text",
    [
        "Would it be a hard fix?",  # a question means nothing out of context
        "The Vegan dillema.",  # a title, not a sentence
        ", and affordable prices, i will most definitely be back.",  # a split artifact
        "The drinks:\nCocktails and wines are all $7.",  # runs over a line break
        "For $20, you can easily have dinner and a couple beers (check their specials!",  # cut in a bracket
        "However, expensive and only filled us up each with about 1 1/2 glasses.",  # points back
        "Which, by the way, is the best ranch I've had.",
    ],
)
def test_sentences_that_do_not_read_alone_are_not_quotable(text: str) -> None:
    assert not quotable(text)
    assert quotable("Cute little place with plenty of parking.")
    assert quotable("Although this place is pricey, it's a beautiful place for a night out.")
    assert quotable("Butter chicken was the highlight.")


@pytest.mark.parametrize(
    ("sentence", "constraint"),
    [  # real yelp_dense sentences the old lexicon took as support
        ("I prefer the hole in the wall places a heck of a lot more.", ("amenity", "parking")),
        ("Will continue to go here and explore their menu.", ("amenity", "takeout")),
        ("My family is from Louisiana and the red beans are great.", ("amenity", "good_for_kids")),
        ("We went as a walk in and the hostess told us it was a 2 hr wait!", ("max_distance_km", 2.0)),
        (
            "One customer loudly had a blue-tooth conversation, so everybody listened.",
            ("noise_max", "average"),
        ),
        # found reading a 1,000-dialogue yelp_dense build: a word inside another word, a non-seating
        # "outside", a conversation that is not about noise
        (
            "In response to the pandemic you now order online and pickup outside of the cafe.",
            ("amenity", "outdoor_seating"),
        ),
        (
            "Dikke aanrader- wellicht reserveren als je niet van eindeloos wachten houdt.",
            ("amenity", "takes_reservations"),
        ),
        (
            "Every time I get caught up in a conversation about it, people bring this place up.",
            ("noise_max", "average"),
        ),
        ("We started with the bread and butter.", ("meal", "dessert")),
        ("The hallway was cramped but the room was fine.", ("amenity", "wheelchair_accessible")),
        ("We drove down from Indianapolis for the game.", ("cuisine", "Indian")),
        ("It's only accessible from Saint Lawrence Ave.", ("amenity", "wheelchair_accessible")),
    ],
)
def test_look_alike_words_do_not_support_a_constraint(sentence: str, constraint: tuple) -> None:
    kind, value = constraint
    assert not supports(sentence, Constraint(kind=kind, value=value, label="x"))


def test_the_tightened_lexicon_still_reads_plain_evidence() -> None:
    for sentence, kind, value in [
        ("Parking was easy with a free lot next door.", "amenity", "parking"),
        ("We grabbed food to go for a picnic.", "amenity", "takeout"),
        ("A great place for families with young children.", "amenity", "good_for_kids"),
        ("Walking distance from the waterfront.", "max_distance_km", 2.0),
        ("Quiet enough to hold a conversation.", "noise_max", "average"),
        ("Moderate noise level, conversation was easy.", "noise_max", "average"),
        ("We could have a conversation over dinner.", "noise_max", "average"),
        ("We sat outside in the sun.", "amenity", "outdoor_seating"),
        ("They have a few tables outside and the inside is nice too.", "amenity", "outdoor_seating"),
        ("We made a reservation for six.", "amenity", "takes_reservations"),
        ("Save room for the lemon tart.", "meal", "dessert"),
        ("The best Indian food in town.", "cuisine", "Indian"),
        (
            "The entrance has a ramp and the restrooms are wheelchair accessible.",
            "amenity",
            "wheelchair_accessible",
        ),
        ("Step-free access throughout.", "amenity", "wheelchair_accessible"),
    ]:
        assert supports(sentence, Constraint(kind=kind, value=value, label="x")), sentence


def _sentence(text: str, polarity: int, score: float, stars: float) -> Sentence:
    return Sentence("r", "p", 0, len(text), text, polarity, stars, score)


@pytest.mark.parametrize(
    ("text", "polarity", "score", "stars", "warning"),
    [
        ("The food was mediocre and the eggs were rubbery.", -1, -0.2, 4, True),  # a complaint cue
        ("We waited and waited for our order.", -1, -0.45, 4, True),  # clearly negative
        ("Stopped in for lunch with my daughter while in town.", -1, -0.15, 2, True),  # a 2-star review
        ("Stopped in for lunch with my daughter while in town.", -1, -0.15, 3, False),  # just a fact
        ("You simply can't buy something like this in the store.", -1, -0.12, 5, False),  # praise
        ("Staff was delightful, what would've been a dull night was great.", -1, 0.3, 5, False),
        ("The fries were great.", 1, 0.6, 1, False),
    ],
)
def test_only_sentences_that_read_as_complaints_are_warnings(text, polarity, score, stars, warning) -> None:
    assert reads_as_complaint(_sentence(text, polarity, score, stars)) is warning
