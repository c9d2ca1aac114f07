"""ResponseCache: canonical keys, cacheability rule, persistence, thread safety, stats."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.core.llm.cache import (
    ResponseCache,
    cache_key,
    canonical_json,
    default_cache_path,
    is_cacheable,
)

MSGS = [{"role": "user", "content": "hi"}]
OPTS = {"temperature": 0.0, "max_tokens": None, "seed": None}


def _put(cache: ResponseCache, key: str, text: str = "answer", model: str = "m") -> None:
    cache.put(
        key,
        model=model,
        request={"messages": MSGS},
        text=text,
        finish_reason="stop",
        prompt_tokens=10,
        completion_tokens=4,
    )


def test_key_is_sha256_of_canonical_json() -> None:
    import hashlib

    key = cache_key("m", MSGS, OPTS, None)
    expected_payload = (
        '{"messages":[{"content":"hi","role":"user"}],"model":"m",'
        '"options":{"max_tokens":null,"seed":null,"temperature":0.0},"schema":null}'
    )
    assert key == hashlib.sha256(expected_payload.encode()).hexdigest()


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6))
def test_canonical_json_ignores_key_order(mapping: dict) -> None:
    reordered = dict(reversed(list(mapping.items())))
    assert canonical_json(mapping) == canonical_json(reordered)
    assert cache_key("m", MSGS, mapping, None) == cache_key("m", MSGS, reordered, None)


def test_key_changes_with_each_part() -> None:
    base = cache_key("m", MSGS, OPTS, {"type": "object"})
    assert base != cache_key("m2", MSGS, OPTS, {"type": "object"})
    assert base != cache_key("m", [{"role": "user", "content": "hi!"}], OPTS, {"type": "object"})
    assert base != cache_key("m", MSGS, {**OPTS, "seed": 1}, {"type": "object"})
    assert base != cache_key("m", MSGS, OPTS, {"type": "object", "title": "X"})
    assert base != cache_key("m", MSGS, OPTS, None)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=12,
    )
)
def test_key_from_a_serialised_schema_equals_the_key_from_the_schema(schema: object) -> None:
    """``schema_json=canonical_json(schema)`` (serialised once per schema) gives the very same key, so a
    cache written before the shortcut still answers."""
    wrapped = {"type": "object", "x": schema}
    assert cache_key("m", MSGS, OPTS, None, schema_json=canonical_json(wrapped)) == cache_key(
        "m", MSGS, OPTS, wrapped
    )


def test_cacheable_rule() -> None:
    assert is_cacheable(0.0, None)
    assert not is_cacheable(0.2, None)
    assert is_cacheable(0.2, 11)


def test_default_path_honours_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_path() == tmp_path / "c" / "llm.sqlite"
    monkeypatch.delenv("GROUNDTRACE_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "groundtrace" / "llm.sqlite"


def test_roundtrip_persistence_and_stats(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "llm.sqlite"
    with ResponseCache(path) as cache:
        _put(cache, "k1", model="a")
        _put(cache, "k2", model="b")
        _put(cache, "k1", text="replaced", model="a")  # upsert, not a second row
        assert len(cache) == 2
    with ResponseCache(path) as cache:
        hit = cache.get("k1")
        assert hit is not None and hit.text == "replaced" and hit.prompt_tokens == 10
        cache.get("k1")
        assert cache.get("missing") is None
        stats = cache.stats()
    # two hits on k1 (10 prompt + 4 completion tokens each): 20 + 8 tokens saved
    assert stats["entries"] == 2 and stats["hits"] == 2
    assert (stats["prompt_tokens_saved"], stats["completion_tokens_saved"]) == (20, 8)
    assert stats["by_model"]["a"]["hits"] == 2 and stats["by_model"]["b"]["hits"] == 0
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1


def test_concurrent_threads_do_not_corrupt(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "llm.sqlite") as cache:

        def work(worker: int) -> None:
            for i in range(25):
                _put(cache, f"{worker}-{i}", text=f"{worker}/{i}")
                assert cache.get(f"{worker}-{i}").text == f"{worker}/{i}"

        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(cache) == 100 and cache.stats()["hits"] == 100
        assert cache.clear() == 100 and len(cache) == 0
