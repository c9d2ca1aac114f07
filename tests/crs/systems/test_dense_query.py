"""``dense``'s query (``query="turns"`` vs ``"joined"``): the formula on hand-made vectors, the scores it
gives on real turns, and what a turn encodes."""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.systems import build_system
from groundtrace.crs.systems.baselines.dense import DenseSystem, query_vector
from groundtrace.crs.systems.toolkit.base import Turn
from groundtrace.crs.systems.toolkit.dense import DIMENSIONS, Encoder
from groundtrace.crs.systems.toolkit.state import track_state
from tests.crs.report.demo_data import make_demo
from tests.crs.systems.test_baselines import TinyModel


class Table:
    """Fixed vectors by text (unit vectors on the first axes), recording every text it encodes."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.seen: list[str] = []

    def encode(self, texts, normalize_embeddings=True):
        self.seen.extend(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for i, text in enumerate(texts):
            v = np.asarray(self.vectors[text], dtype=np.float32)
            out[i, : len(v)] = v / np.linalg.norm(v)
        return out


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("dense-query"), n_dialogues=40)


def test_turns_query_is_the_normalised_sum_of_the_turn_vectors(tmp_path) -> None:
    model = Table({"a": [1, 0], "b": [0, 1], "c": [3, 4], "a b": [0, 0, 1]})
    enc = Encoder(model, name="table", cache_dir=tmp_path)
    # e(a) = (1, 0), e(b) = (0, 1): sum (1, 1), norm √2
    q = query_vector(enc, ["a", "b"], "turns")
    assert q[:3] == pytest.approx([2**-0.5, 2**-0.5, 0])
    # e(a) + e(c) = (1, 0) + (0.6, 0.8) = (1.6, 0.8), norm √3.2
    q = query_vector(enc, ["a", "c"], "turns")
    assert q[:2] == pytest.approx([1.6 / 3.2**0.5, 0.8 / 3.2**0.5])
    assert float(np.linalg.norm(q)) == pytest.approx(1.0)
    assert query_vector(enc, ["c"], "turns")[:2] == pytest.approx([0.6, 0.8])  # one text: its own vector
    assert query_vector(enc, ["a", "b"], "joined")[:3] == pytest.approx([0, 0, 1])  # e("a b")
    assert query_vector(enc, [], "turns") is None


def test_opposite_turns_give_no_query(tmp_path) -> None:
    enc = Encoder(Table({"x": [1, 0], "y": [-1, 0]}), name="table", cache_dir=tmp_path)
    assert query_vector(enc, ["x", "y"], "turns") is None


def _multi_turn_inputs(demo, n: int = 5):
    found = []
    for d in demo.dialogues:
        for _turn, inp in system_inputs(d, demo.kb, "closed"):
            state = track_state(inp)
            if len(state.positive_parts) >= 2 and state.negative_parts:
                found.append(inp)
                if len(found) == n:
                    return found
    return found


def test_scores_follow_the_formula_on_real_turns(demo, tmp_path) -> None:
    inputs = _multi_turn_inputs(demo)
    assert inputs, "the demo set should hold turns after a rejection"
    model = TinyModel()
    for mode in ("turns", "joined"):
        system = DenseSystem(encoder=Encoder(model, name="tiny", cache_dir=tmp_path), query=mode)
        for inp in inputs:
            turn = Turn(inp, track_state(inp), system.memo)
            scores = system.score(turn)
            state = turn.state
            if mode == "turns":
                pos_texts, neg_texts = state.positive_parts, state.negative_parts
            else:
                pos_texts, neg_texts = [state.positive_text], [state.negative_text.strip()]
            pos = model.encode(pos_texts).sum(axis=0)
            neg = model.encode(neg_texts).sum(axis=0)
            pos, neg = pos / np.linalg.norm(pos), neg / np.linalg.norm(neg)
            for poi in turn.pool:
                doc = model.encode([turn.document(poi)])[0]
                assert scores[poi] == pytest.approx(float(doc @ pos - 0.5 * doc @ neg), abs=1e-5)


def test_a_turn_encodes_only_the_users_new_text(demo, tmp_path) -> None:
    """Query mode "turns": over a dialogue the query texts encoded are exactly the user's turn texts
    (positive and negative parts), each once — never a history prefix joined again."""
    model = Hashing()
    system = DenseSystem(encoder=Encoder(model, name="hashing", cache_dir=tmp_path))
    dialogue = max(demo.dialogues[:20], key=lambda d: len(list(system_inputs(d, demo.kb, "closed"))))
    inputs = [inp for _t, inp in system_inputs(dialogue, demo.kb, "closed")]
    assert len(inputs) >= 3
    documents, expected = set(), set()
    for inp in inputs:
        system.respond(inp)
        turn = Turn(inp, track_state(inp))
        documents |= {turn.document(p) for p in turn.pool}
        expected |= set(turn.state.positive_parts or [inp.poi_type]) | set(turn.state.negative_parts)
    queries = [t for t in model.seen if t not in documents]
    assert len(queries) == len(set(queries))  # each text once
    assert set(queries) == expected
    joined = track_state(inputs[-1]).positive_text
    assert len(track_state(inputs[-1]).positive_parts) < 2 or joined not in queries


class Hashing:
    """A one-hot vector per text (by a stable hash), recording every text it encodes."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts, normalize_embeddings=True):
        self.seen.extend(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i, sum(text.encode()) % DIMENSIONS] = 1.0
        return out


def test_query_mode_is_an_option_and_is_checked(tmp_path) -> None:
    enc = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    assert DenseSystem(encoder=enc).config()["query"] == "turns"
    assert DenseSystem(encoder=enc, query="joined").config()["query"] == "joined"
    with pytest.raises(ValueError, match="turns, joined"):
        DenseSystem(encoder=enc, query="mean")
    assert build_system("hybrid-rrf", dense=False).config()["dense"] is False
