"""Cross-encoder NLI on any local Hugging Face sequence-classification checkpoint (extra ``[nli]``).

``CrossEncoderNLI(path)`` loads ``AutoTokenizer`` + ``AutoModelForSequenceClassification`` from a local
directory with ``local_files_only=True`` (never downloads), finds the entailment class from
``config.id2label`` (:func:`groundtrace.core.nli.entailment.entailment_column`) and returns
``softmax(logits)[:, entailment]`` per (premise, hypothesis) pair. Pairs are encoded as
``tokenizer(premise, hypothesis, truncation=True, max_length=...)`` — the premise first, as in MNLI/SNLI
training — and sorted by length before batching so each batch pads to a similar length; results come
back in input order. torch and transformers are imported lazily, inside the constructor.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundtrace.core.nli.entailment import NLI_INSTALL_HINT, check_pairs, entailment_column


def _import_torch() -> tuple[Any, Any]:
    try:
        # deferred: torch + transformers are the optional [nli] extra (torch alone ~1.2 s)
        import torch
        import transformers
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"CrossEncoderNLI needs {exc.name}; install it with: {NLI_INSTALL_HINT}") from exc
    return torch, transformers


def resolve_device(device: str, cuda_available: bool) -> str:
    """``"auto"`` → ``"cuda"`` when available else ``"cpu"``; ``"cuda"``/``"cuda:N"`` without CUDA → error."""
    if device == "auto":
        return "cuda" if cuda_available else "cpu"
    if device == "cpu":
        return "cpu"
    if device == "cuda" or device.startswith("cuda:"):
        if not cuda_available:
            raise RuntimeError(f"device={device!r} requested but torch sees no CUDA GPU; use 'cpu' or 'auto'")
        return device
    raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:N]', got {device!r}")


def length_order(pairs: Sequence[tuple[str, str]]) -> list[int]:
    """Indices of ``pairs`` sorted by total character length, longest first (stable on ties).

    Cut into full batches of a fixed size, a sorted order minimises the padded size
    sum(batch max × batch size); longest first also makes an out-of-memory batch fail at once.
    """
    return sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))


def check_checkpoint_dir(path: str | Path) -> Path:
    """Return ``path`` as a directory holding ``config.json``, or raise ``FileNotFoundError`` saying why."""
    p = Path(path).expanduser()
    if not p.exists():
        raise FileNotFoundError(
            f"NLI checkpoint directory not found: {p}. Models are never downloaded at run time; download a "
            "sequence-classification NLI checkpoint (e.g. a DeBERTa-v3 MNLI model) and pass its "
            "local directory."
        )
    if not p.is_dir():
        raise FileNotFoundError(
            f"NLI checkpoint path {p} is a file; pass the directory that holds config.json"
        )
    if not (p / "config.json").is_file():
        raise FileNotFoundError(f"{p} has no config.json; it is not a Hugging Face checkpoint directory")
    return p


class CrossEncoderNLI:
    """P(entailment) from a local NLI cross-encoder checkpoint, batched, on CPU or GPU."""

    def __init__(
        self,
        path: str | Path,
        device: str = "auto",
        batch_size: int = 32,
        max_length: int = 256,
        entailment_index: int | None = None,
        name: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8, got {max_length}")
        self.path = check_checkpoint_dir(path)
        torch, transformers = _import_torch()
        self._torch = torch
        self.device = resolve_device(device, torch.cuda.is_available())
        self.batch_size = batch_size
        self.max_length = max_length
        self.name = name or f"nli:{self.path.name}"
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            str(self.path), local_files_only=True
        )
        id2label = getattr(model.config, "id2label", None) or {}
        if model.config.num_labels < 2:
            raise ValueError(
                f"{self.path}: a classifier with >= 2 labels is needed, got {model.config.num_labels}"
            )
        self.entailment_index = entailment_column(id2label, entailment_index)
        if self.entailment_index >= model.config.num_labels:
            raise ValueError(
                f"entailment_index={self.entailment_index} >= num_labels={model.config.num_labels}"
            )
        self.label_names = [str(id2label.get(i, f"LABEL_{i}")) for i in range(model.config.num_labels)]
        self.model = model.to(self.device).eval()

    @classmethod
    def from_directory(cls, path: str | Path, **options: Any) -> CrossEncoderNLI:
        """``CrossEncoderNLI(path, **options)`` (the loader protocol of ``CHECKPOINT_FORMATS``)."""
        return cls(path, **options)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """Softmax over all classes per pair (columns follow :attr:`label_names`), in input order."""
        pairs = check_pairs(pairs)
        torch = self._torch
        out: list[list[float]] = [[] for _ in pairs]
        order = length_order(pairs)
        with torch.no_grad():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = self.tokenizer(
                    [pairs[i][0] for i in idx],
                    [pairs[i][1] for i in idx],
                    truncation=True,
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                ).to(self.device)
                logits = self.model(**enc).logits.float()
                probs = torch.softmax(logits, dim=-1).cpu().tolist()
                for i, row in zip(idx, probs, strict=True):
                    out[i] = row
        return out

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """P(entailment) per pair, in input order."""
        k = self.entailment_index
        return [min(1.0, max(0.0, row[k])) for row in self.probabilities(pairs)]

    def __repr__(self) -> str:
        return f"CrossEncoderNLI({str(self.path)!r}, device={self.device!r}, labels={self.label_names})"
