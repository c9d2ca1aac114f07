"""Clause embeddings for the constraint parser: the bundled all-MiniLM-L6-v2 (384-d, L2-normalised) through
the dense toolkit's :class:`~groundtrace.crs.systems.toolkit.dense.Encoder` — the same loader and the same
on-disk cache (one forward pass per distinct text, ever: a text already in the cache file is not encoded
again, in this process or a later one).

The cache file lives under :func:`embedding_cache_dir`: ``$GROUNDTRACE_CACHE_DIR``, else
``$GROUNDTRACE_CACHE``, else ``~/.cache/groundtrace``, then ``/embeddings`` (the dense system's folder when
only ``$GROUNDTRACE_CACHE`` is set, so both share vectors). One encoder per folder per process
(:func:`clause_encoder`); :func:`embed` writes the cache back after each call that encoded at least
:data:`SAVE_EVERY` new texts, and at process exit.
"""

from __future__ import annotations

import atexit
import os
from pathlib import Path
from typing import Any

import numpy as np

from groundtrace.crs.systems.toolkit.dense import Encoder

SAVE_EVERY = 256
_ENCODERS: dict[Path, Any] = {}
_UNSAVED: dict[Path, int] = {}


def embedding_cache_dir() -> Path:
    """Where clause vectors are cached (module docstring)."""
    base = os.environ.get("GROUNDTRACE_CACHE_DIR") or os.environ.get("GROUNDTRACE_CACHE")
    return Path(base or Path.home() / ".cache" / "groundtrace") / "embeddings"


def clause_encoder() -> Any:
    """The process's encoder for the current cache folder (``DenseUnavailable`` without the extra)."""
    folder = embedding_cache_dir()
    enc = _ENCODERS.get(folder)
    if enc is None:
        enc = _ENCODERS[folder] = Encoder(cache_dir=folder)
    return enc


def embed(texts: list[str]) -> np.ndarray:
    """Unit vectors (rows, float32, 384 columns) of ``texts``; each distinct text encoded at most once."""
    enc = clause_encoder()
    before = len(enc._vectors)
    out = enc.encode(texts)
    folder = embedding_cache_dir()
    _UNSAVED[folder] = _UNSAVED.get(folder, 0) + len(enc._vectors) - before
    if _UNSAVED[folder] >= SAVE_EVERY:
        enc.save()
        _UNSAVED[folder] = 0
    return out


def save_all() -> None:
    """Write every encoder's new vectors to its cache file."""
    for folder, enc in list(_ENCODERS.items()):
        try:
            enc.save()
        except OSError:  # a temporary folder already removed (tests): nothing worth keeping
            pass
        _UNSAVED[folder] = 0


atexit.register(save_all)
