"""make_llm specs, environment and config-file resolution, registry entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundtrace.core.llm.base import LLM_CLIENTS, LLMError
from groundtrace.core.llm.cache import ResponseCache
from groundtrace.core.llm.config import LLMConfigError, load_settings
from groundtrace.core.llm.factory import LLM_OPTION_HELP, make_llm, parse_spec
from groundtrace.core.llm.openai_client import OpenAIClient
from groundtrace.core.llm.wire_server import scripted


def test_registry_has_lazy_openai_and_local() -> None:
    assert {"openai", "local"} <= set(LLM_CLIENTS.names())
    assert "local-llm" in LLM_CLIENTS.meta("local")["install_hint"]
    assert LLM_CLIENTS.get("openai") is OpenAIClient


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("local", ("local", None, {})),
        ("openai", ("openai", None, {})),
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini", {})),
        ("http://127.0.0.1:8000/v1#qwen", ("openai", "qwen", {"base_url": "http://127.0.0.1:8000/v1"})),
        ("https://h/v1", ("openai", None, {"base_url": "https://h/v1"})),
    ],
)
def test_parse_spec(spec, expected) -> None:
    assert parse_spec(spec) == expected


def test_url_spec_builds_a_working_client(serve, tmp_path: Path) -> None:
    server = serve(scripted("pong"))
    client = make_llm(f"{server.base_url}#tiny", cache_path=tmp_path / "c.sqlite")
    assert isinstance(client, OpenAIClient) and client.model == "tiny"
    assert isinstance(client.cache, ResponseCache) and client.cache.path == tmp_path / "c.sqlite"
    assert client.complete([{"role": "user", "content": "ping"}]).text == "pong"
    assert server.requests[0]["model"] == "tiny"


def test_openai_spec_reads_env(monkeypatch, serve) -> None:
    server = serve(scripted("ok"))
    monkeypatch.setenv("GROUNDTRACE_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback")
    client = make_llm("openai:from-spec", no_cache=True)
    assert client.model == "from-spec" and client.cache is None and client._api_key == "sk-fallback"
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "gt-key")
    monkeypatch.setenv("GROUNDTRACE_LLM_MODEL", "from-env")
    client = make_llm("openai", no_cache=True)
    assert client.model == "from-env" and client._api_key == "gt-key"
    assert client.complete([{"role": "user", "content": "x"}]).text == "ok"


def test_none_spec_uses_env_or_fails_clearly(monkeypatch, serve) -> None:
    with pytest.raises(LLMConfigError, match="no LLM configured: pass --llm local"):
        make_llm(None)
    server = serve(scripted("ok"))
    monkeypatch.setenv("GROUNDTRACE_LLM", f"{server.base_url}#m1")
    assert make_llm(None, no_cache=True).model == "m1"
    monkeypatch.delenv("GROUNDTRACE_LLM")
    monkeypatch.setenv("GROUNDTRACE_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("GROUNDTRACE_LLM_MODEL", "m2")
    assert make_llm(None, no_cache=True).model == "m2"


def test_openai_without_model_is_an_error(monkeypatch) -> None:
    monkeypatch.setenv("GROUNDTRACE_LLM_API_KEY", "k")
    with pytest.raises(LLMError, match="openai:MODEL"):
        make_llm("openai", no_cache=True)


def test_unknown_spec_suggests_names() -> None:
    with pytest.raises(LLMConfigError, match="bad LLM spec 'opnai:gpt': .*Did you mean 'openai'"):
        make_llm("opnai:gpt", no_cache=True)


def test_config_file_and_env_precedence(monkeypatch, tmp_path: Path) -> None:
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(
        "base_url: http://file:1/v1\nmodel: file-model\napi_key_env: MY_KEY\ntimeout_s: 7\nmax_reasks: 1\n"
        "structured: prompt\n"
    )
    monkeypatch.setenv("MY_KEY", "from-my-key")
    settings = load_settings(cfg)
    assert (settings.base_url, settings.model, settings.api_key) == (
        "http://file:1/v1",
        "file-model",
        "from-my-key",
    )
    assert settings.client_options() == {"timeout_s": 7.0, "max_reasks": 1, "structured": "prompt"}
    monkeypatch.setenv("GROUNDTRACE_LLM_MODEL", "env-model")
    assert load_settings(cfg).model == "env-model"
    client = make_llm("openai", config_path=cfg, no_cache=True)
    assert (client.model, client.timeout_s, client.max_reasks, client.structured) == (
        "env-model",
        7.0,
        1,
        "prompt",
    )


def test_default_config_location(monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "xdg" / "groundtrace" / "llm.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("spec: local\n")
    assert load_settings().spec == "local" and load_settings().source == str(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model: [unclosed\n", r"llm\.yaml:\d+: invalid YAML"),
        ("- a list\n", r"llm\.yaml:1: expected a mapping"),
        ("modle: typo\n", r"llm\.yaml:1: modle: unknown key \(did you mean 'model'\?\)"),
        (
            "spec: local\nconcurrency: 0\n",
            r"llm\.yaml:2: concurrency: Input should be greater than or equal to 1",
        ),
    ],
)
def test_bad_config_files(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(text)
    with pytest.raises(LLMConfigError, match=message):
        load_settings(cfg)


def test_named_missing_config_is_an_error(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GROUNDTRACE_LLM_CONFIG", str(tmp_path / "nope.yaml"))
    with pytest.raises(LLMConfigError, match="not found"):
        load_settings()


def test_option_helper_text() -> None:
    from groundtrace.core.llm.factory import llm_option

    assert "local" in LLM_OPTION_HELP and "GROUNDTRACE_LLM_BASE_URL" in LLM_OPTION_HELP
    option = llm_option()
    assert option.help == LLM_OPTION_HELP and "--llm" in option.param_decls
