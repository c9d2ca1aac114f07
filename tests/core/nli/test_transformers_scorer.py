"""CrossEncoderNLI on a tiny random BERT NLI checkpoint that the tests build and save themselves."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

# every test builds or loads a tiny transformers model (torch and transformers load for seconds): the slow
# tier only (tests/conftest.py does not even import this module for ``-m "not slow"``)
pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch", reason="the [nli] extra (torch) is not installed")
transformers = pytest.importorskip("transformers", reason="the [nli] extra (transformers) is not installed")

from groundtrace.core.nli.entailment import EntailmentScorer, LabelledScorer, make_scorer
from groundtrace.core.nli.transformers_scorer import (
    CrossEncoderNLI,
    check_checkpoint_dir,
    length_order,
    resolve_device,
)

NLI_LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}
WORDS = [
    "a",
    "an",
    "the",
    "man",
    "woman",
    "dog",
    "cat",
    "child",
    "people",
    "person",
    "is",
    "are",
    "on",
    "in",
    "at",
    "with",
    "outside",
    "inside",
    "sitting",
    "standing",
    "running",
    "sleeping",
    "eating",
    "playing",
    "street",
    "park",
    "beach",
    "table",
    "red",
    "blue",
    "two",
    "three",
    "not",
    "no",
    "and",
    "of",
    "to",
    ".",
]


def build_tiny_nli(directory: Path, id2label: dict[int, str] | None = None, seed: int = 0) -> Path:
    """Save a 2-layer, hidden-32 random BERT classifier and a WordLevel fast tokenizer into ``directory``."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    labels = id2label or NLI_LABELS
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {tok: i for i, tok in enumerate(specials + sorted(set(WORDS)))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=64,
    )
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        type_vocab_size=2,
        num_labels=len(labels),
        id2label=dict(labels),
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(config).eval()
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return directory


def relabel(directory: Path, id2label: dict[int, str]) -> None:
    """Rewrite config.json's id2label/label2id (same weights)."""
    cfg_path = directory / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["id2label"] = {str(k): v for k, v in id2label.items()}
    cfg["label2id"] = {v: k for k, v in id2label.items()}
    cfg_path.write_text(json.dumps(cfg))


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_nli(tmp_path_factory.mktemp("tiny-nli"))


@pytest.fixture(scope="module")
def tiny(tiny_dir: Path) -> CrossEncoderNLI:
    return CrossEncoderNLI(tiny_dir, device="cpu", batch_size=4, max_length=48)


PAIRS = [
    ("a man is sleeping on the beach .", "a person is sleeping ."),
    ("two dogs are running in the park with a red ball", "the cat is eating"),
    ("a woman", "a woman is not sitting at the table outside in the street with three children ."),
    ("people are playing .", "people are playing ."),
    ("the child is standing", "zebra xylophone"),  # unknown words → [UNK]
    ("a blue table", ""),
    ("", "an empty premise"),
]


def test_loads_and_is_a_labelled_scorer(tiny: CrossEncoderNLI, tiny_dir: Path) -> None:
    assert isinstance(tiny, EntailmentScorer) and isinstance(tiny, LabelledScorer)
    assert tiny.label_names == ["contradiction", "neutral", "entailment"]
    assert tiny.entailment_index == 2
    assert tiny.device == "cpu"
    assert tiny.name == f"nli:{tiny_dir.name}"


@pytest.mark.slow
def test_scores_in_unit_interval_and_rows_sum_to_one(tiny: CrossEncoderNLI) -> None:
    scores = tiny.score(PAIRS)
    assert len(scores) == len(PAIRS)
    assert all(0.0 <= s <= 1.0 for s in scores)
    for row, s in zip(tiny.probabilities(PAIRS), scores, strict=True):
        assert sum(row) == pytest.approx(1.0, abs=1e-6)
        assert row[2] == pytest.approx(s)
    assert tiny.score([]) == []


def test_matches_a_direct_forward_pass(tiny: CrossEncoderNLI, tiny_dir: Path) -> None:
    """Differential check: tokenizer + model + softmax column 2, written out by hand, one pair at a time."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(tiny_dir), local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        str(tiny_dir), local_files_only=True
    )
    expected = []
    with torch.no_grad():
        for premise, hypothesis in PAIRS:
            enc = tokenizer(premise, hypothesis, truncation=True, max_length=48, return_tensors="pt")
            expected.append(torch.softmax(model(**enc).logits, dim=-1)[0, 2].item())
    assert tiny.score(PAIRS) == pytest.approx(
        expected, abs=1e-4
    )  # padding in a batch moves fp32 logits by ~1e-5


def test_batched_equals_per_item_and_order_is_kept(tiny: CrossEncoderNLI) -> None:
    batched = tiny.score(PAIRS)
    single = [tiny.score([p])[0] for p in PAIRS]
    assert batched == pytest.approx(single, abs=1e-4)  # padding in a batch moves fp32 logits by ~1e-5
    assert tiny.score(PAIRS[::-1]) == pytest.approx(
        batched[::-1], abs=1e-4
    )  # padding in a batch moves fp32 logits by ~1e-5
    # the scores differ between pairs, so a permutation bug could not hide behind equal values
    assert len({round(s, 6) for s in batched}) > 3


def test_length_order_longest_first_and_stable() -> None:
    pairs = [("ab", "c"), ("abcd", "e"), ("a", "bc"), ("", "")]
    # total lengths 3, 5, 3, 0 → 5 first, then the two 3s in input order, then 0
    assert length_order(pairs) == [1, 0, 2, 3]


def _padded_cost(lengths: list[int], order: list[int], batch: int) -> int:
    """Total padded size: each batch of ``order`` costs (its longest item) × (its size)."""
    chunks = [order[i : i + batch] for i in range(0, len(order), batch)]
    return sum(max(lengths[j] for j in c) * len(c) for c in chunks)


@given(st.integers(1, 8), st.integers(1, 8), st.data())
def test_length_sorted_batches_never_pad_more(batch: int, n_batches: int, data: st.DataObject) -> None:
    """Why we sort: cut into full batches of a fixed size, longest-first order pads no more than any other
    order, here the input order. Proof: in any split, the (k+1)-th largest batch maximum is >= the item of
    rank k·batch (those k·batch + 1 items cannot fit in k batches), and sorted order attains exactly that.
    (With a final partial batch no fixed order is always best, so the property is stated for full batches.)"""
    n = batch * n_batches
    lengths = data.draw(st.lists(st.integers(0, 300), min_size=n, max_size=n))
    pairs = [("x" * n, "") for n in lengths]
    order = length_order(pairs)
    assert sorted(order) == list(range(len(pairs)))  # a permutation: nothing lost or repeated
    assert _padded_cost(lengths, order, batch) <= _padded_cost(lengths, list(range(len(lengths))), batch)


def test_truncation_beyond_position_limit(tiny: CrossEncoderNLI) -> None:
    long_premise = " ".join(["the man is running"] * 40)  # 160 words, far over 64 positions
    (s,) = tiny.score([(long_premise, "a man is running")])
    assert 0.0 <= s <= 1.0


def test_entailment_column_from_labels(tmp_path: Path) -> None:
    d = build_tiny_nli(tmp_path / "binary", id2label={0: "ENTAILMENT", 1: "NOT_ENTAILMENT"})
    scorer = CrossEncoderNLI(d, device="cpu")
    assert scorer.entailment_index == 0
    row = scorer.probabilities([("a man", "a man")])[0]
    assert scorer.score([("a man", "a man")])[0] == pytest.approx(row[0])


def test_missing_entailment_label_errors_unless_index_given(tmp_path: Path) -> None:
    d = build_tiny_nli(tmp_path / "anon")
    relabel(d, {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ValueError, match="entailment_index"):
        CrossEncoderNLI(d, device="cpu")
    scorer = CrossEncoderNLI(d, device="cpu", entailment_index=1)
    row = scorer.probabilities([("a dog", "a cat")])[0]
    assert scorer.score([("a dog", "a cat")])[0] == pytest.approx(row[1])
    with pytest.raises(ValueError, match="not a class"):
        CrossEncoderNLI(d, device="cpu", entailment_index=3)


def test_resolve_device() -> None:
    assert resolve_device("auto", cuda_available=False) == "cpu"
    assert resolve_device("auto", cuda_available=True) == "cuda"
    assert resolve_device("cpu", cuda_available=True) == "cpu"
    assert resolve_device("cuda:1", cuda_available=True) == "cuda:1"
    with pytest.raises(RuntimeError, match="no CUDA"):
        resolve_device("cuda", cuda_available=False)
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu", cuda_available=True)


def test_device_selection_on_this_machine(tiny_dir: Path) -> None:
    auto = CrossEncoderNLI(tiny_dir, device="auto")
    assert auto.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert next(auto.model.parameters()).device.type == auto.device.split(":")[0]
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="no CUDA"):
            CrossEncoderNLI(tiny_dir, device="cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
def test_cuda_matches_cpu(tiny_dir: Path) -> None:  # pragma: no cover - GPU machines only
    cpu = CrossEncoderNLI(tiny_dir, device="cpu").score(PAIRS)
    gpu = CrossEncoderNLI(tiny_dir, device="cuda").score(PAIRS)
    assert gpu == pytest.approx(cpu, abs=1e-4)


def test_nonexistent_path_error_message(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(FileNotFoundError, match="never downloaded") as err:
        CrossEncoderNLI(missing)
    assert str(missing) in str(err.value)
    with pytest.raises(FileNotFoundError, match="config.json"):
        check_checkpoint_dir(tmp_path)
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="is a file"):
        check_checkpoint_dir(tmp_path / "weights.bin")


def test_bad_constructor_arguments(tiny_dir: Path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        CrossEncoderNLI(tiny_dir, batch_size=0)
    with pytest.raises(ValueError, match="device must be"):
        CrossEncoderNLI(tiny_dir, device="gpu")


def test_make_scorer_loads_a_checkpoint_directory(tiny_dir: Path, tiny: CrossEncoderNLI) -> None:
    scorer = make_scorer(str(tiny_dir), device="cpu", max_length=48)
    assert isinstance(scorer, CrossEncoderNLI)
    assert scorer.score(PAIRS[:3]) == pytest.approx(tiny.score(PAIRS[:3]), abs=1e-6)


def test_loading_never_touches_the_network(tiny_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network access attempted during an offline NLI load")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    scorer = CrossEncoderNLI(tiny_dir, device="cpu")
    assert 0.0 <= scorer.score([("a dog", "a dog")])[0] <= 1.0
    assert attempts == []
