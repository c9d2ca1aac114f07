"""The generated demo city, kept as a KB file in the user's cache so a command that scores a demo-built
dataset reads it back instead of generating it again.

Generating the demo city (:func:`~groundtrace.crs.kb.demo.generate_demo_kb`) means drawing every POI and
review and then fitting the sentence-stance model on them (TF-IDF + logistic regression and VADER over
every review sentence, :mod:`groundtrace.crs.kb.stance`) — seconds of CPU and ~150 MB that a KB file
(``crs kb demo``) does not cost. :func:`demo_kb` returns the same knowledge base, content hash included:

* the cache file is ``CACHE/kb/demo-seed{SEED}-{HASH[:24]}.sqlite``, ``CACHE`` being
  ``$GROUNDTRACE_CACHE_DIR``, else ``$GROUNDTRACE_CACHE``, else ``~/.cache/groundtrace``, and ``HASH`` the
  KB's content hash (:attr:`KnowledgeBase.content_hash`: every POI, review and sentence stance);
* with ``expected`` (the hash a dataset's manifest records) that file is read with
  :func:`~groundtrace.crs.kb.store.load_kb`, which recomputes the content hash and refuses a modified,
  corrupt or stale (older stance version) file; a file that is missing, refused or of another hash is
  ignored and the city is generated;
* a city generated for an ``expected`` hash is written to the cache under its own content hash
  (atomically, by :func:`~groundtrace.crs.kb.store.save_kb`; ``crs build --kb demo`` writes the city it
  built on, so the first ``crs score`` already reads it); a cache that cannot be written is skipped
  (logged), never an error. Saving and reading back the 180-POI city take ~0.05 s each, generating it
  with its stances ~2.7 s.

So the cache can only ever give back a KB whose content hash is the one asked for — what
``resolve_kb`` checks anyway — and the generator's code can change freely: its new output has another hash
and another file.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import KBIntegrityError, NotAKnowledgeBaseError, load_kb, save_kb

log = logging.getLogger(__name__)

#: Characters of the content hash in the cache file's name.
HASH_CHARS = 24


def cache_folder() -> Path:
    """``$GROUNDTRACE_CACHE_DIR``, else ``$GROUNDTRACE_CACHE``, else ``~/.cache/groundtrace``; + ``/kb``."""
    base = os.environ.get("GROUNDTRACE_CACHE_DIR") or os.environ.get("GROUNDTRACE_CACHE")
    return Path(base or Path.home() / ".cache" / "groundtrace").expanduser() / "kb"


def cache_path(seed: int, content_hash: str) -> Path:
    """The cache file of the demo city of ``seed`` whose content hash is ``content_hash``."""
    return cache_folder() / f"demo-seed{seed}-{content_hash[:HASH_CHARS]}.sqlite"


def cached(seed: int, expected: str) -> KnowledgeBase | None:
    """The cached demo city of ``seed`` with content hash ``expected``, or ``None`` when there is no such
    file or it is refused (modified, corrupt, stale or of another hash)."""
    path = cache_path(seed, expected)
    if not expected or not path.is_file():
        return None
    try:
        kb = load_kb(path)  # recomputes the content hash: a modified file raises
    except (OSError, sqlite3.Error, NotAKnowledgeBaseError, KBIntegrityError) as exc:
        log.info("demo KB cache %s not used: %s", path, exc)
        return None
    return kb if kb.content_hash == expected else None


def remember(kb: KnowledgeBase, seed: int) -> Path | None:
    """Write ``kb`` (the demo city of ``seed``) to its cache file, replacing any file there (one that
    :func:`cached` refused); the path, or ``None`` when the cache cannot be written."""
    path = cache_path(seed, kb.content_hash)
    try:
        return save_kb(kb, path, source=f"generate_demo_kb(seed={seed})")
    except (OSError, sqlite3.Error) as exc:
        log.info("demo KB cache %s not written: %s", path, exc)
        return None


def demo_kb(seed: int = 0, expected: str = "") -> KnowledgeBase:
    """The demo city of ``seed``. With ``expected`` (a content hash): the cached file of that hash when
    there is one, else the city generated (:func:`~groundtrace.crs.kb.demo.generate_demo_kb`) and written
    to the cache. Without: generated only (its stances are fitted lazily, on first use, so a caller that
    never needs them or the hash does not pay for them)."""
    if not expected:
        return generate_demo_kb(seed)
    kb = cached(seed, expected)
    if kb is not None:
        return kb
    kb = generate_demo_kb(seed)
    remember(kb, seed)
    return kb
