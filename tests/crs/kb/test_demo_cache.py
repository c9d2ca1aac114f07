"""The demo city in the user's cache (crs/kb/demo_cache.py): read back for the content hash a dataset
records, generated and cached otherwise; a modified file or an unwritable cache never gives a wrong KB."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from groundtrace.cli import app
from groundtrace.crs.evaluation.loading import load_kb, resolve_kb
from groundtrace.crs.kb import demo_cache
from groundtrace.crs.kb.demo import generate_demo_kb
from groundtrace.crs.kb.knowledge_base import KnowledgeBase


@pytest.fixture(scope="module")
def city() -> KnowledgeBase:
    """The default demo city of seed 0 with its stances and content hash computed (once per module)."""
    kb = generate_demo_kb(0)
    assert kb.content_hash
    return kb


def _generator(monkeypatch: pytest.MonkeyPatch, kb: KnowledgeBase | None) -> list[int]:
    """Replace the generator the cache falls back to: it returns ``kb`` (None: it must not be called) and
    records the seeds it was asked for."""
    seeds: list[int] = []

    def generate(seed: int) -> KnowledgeBase:
        seeds.append(seed)
        if kb is None:
            raise AssertionError("the demo city was generated although the cache holds it")
        return kb

    monkeypatch.setattr(demo_cache, "generate_demo_kb", generate)
    return seeds


def _same_kb(a: KnowledgeBase, b: KnowledgeBase) -> None:
    assert a.content_hash == b.content_hash
    assert a.name == b.name
    assert a.stance_model == b.stance_model
    assert {k: p.model_dump() for k, p in a.pois.items()} == {k: p.model_dump() for k, p in b.pois.items()}
    assert {k: r.model_dump() for k, r in a.reviews.items()} == {
        k: r.model_dump() for k, r in b.reviews.items()
    }
    assert a.stances == b.stances


def test_a_city_generated_for_a_hash_is_cached_then_read_back(city, monkeypatch) -> None:
    seeds = _generator(monkeypatch, city)
    first = demo_cache.demo_kb(0, city.content_hash)
    assert seeds == [0] and first is city
    path = demo_cache.cache_path(0, city.content_hash)
    assert path.is_file() and path.parent == demo_cache.cache_folder()
    _generator(monkeypatch, None)  # from now on the generator fails: the cache must serve
    again = demo_cache.demo_kb(0, city.content_hash)
    assert again is not city
    _same_kb(again, city)


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("GROUNDTRACE_CACHE", str(tmp_path / "b"))
    assert demo_cache.cache_folder() == tmp_path / "a" / "kb"
    monkeypatch.delenv("GROUNDTRACE_CACHE_DIR")
    assert demo_cache.cache_folder() == tmp_path / "b" / "kb"
    assert demo_cache.cache_path(3, "ab" * 32).name == f"demo-seed3-{'ab' * 12}.sqlite"


def test_without_a_hash_the_city_is_generated_and_nothing_is_cached(monkeypatch) -> None:
    small = generate_demo_kb(0, n_per_type=2)
    seeds = _generator(monkeypatch, small)
    assert demo_cache.demo_kb(4) is small and seeds == [4]
    assert small._stances is None  # not fitted: a caller that needs no stance or hash pays for none
    assert not demo_cache.cache_folder().exists()


def test_another_hash_is_a_miss(city, monkeypatch) -> None:
    demo_cache.remember(city, 0)
    other = "0" * 64
    assert demo_cache.cached(0, other) is None
    assert demo_cache.cached(1, city.content_hash) is None  # another seed, another file
    assert demo_cache.cached(0, "") is None


def test_a_modified_cache_file_is_refused_and_replaced(city, monkeypatch) -> None:
    path = demo_cache.remember(city, 0)
    assert path is not None
    conn = sqlite3.connect(path)
    with conn:
        rid, record = conn.execute("SELECT review_id, record FROM reviews ORDER BY review_id").fetchone()
        changed = json.loads(record)
        changed["text"] = changed["text"] + " Edited."
        conn.execute("UPDATE reviews SET record = ? WHERE review_id = ?", (json.dumps(changed), rid))
    conn.close()
    assert demo_cache.cached(0, city.content_hash) is None  # load_kb's integrity check refuses it
    seeds = _generator(monkeypatch, city)
    assert demo_cache.demo_kb(0, city.content_hash) is city and seeds == [0]
    _same_kb(demo_cache.cached(0, city.content_hash), city)  # the file was written again


def test_a_cache_that_cannot_be_written_is_skipped(city, monkeypatch, tmp_path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be", encoding="utf-8")
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(blocker))
    _generator(monkeypatch, city)
    assert demo_cache.remember(city, 0) is None
    assert demo_cache.demo_kb(0, city.content_hash) is city


def test_resolve_kb_reads_a_demo_dataset_s_city_from_the_cache(city, monkeypatch) -> None:
    manifest = {"kb_name": city.name, "kb_hash": city.content_hash}
    _generator(monkeypatch, city)
    assert resolve_kb(None, manifest, []) is city  # generated once, then cached
    _generator(monkeypatch, None)
    _same_kb(resolve_kb(None, manifest, []), city)
    _same_kb(resolve_kb("demo", manifest, []), city)  # --kb demo: the same file
    _same_kb(load_kb("demo:0", expected=city.content_hash), city)
    # a hash that neither the cache nor the generator has: refused as before
    _generator(monkeypatch, generate_demo_kb(0, n_per_type=2))
    with pytest.raises(ValueError, match="pass --kb"):
        resolve_kb(None, {**manifest, "kb_hash": "1" * 64}, [])


@pytest.mark.slow
def test_crs_build_on_the_demo_city_leaves_it_in_the_cache(tmp_path) -> None:
    out = tmp_path / "ds"
    result = CliRunner().invoke(
        app, ["crs", "build", "--kb", "demo", "--dialogues", "2", "--seed", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    path = demo_cache.cache_path(0, manifest["kb_hash"])
    assert path.is_file()
    kb = demo_cache.cached(0, manifest["kb_hash"])
    assert kb is not None and kb.name == manifest["kb_name"]
