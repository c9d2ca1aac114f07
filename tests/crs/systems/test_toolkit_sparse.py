"""TF-IDF scoring by hand, documents as sums of parts, the memo keyed by content, the parser's prefilter."""

from __future__ import annotations

import math

import pytest

from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.systems import build_system
from groundtrace.crs.systems.predictions import CandidateCard, TaggedReview
from groundtrace.crs.systems.toolkit.memo import Memo
from groundtrace.crs.systems.toolkit.sparse import SparseIndex, TermVector, add_counts, count_terms
from tests.crs.report.demo_data import make_demo


def test_terms_are_unigrams_and_bigrams_without_stop_words() -> None:
    assert count_terms("The quiet cafe, quiet cafe!") == {
        "quiet": 2,
        "cafe": 2,
        "quiet cafe": 2,
        "cafe quiet": 1,
    }


def test_tfidf_score_by_hand() -> None:
    # docs: d1 = "sushi sushi bar", d2 = "pizza bar"; query "sushi bar"
    index = SparseIndex()
    d1, d2 = index.vector("sushi sushi bar"), index.vector("pizza bar")
    # d1 terms: sushi 2, bar 1, "sushi sushi" 1, "sushi bar" 1 -> weights 1+ln2, 1, 1, 1
    w = 1 + math.log(2)
    assert d1.weights == pytest.approx({"sushi": w, "bar": 1.0, "sushi sushi": 1.0, "sushi bar": 1.0})
    n1 = math.sqrt(w * w + 3)
    n2 = math.sqrt(3)  # pizza, bar, "pizza bar"
    # query terms sushi, bar, "sushi bar" (weight 1 each); N = 2
    idf_sushi = math.log(3 / 2) + 1  # df 1
    idf_bar = math.log(3 / 3) + 1  # df 2
    idf_sb = math.log(3 / 2) + 1  # df 1
    q_norm = math.sqrt(idf_sushi**2 + idf_bar**2 + idf_sb**2)
    s1 = (w * idf_sushi**2 + idf_bar**2 + idf_sb**2) / (n1 * q_norm)
    s2 = (idf_bar**2) / (n2 * q_norm)
    got = index.scores([d1, d2], "sushi bar")
    assert got.tolist() == pytest.approx([s1, s2])
    assert index.scores([d1, d2], "").tolist() == [0.0, 0.0]
    assert index.scores([], "sushi").tolist() == []


def test_a_document_is_the_sum_of_its_parts_and_no_bigram_spans_two() -> None:
    doc = add_counts([TermVector.of_counts(count_terms(t)) for t in ("great sushi", "sushi chef")])
    assert doc.counts == {"great": 1, "sushi": 2, "chef": 1, "great sushi": 1, "sushi chef": 1}
    assert "sushi sushi" not in doc.counts  # would span the two reviews


def _card(pid: str) -> CandidateCard:
    return CandidateCard(
        poi_id=pid, name="Blue Sushi", city="X", poi_type="restaurant", stars=4.0, lat=0, lon=0
    )


def test_memo_views_follow_the_reviews_shown_not_the_poi_id() -> None:
    memo = Memo()
    r1 = TaggedReview(tag="R1", review_id="a", poi_id="p", text="Great sushi here. Very quiet room.")
    r2 = TaggedReview(tag="R2", review_id="b", poi_id="p", text="Loud music every night. Pizza too.")
    one, both = memo.poi(_card("p"), [r1]), memo.poi(_card("p"), [r1, r2])
    assert one is not both and "pizza" not in one.vector.counts and "pizza" in both.vector.counts
    assert memo.poi(_card("p"), [r1, r2]) is both
    # tags are the turn's: the same review under another tag quotes under that tag
    r1_again = r1.model_copy(update={"tag": "R7"})
    assert [s.tag for s in memo.poi(_card("p"), [r1_again]).tagged([r1_again])] == ["R7", "R7"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("sparse"), n_dialogues=12)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tfidf", "aspect", "persona", "trace-hybrid"])
def test_answers_do_not_depend_on_the_order_turns_come_in(name, demo) -> None:
    """Caches are keyed by content: answering the turns backwards gives the same answers, also when a
    POI is shown with different reviews in different turns (every other turn drops a third of them, as
    open pools and real KBs do)."""
    opts = {"dense": False} if name == "trace-hybrid" else {}
    for setting in ("closed", "open"):
        inputs = [inp for d in demo.dialogues for _, inp in system_inputs(d, demo.kb, setting)]
        inputs = [
            inp if n % 2 else inp.model_copy(update={"reviews": inp.reviews[1::3] + inp.reviews[2::3]})
            for n, inp in enumerate(inputs)
        ]
        system = build_system(name, **opts)
        forward = [system.respond(i) for i in inputs]
        system = build_system(name, **opts)
        backward = [system.respond(i) for i in reversed(inputs)][::-1]
        assert forward == backward
