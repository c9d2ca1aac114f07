"""Build an LLM client from a spec string (what ``--llm`` takes).

Specs:

* ``local`` — the bundled SmolLM2-135M model (``local:/path/model.gguf`` for another GGUF);
* ``openai`` / ``openai:MODEL`` — an OpenAI-compatible endpoint; base URL, key and (without ``:MODEL``)
  model come from the environment or the config file (see :mod:`groundtrace.core.llm.config`);
* ``http://host:port/v1#MODEL`` (or ``https://``) — that endpoint and model, key from the environment;
* any other name registered in :data:`~groundtrace.core.llm.base.LLM_CLIENTS` (``name`` or
  ``name:ARG``); its class must offer ``from_spec(arg, **kw)``.

``None`` reads ``GROUNDTRACE_LLM``, else ``openai`` when a base URL or model is configured, else fails
with a message saying what to set. Unless ``no_cache`` is true every client gets the persistent
:class:`~groundtrace.core.llm.cache.ResponseCache` (at ``cache_path`` or the default location).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groundtrace.core.llm.base import LLM_CLIENTS, LLMClient
from groundtrace.core.llm.cache import ResponseCache
from groundtrace.core.llm.config import LLMConfigError, LLMSettings, load_settings
from groundtrace.core.registry import UnknownNameError

LLM_OPTION_HELP = (
    "LLM to use: 'local' (bundled SmolLM2-135M, offline), 'openai' or 'openai:MODEL' (OpenAI-compatible "
    "endpoint from GROUNDTRACE_LLM_BASE_URL / GROUNDTRACE_LLM_API_KEY / GROUNDTRACE_LLM_MODEL), or "
    "'http://host:port/v1#MODEL'. Default: $GROUNDTRACE_LLM."
)
"""Help text for a CLI ``--llm`` option; pass the option's value to :func:`make_llm`."""


def llm_option(default: str | None = None) -> Any:
    """A ``typer.Option`` for ``--llm`` with :data:`LLM_OPTION_HELP` (typer imported only when called)."""
    import typer  # deferred: typer (~15-65 ms) is for the CLI; library callers of make_llm never load it

    return typer.Option(default, "--llm", help=LLM_OPTION_HELP, envvar="GROUNDTRACE_LLM", show_envvar=False)


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """``(registry name, argument, extra client kwargs)`` for a spec string."""
    spec = spec.strip()
    if not spec:
        raise LLMConfigError("empty LLM spec; " + LLM_OPTION_HELP)
    if spec.startswith(("http://", "https://")):
        url, _, model = spec.partition("#")
        return "openai", (model or None), {"base_url": url}
    name, _, arg = spec.partition(":")
    return name, (arg or None), {}


def make_llm(
    spec: str | None = None,
    *,
    cache_path: str | Path | None = None,
    no_cache: bool = False,
    config_path: str | Path | None = None,
    **kw: Any,
) -> LLMClient:
    """The client ``spec`` names (see module docstring); ``kw`` go to the client constructor."""
    settings: LLMSettings = load_settings(config_path)
    if spec is None:
        spec = settings.spec or ("openai" if (settings.base_url or settings.model) else None)
    if spec is None:
        raise LLMConfigError(
            "no LLM configured: pass --llm local (bundled offline model) or --llm openai:MODEL, "
            "or set GROUNDTRACE_LLM / GROUNDTRACE_LLM_BASE_URL + GROUNDTRACE_LLM_MODEL"
        )
    name, arg, extra = parse_spec(spec)
    if "base_url" in extra and arg is None and not kw.get("model") and not settings.model:
        raise LLMConfigError(
            f"LLM spec {spec!r} names no model: add '#MODEL' to the URL (e.g. '{spec.rstrip('#')}#my-model') "
            "or set GROUNDTRACE_LLM_MODEL"
        )
    try:
        target = LLM_CLIENTS.get(name)
    except UnknownNameError as exc:
        raise LLMConfigError(f"bad LLM spec {spec!r}: {exc}") from exc
    if not hasattr(target, "from_spec"):
        raise LLMConfigError(f"LLM client {name!r} cannot be built from a spec (it has no from_spec)")
    options = {**extra, **kw}
    if "cache" not in options:
        options["cache"] = None if no_cache else ResponseCache(cache_path)
    if name == LLM_CLIENTS.canonical("openai"):
        options["settings"] = settings
    return target.from_spec(arg, **options)
