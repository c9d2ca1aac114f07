"""Sentence stance: aspects, the polarity models on the hand-labelled sample, storage and versioning."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest

from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.stance import (
    ConsensusPolarity,
    StarClassifier,
    VaderPolarity,
    annotate,
    sentence_aspects,
    split_sentences,
)
from groundtrace.crs.kb.store import StaleKnowledgeBaseError, load_kb, save_kb
from groundtrace.crs.schema import Review
from tests.conftest import shared_path

SAMPLE = Path(__file__).parent / "fixtures" / "stance_sample.tsv"
LABEL = {"pos": 1, "neu": 0, "neg": -1}


def test_aspects_of_plain_sentences() -> None:
    assert sentence_aspects("The waiter was rude and the soup was cold.") == ("food", "service")
    assert "noise" in sentence_aspects("Quiet enough to hear each other.")
    assert sentence_aspects("We went there on Tuesday.") == ("overall",)


def test_annotate_covers_every_sentence_in_order() -> None:
    reviews = [
        Review(
            review_id="a", poi_id="p", stars=5, text="Great food! The staff was lovely. Parking is awful."
        ),
        Review(review_id="b", poi_id="p", stars=1, text="Terrible service. Never again."),
    ]
    stances = annotate(reviews, VaderPolarity())
    assert [(s.start, s.end) for s in stances["a"]] == split_sentences(reviews[0].text)
    assert [s.polarity for s in stances["a"]] == [1, 1, -1]
    assert stances["b"][0].polarity == -1 and "service" in stances["b"][0].aspects


def _sample() -> list[tuple[int, str, str]]:
    rows = SAMPLE.read_text(encoding="utf-8").splitlines()[1:]
    return [(LABEL[r.split("\t")[0]], r.split("\t")[1], r.split("\t", 4)[4]) for r in rows]


def _accuracy(model, rows) -> tuple[float, float]:
    pred = [p for p, _ in model.predict([r[2] for r in rows])]
    gold = [r[0] for r in rows]
    acc = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(rows)
    negs = [p for g, p in zip(gold, pred, strict=True) if g == -1]
    return acc, sum(p >= 0 for p in negs) / len(negs)


def test_labelled_sample_shape() -> None:
    rows = _sample()
    assert len(rows) == 180
    assert {r[0] for r in rows} == {-1, 0, 1}


@pytest.mark.slow
def test_consensus_beats_each_model_on_the_labelled_sample() -> None:
    """The documented choice (crs-kb.md): consensus is more accurate and lets fewer negatives through."""
    path = shared_path("yelp_dense", "yelp_academic_dataset_review.json")
    rows = _sample()
    held_out = {r[1] for r in rows}
    by_poi: dict[str, list[Review]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["review_id"] not in held_out:
            by_poi[obj["business_id"]].append(
                Review(
                    review_id=obj["review_id"],
                    poi_id=obj["business_id"],
                    stars=obj["stars"],
                    text=obj["text"],
                )
            )
    train = [
        r
        for rs in by_poi.values()
        for r in sorted(rs, key=lambda r: hashlib.sha256(r.review_id.encode()).digest())[:15]
    ]
    vader, stars = VaderPolarity(), StarClassifier().fit(train)
    acc_v, leak_v = _accuracy(vader, rows)
    acc_s, leak_s = _accuracy(stars, rows)
    acc_c, leak_c = _accuracy(ConsensusPolarity(vader, stars), rows)
    assert acc_c > max(acc_v, acc_s)
    assert leak_c < min(leak_v, leak_s)


def test_star_classifier_needs_both_classes() -> None:
    only_good = [Review(review_id="a", poi_id="p", stars=5, text="Lovely. Great.")]
    with pytest.raises(ValueError, match="both"):
        StarClassifier().fit(only_good)


@pytest.mark.slow
def test_stances_are_stored_and_loaded(tmp_path: Path) -> None:
    kb = generate_demo_kb(0, n_per_type=10, reviews_per_poi=3)
    path = save_kb(kb, tmp_path / "kb.sqlite")
    loaded = load_kb(path)
    assert loaded.stances == kb.stances
    assert loaded.stance_model == kb.stance_model
    review = next(iter(kb.reviews.values()))
    first = kb.stances[review.review_id][0]
    assert loaded.sentence_stance(review.review_id, first.start) == first


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE meta SET value = '1' WHERE key = 'format_version'",
        "DELETE FROM meta WHERE key = 'stance_version'",
    ],
)
def test_kb_from_older_code_is_refused_with_a_rebuild_hint(tmp_path: Path, sql: str) -> None:
    path = save_kb(generate_demo_kb(0, n_per_type=10, reviews_per_poi=3), tmp_path / "kb.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute(sql)
    with pytest.raises(StaleKnowledgeBaseError, match="rebuild it with `groundtrace crs kb build`"):
        load_kb(path)
