"""LLM client: one small interface (messages + optional pydantic schema -> parsed object + usage).

Importing this package is cheap; the OpenAI SDK and llama.cpp load only when a client is built.
"""

from groundtrace.core.llm.base import (
    LLM_CLIENTS,
    ChatMessage,
    Completion,
    LLMClient,
    LLMError,
    SchemaMalformedError,
    Usage,
)

__all__ = [
    "LLM_CLIENTS",
    "ChatMessage",
    "Completion",
    "LLMClient",
    "LLMError",
    "SchemaMalformedError",
    "Usage",
]
