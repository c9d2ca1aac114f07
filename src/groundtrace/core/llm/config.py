"""Where an LLM endpoint is configured: environment variables over an optional YAML config file.

Environment (each overrides the file):

* ``GROUNDTRACE_LLM`` — a full spec (``local``, ``openai:MODEL``, ``http://host:port/v1#MODEL``);
* ``GROUNDTRACE_LLM_BASE_URL``, ``GROUNDTRACE_LLM_MODEL``;
* ``GROUNDTRACE_LLM_API_KEY``, falling back to ``OPENAI_API_KEY``;
* ``GROUNDTRACE_LLM_CONFIG`` — the config file (default ``$XDG_CONFIG_HOME/groundtrace/llm.yaml``,
  i.e. ``~/.config/groundtrace/llm.yaml``; a missing default file is fine, a missing named one is not).

The file holds the same settings in lower case plus client options::

    spec: openai            # optional
    base_url: http://localhost:8000/v1
    model: qwen2.5-7b-instruct
    api_key_env: MY_KEY     # read the key from this variable (keys do not belong in files)
    timeout_s: 60
    max_retries: 4
    max_reasks: 2
    concurrency: 8
    structured: auto        # json_schema | json_object | prompt | auto
    transport: socket       # socket (default: a keep-alive socket per thread) | httpx | sdk (openai SDK)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from groundtrace.core.files.yaml_loader import YamlError, load_yaml_model
from groundtrace.core.llm.base import LLMError

CONFIG_ENV = "GROUNDTRACE_LLM_CONFIG"


class LLMConfigError(LLMError, ValueError):
    """The LLM configuration is missing or invalid."""


class _ConfigFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    max_reasks: int | None = Field(default=None, ge=0)
    concurrency: int | None = Field(default=None, ge=1)
    structured: Literal["json_schema", "json_object", "prompt", "auto"] | None = None
    transport: Literal["socket", "httpx", "sdk"] | None = None


class LLMSettings(BaseModel):
    """Resolved settings (``None`` = not configured)."""

    spec: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    max_reasks: int | None = None
    concurrency: int | None = None
    structured: str | None = None
    transport: str | None = None
    source: str = "environment"

    def client_options(self) -> dict[str, Any]:
        """The client keyword options that were set."""
        names = ("timeout_s", "max_retries", "max_reasks", "concurrency", "structured", "transport")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


def default_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    root = env.get("XDG_CONFIG_HOME")
    base = Path(root).expanduser() if root else Path.home() / ".config"
    return base / "groundtrace" / "llm.yaml"


def _read_file(path: Path) -> _ConfigFile:
    try:
        return load_yaml_model(path, _ConfigFile, empty={})
    except YamlError as exc:
        raise LLMConfigError(str(exc)) from None


def load_settings(config_path: str | Path | None = None, env: Mapping[str, str] | None = None) -> LLMSettings:
    """Merge the config file (if any) and the environment (which wins)."""
    env = os.environ if env is None else env
    named = config_path or env.get(CONFIG_ENV)
    path = Path(named).expanduser() if named else default_config_path(env)
    file_cfg = _ConfigFile()
    source = "environment"
    if path.is_file():
        file_cfg = _read_file(path)
        source = str(path)
    elif named:
        raise LLMConfigError(f"LLM config file not found: {path}")
    file_key = env.get(file_cfg.api_key_env) if file_cfg.api_key_env else None
    return LLMSettings(
        spec=env.get("GROUNDTRACE_LLM") or file_cfg.spec,
        base_url=env.get("GROUNDTRACE_LLM_BASE_URL") or file_cfg.base_url,
        model=env.get("GROUNDTRACE_LLM_MODEL") or file_cfg.model,
        api_key=env.get("GROUNDTRACE_LLM_API_KEY") or file_key or env.get("OPENAI_API_KEY"),
        timeout_s=file_cfg.timeout_s,
        max_retries=file_cfg.max_retries,
        max_reasks=file_cfg.max_reasks,
        concurrency=file_cfg.concurrency,
        structured=file_cfg.structured,
        transport=file_cfg.transport,
        source=source,
    )
