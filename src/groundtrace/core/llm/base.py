"""The LLM client contract every agent and realiser depends on (and nothing more).

``client.complete(messages, schema=Model)`` returns a :class:`Completion` whose ``parsed`` is a validated
instance of ``Model`` (or ``None`` when no schema was given) plus token :class:`Usage`. When the model
keeps answering with output that does not validate, after a bounded number of re-asks the client raises
:class:`SchemaMalformedError` — it never guesses a value.

Implementations are registered in :data:`LLM_CLIENTS` (``openai`` for any OpenAI-compatible endpoint,
``local`` for the bundled llama.cpp model) and built from a spec string by
``groundtrace.core.llm.factory.make_llm``.

A message's ``content`` is a string, or a list of OpenAI content parts (``{"type": "text", "text"}``,
``{"type": "image_url", "image_url": {"url", "detail"?}}``) for vision models; see
:mod:`groundtrace.core.llm.content` for the helpers that read them (text, token estimate, images).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Protocol, Self, TypedDict, Unpack, runtime_checkable

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from groundtrace.core.registry import Registry

_DATA_URL = re.compile(r"data:image/[\w.+-]+;base64,[A-Za-z0-9+/]+={0,2}\Z")


class TextPart(BaseModel):
    """A text content part: ``{"type": "text", "text": ...}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["text"]
    text: str


class ImageURL(BaseModel):
    """Where an image is: a base64 ``data:image/...;base64,...`` URL or an ``http(s)://`` URL."""

    model_config = ConfigDict(extra="forbid")

    url: str
    detail: Literal["auto", "low", "high"] | None = None

    @field_validator("url")
    @classmethod
    def _url_is_data_or_http(cls, url: str) -> str:
        if url.startswith(("http://", "https://")) or _DATA_URL.match(url):
            return url
        raise ValueError(
            f"image_url.url must be 'data:image/<type>;base64,<data>' or an http(s) URL, got {url[:40]!r}"
        )


class ImagePart(BaseModel):
    """An image content part: ``{"type": "image_url", "image_url": {"url": ..., "detail"?: ...}}``."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["image_url"]
    image_url: ImageURL


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]
"""One OpenAI chat content part (text or image), told apart by ``type``."""


def _content_kind(content: Any) -> str | None:
    """Which form of ``content`` to validate: a string, a list of parts, or neither (``None``).

    Choosing the branch from the value's type means a bad part list reports only the list's errors
    (not also "Input should be a valid string"), and a string only the string's.
    """
    if isinstance(content, str):
        return "str"
    if isinstance(content, list | tuple):
        return "list"
    return None


MessageContent = Annotated[
    Annotated[str, Tag("str")] | Annotated[list[ContentPart], Field(min_length=1), Tag("list")],
    Discriminator(
        _content_kind,
        custom_error_type="content_type",
        custom_error_message="content must be a string or a non-empty list of content parts",
    ),
]
"""A message's ``content``: a string or a non-empty list of :data:`ContentPart`."""


class ChatMessage(BaseModel):
    """One chat message in the OpenAI wire format.

    ``content`` is a string or a non-empty list of content parts (:class:`TextPart`, :class:`ImagePart`);
    image parts are only allowed in ``user`` messages (as on the OpenAI API).
    """

    role: Literal["system", "user", "assistant"]
    content: MessageContent

    @model_validator(mode="after")
    def _images_only_from_the_user(self) -> Self:
        images = isinstance(self.content, list) and any(isinstance(p, ImagePart) for p in self.content)
        if images and self.role != "user":
            raise ValueError(f"image content parts are only allowed in user messages, not {self.role!r}")
        return self

    def wire(self) -> dict[str, Any]:
        """The plain ``{"role", "content"}`` dict sent on the wire (``detail`` omitted when unset)."""
        if isinstance(self.content, str):
            return {"role": self.role, "content": self.content}
        return {"role": self.role, "content": [part.model_dump(exclude_none=True) for part in self.content]}


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


ChatMessages = list[ChatMessage] | list[dict[str, Any]]


class CallOptions(TypedDict, total=False):
    """Keyword options of ``complete``/``acomplete``, all optional; ``None`` values are not sent.

    ``temperature`` (default 0.0; > 0 is cached only with a ``seed``), ``max_tokens``, ``seed``.
    """

    temperature: float
    max_tokens: int | None
    seed: int | None


@runtime_checkable
class LLMClient(Protocol):
    """What agents may rely on. ``messages`` are :class:`ChatMessage` or ``{"role", "content"}`` dicts.

    ``content`` is a string or a list of OpenAI content parts (text and ``image_url``); a client whose
    model cannot read images raises :class:`LLMError` for a message carrying one.
    """

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
