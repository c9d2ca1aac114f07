"""The LLM client contract every agent and realiser depends on (and nothing more).

``client.complete(messages, schema=Model)`` returns a :class:`Completion` whose ``parsed`` is a validated
instance of ``Model`` (or ``None`` when no schema was given) plus token :class:`Usage`. When the model
keeps answering with output that does not validate, after a bounded number of re-asks the client raises
:class:`SchemaMalformedError` — it never guesses a value.

Implementations are registered in :data:`LLM_CLIENTS` (``openai`` for any OpenAI-compatible endpoint,
``local`` for the bundled llama.cpp model) and built from a spec string by
``groundtrace.core.llm.factory.make_llm``.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypedDict, Unpack, runtime_checkable

from pydantic import BaseModel, Field

from groundtrace.core.registry import Registry


class ChatMessage(BaseModel):
    """One chat message in the OpenAI wire format."""

    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    """Token and cost accounting for one call, or summed over many (a ledger).

    ``calls`` counts answered requests sent to the model (re-asks included, cache hits excluded);
    ``retries`` transport retries (time-outs, 429, 5xx); ``reasks`` schema re-asks; ``cache_hits``
    answers served from the response cache (they cost no tokens).
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0
    retries: int = 0
    cost_usd: float = 0.0
    reasks: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_hits=self.cache_hits + other.cache_hits,
            retries=self.retries + other.retries,
            cost_usd=self.cost_usd + other.cost_usd,
            reasks=self.reasks + other.reasks,
        )


class Completion(BaseModel):
    """The answer to one request: raw text, the validated object (if a schema was given), usage."""

    model: str
    text: str
    parsed: Any = None
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False
    finish_reason: str | None = None


class LLMError(RuntimeError):
    """A call failed for good (after retries): transport error, refusal, exhausted budget."""


class SchemaMalformedError(LLMError):
    """The model's output never validated against the requested schema, even after re-asks.

    ``raw_text`` is the last answer; ``errors`` the last validation error text. Callers record this as
    the ``SCHEMA_MALFORMED`` outcome; they must not fall back to a guessed value.
    """

    def __init__(self, message: str, *, raw_text: str = "", errors: str = "") -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.errors = errors


ChatMessages = list[ChatMessage] | list[dict[str, str]]


class CallOptions(TypedDict, total=False):
    """Keyword options of ``complete``/``acomplete``, all optional; ``None`` values are not sent.

    ``temperature`` (default 0.0; > 0 is cached only with a ``seed``), ``max_tokens``, ``seed``.
    """

    temperature: float
    max_tokens: int | None
    seed: int | None


@runtime_checkable
class LLMClient(Protocol):
    """What agents may rely on. ``messages`` are :class:`ChatMessage` or ``{"role", "content"}`` dicts."""

    model: str

    def complete(
        self, messages: ChatMessages, schema: type[BaseModel] | None = None, **options: Unpack[CallOptions]
    ) -> Completion: ...

    async def acomplete(
        self, messages: ChatMessages, schema: type[BaseModel] | None = None, **options: Unpack[CallOptions]
    ) -> Completion: ...

    def usage(self) -> Usage:
        """Usage summed over every call this client made (the run's ledger)."""
        ...


LLM_CLIENTS: Registry[Any] = Registry("LLM client")
