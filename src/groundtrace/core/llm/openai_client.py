"""Client for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama ...).

Three transports send the same body. ``transport="socket"`` (the default) and ``"httpx"`` post it straight
to the server and decode only the fields the engine reads (:mod:`~groundtrace.core.llm.http_wire`); a
synchronous request goes over one kept-alive socket per thread framed by h11
(:mod:`~groundtrace.core.llm.socket_wire`: two blocking system calls per request, so a thread gives the GIL
away twice instead of ten times) with ``socket``, over one httpx pool per thread with ``httpx``; both use
httpx for coroutines. ``transport="sdk"`` sends it through the openai SDK (~3 ms CPU per request: its
option objects, argument transforms and a pydantic model of the whole answer), for whoever wants the SDK's
own request handling. Decisions, retries and errors are the same on all three (the client tests run on
each).

Transport only; validation, re-asks, cache and ledger live in
:class:`~groundtrace.core.llm.engine.StructuredLLMClient`. The SDK's own retries are switched off
(``max_retries=0``) so every retry goes through our :class:`~groundtrace.core.llm.retry.RetryPolicy`:

* time-out, connection error, HTTP 429 and 5xx → retried with backoff (``Retry-After`` honoured);
* HTTP 400/404/422 whose message names the response format, on a structured request → the server does
  not support that ``response_format``; with ``structured="auto"`` the client falls back
  json_schema → json_object → prompt-only and remembers the mode that works;
* any other 4xx → :class:`~groundtrace.core.llm.base.LLMError` at once.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from typing import Any, Literal, Unpack

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.config import LLMSettings, load_settings
from groundtrace.core.llm.engine import EngineOptions, FormatRejectedError, StructuredLLMClient, WireAnswer
from groundtrace.core.llm.http_wire import FORMAT_WORDS, HttpWire, body_message
from groundtrace.core.llm.retry import RetryPolicy, TransientError, parse_retry_after

_FORMAT_WORDS = FORMAT_WORDS
NO_KEY_PLACEHOLDER = "not-needed"
Transport = Literal["socket", "httpx", "sdk"]
TRANSPORTS: tuple[Transport, ...] = ("socket", "httpx", "sdk")


def _openai() -> Any:
    try:
        import openai  # deferred: the optional [llm] extra (~0.6 s to import), only when a client is made
    except ImportError as exc:  # pragma: no cover - openai is a declared extra and installed in dev
        raise ImportError("the OpenAI client needs the openai SDK: pip install 'groundtrace[llm]'") from exc
    return openai


class OpenAIClient(StructuredLLMClient):
    """``OpenAIClient("gpt-4o-mini")`` or ``OpenAIClient("qwen", base_url="http://localhost:8000/v1")``."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        transport: Transport = "socket",
        **engine: Unpack[EngineOptions],
    ) -> None:
        if transport not in TRANSPORTS:
            raise LLMError(f"OpenAIClient transport must be one of {TRANSPORTS}, got {transport!r}")
        if not model:
            raise LLMError(
                "OpenAIClient needs a model name (set GROUNDTRACE_LLM_MODEL or use 'openai:MODEL')"
            )
        if engine.get("retry") is None:
            engine["retry"] = RetryPolicy(max_retries=max_retries)
        super().__init__(model, **{"structured": "auto", **engine})
        if api_key is None:
            api_key = load_settings().api_key
        if not api_key:
            if base_url is None:
                raise LLMError(
                    "no API key for the OpenAI endpoint: set GROUNDTRACE_LLM_API_KEY or OPENAI_API_KEY, "
                    "or give a base URL of a local server"
                )
            api_key = NO_KEY_PLACEHOLDER  # local servers (vLLM, llama.cpp, Ollama) ignore the key
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._api_key = api_key
        self.transport = transport
        self._wire: HttpWire | None = None
        self._client: Any = None
        if transport in ("socket", "httpx"):
            self._wire = HttpWire(
                model,
                base_url,
                api_key,
                timeout_s=timeout_s,
                pool=self.concurrency,
                sockets=transport == "socket",
            )
        else:
            openai = _openai()
            self._client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=0)
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._async_lock = threading.Lock()

    @classmethod
    def from_spec(cls, arg: str | None, settings: LLMSettings | None = None, **kw: Any) -> OpenAIClient:
        """Build from ``openai[:MODEL]`` plus env/config ``settings`` (keyword arguments win)."""
        settings = settings or load_settings()
        model = arg or kw.pop("model", None) or settings.model
        if not model:
            raise LLMError("spec 'openai' needs a model: use 'openai:MODEL' or set GROUNDTRACE_LLM_MODEL")
        options = settings.client_options()
        options.update(kw)
        options.setdefault("base_url", settings.base_url)
        options.setdefault("api_key", settings.api_key)
        return cls(model, **options)

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, base_url={self.base_url!r}, transport={self.transport!r})"

    # -- transport -------------------------------------------------------------------------------------
    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._async_lock:
            client = self._async_clients.get(loop)
            if client is None:
                client = _openai().AsyncOpenAI(
                    base_url=self.base_url, api_key=self._api_key, timeout=self.timeout_s, max_retries=0
                )
                self._async_clients[loop] = client
        return client

    def _post(self, payload: dict[str, Any]) -> WireAnswer:
        if self._wire is not None:
            return self._wire.post(payload)
        openai = _openai()
        try:
            response = self._client.chat.completions.create(**_sdk_arguments(self.model, payload))
        except openai.OpenAIError as exc:
            raise self._map_error(exc, payload) from exc
        except json.JSONDecodeError as exc:  # a 200 whose body is not JSON (proxy error page)
            raise TransientError(f"{self.model}: response body is not JSON: {exc}") from exc
        return self._answer(response)

    async def _apost(self, payload: dict[str, Any]) -> WireAnswer:
        if self._wire is not None:
            return await self._wire.apost(payload)
        openai = _openai()
        try:
            response = await self._async_client().chat.completions.create(
                **_sdk_arguments(self.model, payload)
            )
        except openai.OpenAIError as exc:
            raise self._map_error(exc, payload) from exc
        except json.JSONDecodeError as exc:  # a 200 whose body is not JSON (proxy error page)
            raise TransientError(f"{self.model}: response body is not JSON: {exc}") from exc
        return self._answer(response)

    def _answer(self, response: Any) -> WireAnswer:
        choices = getattr(response, "choices", None)
        if not choices:
            raise TransientError(f"{self.model}: response carried no choices: {str(response)[:200]!r}")
        choice = choices[0]
        message = choice.message
        text = message.content if message.content is not None else (getattr(message, "refusal", None) or "")
        usage = getattr(response, "usage", None)
        return WireAnswer(
            text=text,
            finish_reason=choice.finish_reason,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def _map_error(self, exc: Exception, payload: dict[str, Any]) -> LLMError:
        openai = _openai()
        where = f"{self.model} at {self.base_url or 'api.openai.com'}"
        if isinstance(exc, openai.APITimeoutError):
            return TransientError(f"{where}: timed out after {self.timeout_s}s")
        if isinstance(exc, openai.APIConnectionError):
            return TransientError(f"{where}: connection error: {exc}")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            message = _error_message(exc)
            if status == 429 or status >= 500:
                retry_after = parse_retry_after(dict(exc.response.headers))
                return TransientError(
                    f"{where}: HTTP {status}: {message}", retry_after=retry_after, status=status
                )
            if status in (400, 404, 422) and "response_format" in payload and _FORMAT_WORDS.search(message):
                return FormatRejectedError(f"{where}: HTTP {status}: {message}")
            return LLMError(f"{where}: HTTP {status}: {message}")
        if isinstance(exc, openai.APIResponseValidationError):
            return TransientError(f"{where}: malformed response body: {exc}")
        return LLMError(f"{where}: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Close the HTTP connection pool of the synchronous client."""
        if self._wire is not None:
            self._wire.close()
        else:
            self._client.close()


def _sdk_arguments(model: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``create`` arguments sending ``payload`` (a complete chat-completions body, plain JSON) as it is.

    The SDK walks every named argument against its typed parameter declarations before sending, which for
    a Scout prompt costs ~0.3 ms of CPU per request (measured: 0.39 vs 0.09 ms, ~7 % of the LLM Scout's
    client-side CPU per SKU) and changes nothing in a body that is plain JSON already. So the required
    ``messages`` argument is given empty and the body goes in ``extra_body``, which the SDK merges over
    the named arguments unchanged: the bytes on the wire are the body's (tests read them back from the
    wire server)."""
    return {"model": model, "messages": [], "extra_body": payload}


def _error_message(exc: Any) -> str:
    message = body_message(getattr(exc, "body", None))
    return message if message is not None else str(getattr(exc, "message", exc))
