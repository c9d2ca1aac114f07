"""A small demo build on a saved KB and its public-release export (release and datasets tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.kb.knowledge_base import KnowledgeBase

runner = CliRunner()


def yelp_file(kb: KnowledgeBase, path: Path, skip: frozenset[str] = frozenset()) -> Path:
    """The KB's reviews in the Yelp Open Dataset's review format (what a user downloads)."""
    with path.open("w", encoding="utf-8") as handle:
        for r in kb.reviews.values():
            if r.review_id not in skip:
                obj = {"review_id": r.review_id, "user_id": "u", "business_id": r.poi_id, "stars": r.stars}
                handle.write(json.dumps({**obj, "text": r.text, "date": r.date}) + "\n")
    return path


@pytest.fixture(scope="session")
def demo_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """``(dataset folder, release folder, Yelp review file)``: 40 dialogues built on a small saved demo KB
    (``crs build`` writes the card and the KB configs), exported with ``--format trace-release``."""
    from groundtrace.crs.build.builder import build_dataset
    from groundtrace.crs.kb.demo import generate_demo_kb
    from groundtrace.crs.kb.store import load_kb, save_kb

    root = tmp_path_factory.mktemp("release")
    kb_path = save_kb(generate_demo_kb(0, n_per_type=16, reviews_per_poi=5), root / "kb.sqlite")
    kb = load_kb(kb_path)
    build_dataset(kb, 40, 2, root / "ds", kb_path=kb_path)
    result = runner.invoke(
        app, ["crs", "export", str(root / "ds"), "--kb", str(kb_path), "--format", "trace-release",
              "--out", str(root / "rel")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return root / "ds", root / "rel", yelp_file(kb, root / "yelp_academic_dataset_review.json")
