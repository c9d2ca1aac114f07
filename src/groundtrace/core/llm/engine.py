"""The shared request → validate → re-ask loop every concrete client runs (written once, sync and async).

A concrete client (:class:`~groundtrace.core.llm.openai_client.OpenAIClient`,
:class:`~groundtrace.core.llm.local.LocalLlamaClient`) only implements the transport: ``_post(payload)``
and ``_apost(payload)``, which send one chat-completions request body and return a :class:`WireAnswer`,
raising :class:`~groundtrace.core.llm.retry.TransientError` for retryable failures,
:class:`FormatRejectedError` when the server refuses the ``response_format``, and
:class:`~groundtrace.core.llm.base.LLMError` for anything else.

:class:`StructuredLLMClient` adds, in this order, for one ``complete`` call:

1. messages validated and normalised to ``{"role", "content"}`` dicts (``content`` a string or a list of
   text / ``image_url`` content parts); cache lookup (deterministic requests only);
2. the request is sent under the retry policy and the concurrency bound, which adapts to rate limits
   (:mod:`~groundtrace.core.llm.limiter`: halved on HTTP 429, +1 after a run of successes, every request
   paused for a ``Retry-After``);
3. with a schema: ``finish_reason == "length"`` → malformed (truncated); otherwise the outermost JSON
   object is extracted and validated; on failure the answer and a re-ask message carrying the error are
   appended and the request is sent again, at most ``max_reasks`` times; then
   :class:`~groundtrace.core.llm.base.SchemaMalformedError` with the raw text — never a guessed value;
4. a valid answer is cached; usage (tokens, retries, re-asks, cost) goes to the client's ledger even when
   the call fails.

The call is one generator program (:mod:`~groundtrace.core.llm.steps`) that yields effects — "send this
body", "sleep this long" — so re-asks, retries, back-off and fall-back are written once; ``complete``
and ``acomplete`` differ only in the pump that performs the effects.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, Unpack

from pydantic import BaseModel

from groundtrace.core.llm.base import (
    CallOptions,
    ChatMessage,
    Completion,
    LLMError,
    SchemaMalformedError,
    Usage,
)
from groundtrace.core.llm.cache import ResponseCache, cache_key, is_cacheable
from groundtrace.core.llm.content import key_messages
from groundtrace.core.llm.ledger import Ledger, PriceTable
from groundtrace.core.llm.limiter import AdaptiveLimit, LoopGate, ThreadGate
from groundtrace.core.llm.parsing import JSONExtractionError, extract_json_object
from groundtrace.core.llm.retry import RetriesExhaustedError, RetryPolicy, TransientError
from groundtrace.core.llm.schema import (
    OutputSchema,
    SchemaValidationFailure,
    as_output_schema,
)
from groundtrace.core.llm.steps import Program, Sleep, run_async, run_sync

log = logging.getLogger("groundtrace.llm")
StructuredMode = Literal["json_schema", "json_object", "prompt"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("json_schema", "json_object", "prompt")
Messages = Sequence[ChatMessage] | Sequence[dict[str, Any]]
SchemaArg = type[BaseModel] | dict[str, Any] | OutputSchema | None

REASK_INVALID = (
    "Your previous answer did not validate against the required JSON schema.\n"
    "Validation error:\n{error}\n"
    "Reply again with only the corrected JSON object."
)
REASK_TRUNCATED = (
    "Your previous answer was cut off before it was complete (it hit the output token limit). "
    "Reply again with a shorter, complete JSON object that validates against the schema."
)


class FormatRejectedError(LLMError):
    """The server refused the requested ``response_format`` (HTTP 400/404/422 on a structured request)."""


@dataclass(frozen=True)
class WireAnswer:
    """One answered request: the assistant text and what the server reported."""

    text: str
    finish_reason: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class LLMRequest:
    """One request for :meth:`StructuredLLMClient.complete_many`."""

    messages: Messages
    schema: SchemaArg = None
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None


class EngineOptions(TypedDict, total=False):
    """Keyword options every concrete client passes through to :class:`StructuredLLMClient`."""

    max_reasks: int
    concurrency: int
    cache: ResponseCache | None
    prices: PriceTable | None
    retry: RetryPolicy | None
    structured: StructuredMode | Literal["auto"]


@dataclass(frozen=True)
class _Post:
    """Effect: send this chat-completions body once."""

    payload: dict[str, Any]


@dataclass
class _Call:
    """State of one ``complete`` call."""

    messages: list[dict[str, Any]]
    schema: OutputSchema | None
    options: dict[str, Any]
    key: str | None
    usage: Usage = field(default_factory=Usage)
    priced: bool = True


def normalise_messages(messages: Messages) -> list[dict[str, Any]]:
    """Validate each message (``ChatMessage`` or dict) and return plain ``{"role", "content"}`` dicts.

    ``content`` stays a string when it is one; a list of content parts becomes a list of plain part dicts
    (``{"type": "text", "text"}``, ``{"type": "image_url", "image_url": {"url", "detail"?}}``).
    """
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        try:
            msg = message if isinstance(message, ChatMessage) else ChatMessage.model_validate(message)
            out.append(msg.wire())
        except Exception as exc:  # pydantic.ValidationError, TypeError
            raise ValueError(f"messages[{index}] is not a chat message: {exc}") from exc
    if not out:
        raise ValueError("messages must not be empty")
    return out


def build_payload(
    messages: list[dict[str, Any]], schema: OutputSchema | None, options: dict[str, Any], mode: StructuredMode
) -> dict[str, Any]:
    """The chat-completions body (without ``model``) for ``mode``.

    ``json_schema``: ``response_format = {"type": "json_schema", "json_schema": {name, strict, schema}}``;
    ``json_object``: ``{"type": "json_object"}`` plus a system message carrying the schema;
    ``prompt``: only the system message (a string, put before ``messages``, whose content — string or
    content parts — is sent unchanged). ``None`` options are omitted. The schema parts are the schema's
    shared, computed-once forms (``OutputSchema.wire_schema`` / ``instruction``): the body must be sent,
    never mutated.
    """
    body: dict[str, Any] = {key: value for key, value in options.items() if value is not None}
    if schema is None:
        body["messages"] = messages
        return body
    if mode == "json_schema":
        body["messages"] = messages
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": schema.name,
                "strict": True,
                "schema": schema.wire_schema,
            },
        }
        return body
    body["messages"] = [{"role": "system", "content": schema.instruction}, *messages]
    if mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


class StructuredLLMClient(ABC):
    """Shared behaviour of every concrete client (see module docstring)."""

    model: str

    def __init__(
        self,
        model: str,
        *,
        max_reasks: int = 2,
        concurrency: int = 8,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        retry: RetryPolicy | None = None,
        structured: StructuredMode | Literal["auto"] = "json_schema",
    ) -> None:
        if max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if structured != "auto" and structured not in STRUCTURED_MODES:
            raise ValueError(f"structured must be 'auto' or one of {STRUCTURED_MODES}, got {structured!r}")
        self.model = model
        self.max_reasks = max_reasks
        self.concurrency = concurrency
        self.cache = cache
        self.prices = prices if prices is not None else PriceTable.default()
        self.retry = retry if retry is not None else RetryPolicy()
        self.structured = structured
        self._mode: StructuredMode = "json_schema" if structured == "auto" else structured
        self.ledger = Ledger()
        self.limiter = AdaptiveLimit(maximum=concurrency, clock=lambda: self.retry.clock())
        self._thread_slots = ThreadGate(self.limiter)
        self._loop_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopGate] = (
            weakref.WeakKeyDictionary()
        )
        self._loop_slots_lock = threading.Lock()

    # -- transport (implemented by subclasses) -----------------------------------------------------------
    @abstractmethod
    def _post(self, payload: dict[str, Any]) -> WireAnswer:
        """Send one request body synchronously."""

    @abstractmethod
    async def _apost(self, payload: dict[str, Any]) -> WireAnswer:
        """Send one request body from a coroutine."""

    # -- public API ------------------------------------------------------------------------------------
    @property
    def structured_mode(self) -> StructuredMode:
        """The response-format mode now in use (``auto`` may have fallen back from ``json_schema``)."""
        return self._mode

    def usage(self) -> Usage:
        """Usage summed over every call this client made (the run's ledger)."""
        return self.ledger.total()

    def complete(
        self, messages: Messages, schema: SchemaArg = None, **options: Unpack[CallOptions]
    ) -> Completion:
        """Answer ``messages``; with ``schema`` the answer is validated (see module docstring)."""
        call = self._start(messages, schema, options)
        cached = self._from_cache(call)
        return cached if cached is not None else run_sync(self._program(call), self._perform)

    async def acomplete(
        self, messages: Messages, schema: SchemaArg = None, **options: Unpack[CallOptions]
    ) -> Completion:
        """Async twin of :meth:`complete`; at most ``concurrency`` requests are in flight per event loop."""
        call = self._start(messages, schema, options)
        cached = self._from_cache(call)
        return cached if cached is not None else await run_async(self._program(call), self._aperform)

    async def acomplete_many(
        self, requests: Iterable[LLMRequest], *, return_exceptions: bool = False
    ) -> list[Completion | BaseException]:
        """Run ``requests`` concurrently (bounded by ``concurrency``); results keep the input order.

        With ``return_exceptions=True`` a failed request yields its exception in place of a Completion.
        """
        tasks = [
            self.acomplete(
                r.messages, r.schema, temperature=r.temperature, max_tokens=r.max_tokens, seed=r.seed
            )
            for r in requests
        ]
        return list(await asyncio.gather(*tasks, return_exceptions=return_exceptions))

    def complete_many(
        self, requests: Iterable[LLMRequest], *, return_exceptions: bool = False
    ) -> list[Completion | BaseException]:
        """Synchronous entry to :meth:`acomplete_many` (call ``acomplete_many`` from inside a running
        loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.acomplete_many(requests, return_exceptions=return_exceptions))
        raise RuntimeError(
            "complete_many() called inside a running event loop; await acomplete_many() instead"
        )

    # -- the shared loop -------------------------------------------------------------------------------
    def _start(self, messages: Messages, schema: SchemaArg, options: CallOptions) -> _Call:
        unknown = set(options) - set(CallOptions.__annotations__)
        if unknown:
            raise TypeError(
                f"unknown completion option(s) {sorted(unknown)}; use {sorted(CallOptions.__annotations__)}"
            )
        msgs = normalise_messages(messages)
        out_schema = as_output_schema(schema)
        opts = {"temperature": 0.0, "max_tokens": None, "seed": None, **options}
        key = None
        if self.cache is not None and is_cacheable(opts["temperature"], opts["seed"]):
            key = cache_key(
                self.model, msgs, opts, None, schema_json=out_schema.canonical if out_schema else None
            )
        return _Call(messages=msgs, schema=out_schema, options=opts, key=key)

    def _from_cache(self, call: _Call) -> Completion | None:
        if call.key is None or self.cache is None:
            return None
        hit = self.cache.get(call.key)
        if hit is None:
            return None
        if hit.finish_reason == "length" and call.schema is not None:
            parsed, problem = None, "truncated"
        else:
            parsed, problem = self._check(call.schema, hit.text)
        if problem is not None:  # stored under an older validator: drop it and ask again
            self.cache.delete(call.key)
            return None
        usage = Usage(cache_hits=1)
        self.ledger.record(self.model, usage)
        return Completion(
            model=self.model,
            text=hit.text,
            parsed=parsed,
            usage=usage,
            cached=True,
            finish_reason=hit.finish_reason,
        )

    @staticmethod
    def _check(schema: OutputSchema | None, text: str) -> tuple[Any, str | None]:
        """``(parsed, None)`` when ``text`` validates, else ``(None, error text)``."""
        if schema is None:
            return None, None
        try:
            return schema.validate(extract_json_object(text)), None
        except (JSONExtractionError, SchemaValidationFailure) as exc:
            return None, str(exc)

    def _program(self, call: _Call) -> Program[Completion]:
        """The whole call as a program; its usage reaches the ledger however it ends."""
        try:
            return (yield from self._dialogue(call))
        finally:
            self._record(call)

    def _dialogue(self, call: _Call) -> Program[Completion]:
        messages = list(call.messages)
        answer: WireAnswer | None = None
        problem = ""
        for attempt in range(self.max_reasks + 1):
            answer = yield from self._exchange(call, messages)
            if call.schema is None:
                return self._finish(call, answer, None)
            truncated = answer.finish_reason == "length"
            if truncated:
                parsed, error = None, "the answer was truncated (finish_reason 'length')"
            else:
                parsed, error = self._check(call.schema, answer.text)
            if error is None:
                return self._finish(call, answer, parsed)
            problem = error
            if attempt < self.max_reasks:
                reask = REASK_TRUNCATED if truncated else REASK_INVALID.format(error=error)
                messages = [
                    *messages,
                    {"role": "assistant", "content": answer.text},
                    {"role": "user", "content": reask},
                ]
                call.usage = call.usage + Usage(reasks=1)
                log.info(
                    "%s: re-ask %d/%d: %s", self.model, attempt + 1, self.max_reasks, error.splitlines()[0]
                )
        assert answer is not None
        exc = SchemaMalformedError(
            f"{self.model}: answer did not validate against schema {call.schema.name!r} after "
            f"{self.max_reasks} re-ask(s): {problem.splitlines()[0] if problem else ''}",
            raw_text=answer.text,
            errors=problem,
        )
        exc.usage = call.usage  # type: ignore[attr-defined]
        raise exc

    def _finish(self, call: _Call, answer: WireAnswer, parsed: Any) -> Completion:
        if call.key is not None and self.cache is not None:
            self.cache.put(
                call.key,
                model=self.model,
                request={
                    "messages": key_messages(call.messages),  # data-URL images as their sha256
                    "options": call.options,
                    "schema": call.schema.name if call.schema else None,
                },
                text=answer.text,
                finish_reason=answer.finish_reason,
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
            )
        return Completion(
            model=self.model,
            text=answer.text,
            parsed=parsed,
            usage=call.usage,
            finish_reason=answer.finish_reason,
        )

    def _account(self, call: _Call, answer: WireAnswer, retries: int) -> None:
        cost = self.prices.cost(self.model, answer.prompt_tokens, answer.completion_tokens)
        if cost is None:
            call.priced = False
        call.usage = call.usage + Usage(
            calls=1,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            retries=retries,
            cost_usd=cost or 0.0,
        )

    def _record(self, call: _Call) -> None:
        if call.usage != Usage():
            self.ledger.record(self.model, call.usage, priced=call.priced)

    # -- transport with retries, mode fall-back and concurrency bound ----------------------------------
    def _downgrade(self, rejected: StructuredMode, exc: FormatRejectedError) -> None:
        if self.structured != "auto" or rejected == STRUCTURED_MODES[-1]:
            raise LLMError(f"{self.model}: server rejected response_format {rejected!r}: {exc}") from exc
        if self._mode == rejected:  # another coroutine may already have moved on
            self._mode = STRUCTURED_MODES[STRUCTURED_MODES.index(rejected) + 1]

    def _exchange(self, call: _Call, messages: list[dict[str, Any]]) -> Program[WireAnswer]:
        """One answered request: retries under the policy, response-format fall-back, accounting."""
        while True:
            mode = self._mode
            post = _Post(build_payload(messages, call.schema, call.options, mode))
            try:
                answer, retries = yield from self.retry.attempts(post)
            except RetriesExhaustedError as exc:
                call.usage = call.usage + Usage(retries=exc.retries)
                raise
            except FormatRejectedError as exc:
                self._downgrade(mode, exc)
                continue
            self._account(call, answer, retries)
            return answer

    # -- the two pumps: perform one effect, holding a concurrency slot while a request is in flight ------
    # The slot count is the client's adaptive limit (:mod:`~groundtrace.core.llm.limiter`): halved on a
    # 429, +1 after a run of successes; a ``Retry-After`` pauses every request of the client.
    def _perform(self, effect: _Post | Sleep) -> WireAnswer | None:
        if isinstance(effect, Sleep):
            return self.retry.sleep(effect.seconds)
        if (pause := self.limiter.pause_left()) > 0:
            self.retry.sleep(pause)
        window = self._thread_slots.acquire()
        try:
            answer = self._post(effect.payload)
        except TransientError as exc:
            self.limiter.failed(window, exc.status, exc.retry_after)
            raise
        finally:
            self._thread_slots.release()
        self.limiter.succeeded()
        return answer

    async def _aperform(self, effect: _Post | Sleep) -> WireAnswer | None:
        if isinstance(effect, Sleep):
            return await self.retry.asleep(effect.seconds)
        if (pause := self.limiter.pause_left()) > 0:
            await self.retry.asleep(pause)
        gate = self._loop_gate()
        window = await gate.acquire()
        try:
            answer = await self._apost(effect.payload)
        except TransientError as exc:
            self.limiter.failed(window, exc.status, exc.retry_after)
            raise
        finally:
            await gate.release()
        self.limiter.succeeded()
        return answer

    def _loop_gate(self) -> LoopGate:
        loop = asyncio.get_running_loop()
        with self._loop_slots_lock:
            gate = self._loop_slots.get(loop)
            if gate is None:
                gate = self._loop_slots[loop] = LoopGate(self.limiter)
        return gate
