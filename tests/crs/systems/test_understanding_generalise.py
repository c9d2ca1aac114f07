"""What lets the understanding generalise past the train phrasings: rejections split without a cue word,
reworded turns whose labels no longer occur (pending labels), the nearest-phrasing reader calibrated on
held-out phrasings, and the uncertain readings trace-hybrid weighs (``weighted_match``)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.baselines.trace_hybrid import TraceHybridSystem, weighted_match
from groundtrace.crs.systems.predictions import CandidateCard
from groundtrace.crs.systems.understanding.model import Understanding
from groundtrace.crs.systems.understanding.neighbours import NeighbourReader, name_phrase, pieces
from groundtrace.crs.systems.understanding.parser import (
    ConstraintParser,
    LabelledTurn,
    Pending,
    clause_examples,
    split_rejection,
)


def C(kind: str, value, label: str) -> Constraint:
    return Constraint(kind=kind, value=value, label=label)


# -- rejections ----------------------------------------------------------------------------------------
def test_a_rejection_without_cue_words_keeps_its_wish_after_the_turning_down() -> None:
    text = "Hmm, it's missing something I need, so not Upper Deck. Got anything with its own lot?"
    assert split_rejection(text) == (
        "Hmm, it's missing something I need, so not Upper Deck.",
        "Got anything with its own lot?",
    )
    # the sentence naming the rejected place ends the negative part, however many come before it
    text = "Sorry. Blue Door isn't it, too loud for us. We want to chat. Any other ideas?"
    neg, pos = split_rejection(text, ["Blue Door"])
    assert neg == "Sorry. Blue Door isn't it, too loud for us." and pos == "We want to chat. Any other ideas?"
    # one sentence and no cue: all of it turns something down
    assert split_rejection("Not Blue Door, thanks.") == ("Not Blue Door, thanks.", "")
    # the cue words still win
    assert split_rejection("Not Blue Door. Ideally with a patio?")[1] == " with a patio?"


# -- pending labels ------------------------------------------------------------------------------------
PATIO = C("amenity", "outdoor_seating", "with a patio")


def test_a_label_missing_from_its_turn_is_pending_not_a_negative() -> None:
    reworded = LabelledTurn("We need a cafe in Lumen Bay. Somewhere we can eat outside.", (PATIO,))
    pending: list[Pending] = []
    texts, labels = clause_examples([reworded], pending)
    assert texts == [] and labels == []  # neither clause is a known negative
    assert pending == [
        Pending(
            ("We need a cafe in Lumen Bay", "Somewhere we can eat outside"), ("amenity|str|outdoor_seating",)
        )
    ]
    # without a pending list (the old contract) the clauses are negatives
    assert clause_examples([reworded])[1] == [[], []]


def test_pending_labels_go_to_the_clause_a_first_fit_scores_highest() -> None:
    located = [
        LabelledTurn("We need a cafe in Lumen Bay, with a patio.", (PATIO,)),
        LabelledTurn(
            "We need a bar in Lumen Bay, with free wifi.", (C("amenity", "wifi", "with free wifi"),)
        ),
        LabelledTurn(
            "We need a hotel in Lumen Bay, with a terrace.",
            (C("amenity", "outdoor_seating", "with a terrace"),),
        ),
    ]
    # the label says "with a patio"; the text was reworded, and its wish comes first this time
    reworded = LabelledTurn("Tables on a patio outside please. We need a cafe in Lumen Bay.", (PATIO,))
    parser = ConstraintParser(features="tfidf", threshold=0.3)
    texts, labels = parser._resolve_pending(
        *clause_examples(located),
        [
            Pending(
                ("Tables on a patio outside please", "We need a cafe in Lumen Bay"),
                ("amenity|str|outdoor_seating",),
            )
        ],
    )
    assert (texts[-1], labels[-1]) == ("Tables on a patio outside please", ["amenity|str|outdoor_seating"])
    parser.fit([*located, reworded])
    assert "amenity|str|outdoor_seating" in parser.classes
    # no located example at all: the last unexplained clause (a request's frame comes first)
    alone = ConstraintParser(features="tfidf")
    texts, labels = alone._resolve_pending(
        [], [], [Pending(("We need a cafe", "with tables outside"), ("k|str|v",))]
    )
    assert (texts, labels) == (["with tables outside"], [["k|str|v"]])


# -- nearest-phrasing reader ---------------------------------------------------------------------------
def test_pieces_cut_coordinations_and_request_frames() -> None:
    got = pieces("I'd like somewhere quiet and with parking")
    assert got[0] == "I'd like somewhere quiet and with parking"
    assert "with parking" in got and "quiet" in got
    assert pieces("Got anything with its own lot?")[-1] == "with its own lot"
    assert name_phrase("amenity|str|outdoor_seating") == "outdoor seating"
    assert name_phrase("price_max|int|2") is None and name_phrase("cuisine|str|Thai") is None


def _bag_embed(texts: list[str]) -> np.ndarray:
    """A stand-in sentence encoder: unit bag-of-words vectors over hashed words (shared words = similar)."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for i, text in enumerate(texts):
        for word in text.lower().replace(",", " ").split():
            out[i, zlib.crc32(word.encode()) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


def test_the_reader_is_calibrated_on_held_out_phrasings_and_reads_a_new_one() -> None:
    classes = ["amenity|str|outdoor_seating", "amenity|str|wifi"]
    phrases = {
        "tables outside on the patio": [classes[0]],
        "a sunny patio outside": [classes[0]],
        "eat outside in the sun": [classes[0]],
        "fast wifi for laptops": [classes[1]],
        "laptops and good wifi": [classes[1]],
        "wifi that works": [classes[1]],
    }
    negatives = ["we need a cafe in lumen bay", "thanks that is all", "what do people say"]
    reader = NeighbourReader().fit(
        classes, phrases, negatives, _bag_embed, quotes={"the wifi was fast": [classes[1]]}
    )
    assert "outdoor seating" in reader.prototypes and "the wifi was fast" in reader.prototypes
    (k1, p1), (k2, p2), (_, p3) = reader.read(
        ["a table outside please", "is the wifi fast", "we need a cafe"], _bag_embed
    )
    assert (reader.classes[k1], reader.classes[k2]) == tuple(classes)
    assert p1 > p3 and p2 > p3  # a frame clause is less likely to state a class than a wish


def test_an_unfitted_reader_cannot_say() -> None:
    assert NeighbourReader().read(["anything"], _bag_embed) == [(-1, 0.0)]


# -- uncertain readings ---------------------------------------------------------------------------------
def _card(pid: str, **attrs) -> CandidateCard:
    return CandidateCard(
        poi_id=pid, name=pid, city="X", poi_type="restaurant", stars=4.0, lat=0, lon=0, attributes=attrs
    )


def test_weighted_match_counts_uncertain_readings_by_their_probability() -> None:
    wifi = C("amenity", "wifi", "wifi")
    patio = C("amenity", "outdoor_seating", "patio")
    both = _card("a", wifi="free", outdoor_seating=True)
    only_wifi = _card("b", wifi="free", outdoor_seating=False)
    neither = _card("c", wifi="no", outdoor_seating=False)
    # (1 + 0.25·1) / (1 + 0.25) = 1;  (1 + 0) / 1.25 = 0.8;  0 / 1.25 = 0
    assert weighted_match(both, [wifi], [(patio, 0.25)], None) == pytest.approx(1.0)
    assert weighted_match(only_wifi, [wifi], [(patio, 0.25)], None) == pytest.approx(0.8)
    assert weighted_match(neither, [wifi], [(patio, 0.25)], None) == 0.0
    assert weighted_match(neither, [], [], None) == 1.0
    # a stated constraint always weighs more than an uncertain one
    assert weighted_match(only_wifi, [wifi], [(patio, 0.9)], None) > weighted_match(
        _card("d", wifi="no", outdoor_seating=True), [wifi], [(patio, 0.9)], None
    )


def test_parse_soft_gives_the_readings_below_the_threshold() -> None:
    turns = [
        LabelledTurn("Somewhere with a patio, please.", (PATIO,)),
        LabelledTurn(
            "Tables on the patio would be nice.", (C("amenity", "outdoor_seating", "Tables on the patio"),)
        ),
        LabelledTurn("We need free wifi.", (C("amenity", "wifi", "free wifi"),)),
        LabelledTurn("Good wifi, please.", (C("amenity", "wifi", "Good wifi"),)),
        LabelledTurn("Hello, I am visiting next week."),
    ]
    u = Understanding(ConstraintParser(features="tfidf", threshold=0.99).fit(turns))
    assert all(c.kind != "amenity" for c in u.parse("Tables, would be nice"))  # nothing stated for sure
    soft = {(c.kind, c.value): p for c, p in u.parse_soft("Tables, would be nice", 0.05)}
    assert ("amenity", "outdoor_seating") in soft and 0.05 <= soft[("amenity", "outdoor_seating")] < 0.99
    assert Understanding().parse_soft("Tables, would be nice", 0.05) == ()
    with pytest.raises(ValueError, match="soft_floor"):
        TraceHybridSystem(dense=False, soft_floor=1.0)
    assert TraceHybridSystem(dense=False).config()["soft_floor"] == 0.05


def test_review_quotes_are_capped_per_class_in_text_order() -> None:
    from groundtrace.crs.systems.understanding import neighbours

    classes = ["amenity|str|outdoor_seating", "amenity|str|wifi"]
    quotes = {f"patio sentence {i:03d}": [classes[0]] for i in range(neighbours.QUOTES_PER_CLASS + 10)}
    phrases = {"a patio": [classes[0]], "free wifi": [classes[1]], "good wifi": [classes[1]]}
    reader = NeighbourReader().fit(classes, phrases, ["hello there"], _bag_embed, quotes=quotes)
    kept = [t for t in reader.prototypes if t.startswith("patio sentence")]
    assert kept == sorted(quotes)[: neighbours.QUOTES_PER_CLASS]
