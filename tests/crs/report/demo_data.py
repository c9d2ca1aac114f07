"""A small built demo dataset shared by the runner, systems, HTTP and report tests."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from groundtrace.crs.build.builder import build_dataset
from groundtrace.crs.evaluation.loading import load_split
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase
from groundtrace.crs.kb.store import save_kb
from groundtrace.crs.schema import Dialogue


@dataclass
class Demo:
    root: Path
    dataset: Path
    kb_path: Path
    kb: KnowledgeBase
    dialogues: list[Dialogue]  # split "all"


def make_demo(root: Path, n_dialogues: int = 40, seed: int = 7) -> Demo:
    """Demo city with 55 POIs per type (the open pool needs >= 50), 4 reviews each; ``n_dialogues`` built.

    Every call gets its own files under ``root`` and its own KB and dialogue objects; the build itself (the
    costly part, ~1 s) runs once per session and size — the builder is deterministic for a KB, size and
    seed — and later calls copy its folder. The KB's sentence stances are computed once per session too
    (:func:`_demo_kb`)."""
    kb = _demo_kb()
    dataset = root / "dataset"
    shutil.copytree(_built(n_dialogues, seed), dataset)
    kb_path = save_kb(kb, root / "kb.sqlite", created="2026-01-01T00:00:00+00:00")
    return Demo(root, dataset, kb_path, kb, load_split(dataset, "all").dialogues)


_BUILT: dict[tuple[int, int], Path] = {}
_STANCES: list[tuple[dict, str]] = []


def _demo_kb() -> KnowledgeBase:
    """A new demo KB object (55 POIs per type, 4 reviews each) with its sentence stances: annotated at the
    first call of the session (the stance model fitted on its reviews: ~0.6 s CPU, the most of what saving
    it costs), copies of those afterwards — the generator and the stance model are deterministic, so a
    copy is what annotating again would give (same ``content_hash``, which covers the stances)."""
    kb = generate_demo_kb(0, n_per_type=55, reviews_per_poi=4)
    if not _STANCES:
        _STANCES.append(({rid: list(s) for rid, s in kb.stances.items()}, kb.stance_model))
    else:
        stances, model = _STANCES[0]
        kb.set_stances({rid: list(s) for rid, s in stances.items()}, model)
    return kb


def _built(n_dialogues: int, seed: int) -> Path:
    """The demo dataset folder for (``n_dialogues``, ``seed``), built at the first request of the session
    into a private temporary folder (removed at exit)."""
    key = (n_dialogues, seed)
    if key not in _BUILT:
        cache = Path(tempfile.mkdtemp(prefix="gt-demo-"))
        atexit.register(shutil.rmtree, cache, True)
        build_dataset(_demo_kb(), n_dialogues, seed, cache / "dataset")
        _BUILT[key] = cache / "dataset"
    return _BUILT[key]
