"""The chat-completions request sent straight to the server: one keep-alive connection per thread.

:class:`HttpWire` is the transport of :class:`~groundtrace.core.llm.openai_client.OpenAIClient` for
``transport="socket"`` (the default: a synchronous request goes over this thread's socket,
:mod:`~groundtrace.core.llm.socket_wire`, unless a proxy is configured in the environment) and
``transport="httpx"`` (over this thread's ``httpx.Client``); coroutines use one ``httpx.AsyncClient`` per
event loop on both, and ``transport="sdk"`` sends through the openai SDK instead. It posts the body the
engine built (``{"model", **payload}``) to ``{base_url}/chat/completions`` and reads back only what the
engine uses — the first choice's text and finish reason and the token usage — so a request costs one
``msgspec`` encode, one httpx round trip and one typed ``msgspec`` decode. The SDK's per-request work
(option and header objects, argument transforms, a pydantic ``ChatCompletion`` built from the whole
answer) measured ~3.0 ms of CPU per Scout request against the local wire server, this path ~1 ms
(``benchmarks/bench_store.py --section cpu``, docs/catalog-store.md).

What the SDK did and this keeps: ``Authorization: Bearer <key>``, the ``OpenAI-Organization`` /
``OpenAI-Project`` headers from ``OPENAI_ORG_ID`` / ``OPENAI_PROJECT_ID`` when set, the time-out, HTTP
keep-alive. The pools: one ``httpx.Client`` per calling thread (a thread has one request in flight, so
its pool holds one kept-alive connection) and one ``httpx.AsyncClient`` per event loop (up to
``max(concurrency, 20)`` idle connections). One ``httpx.Client`` shared by 64 threads cost 2.6-2.8 ms of
CPU per request against 0.6 ms with a client per thread (its pool's lock and connection scans are paid
under the GIL; measured against the wire server at 64 threads). Errors map as the SDK path maps them:

* time-out, connection error, HTTP 429 and 5xx, a 200 whose body is not a chat completion →
  :class:`~groundtrace.core.llm.retry.TransientError` (``Retry-After`` / ``retry-after-ms`` read);
* HTTP 400/404/422 naming the response format on a structured request →
  :class:`~groundtrace.core.llm.engine.FormatRejectedError`;
* any other status → :class:`~groundtrace.core.llm.base.LLMError`.
"""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import threading
import urllib.request
import weakref
from typing import Any
from urllib.parse import urlsplit

import httpx
import msgspec

from groundtrace.core.llm.base import LLMError
from groundtrace.core.llm.engine import FormatRejectedError, WireAnswer
from groundtrace.core.llm.retry import TransientError, parse_retry_after
from groundtrace.core.llm.socket_wire import SocketPool, WireError, WireTimeout

DEFAULT_BASE_URL = "https://api.openai.com/v1"
USER_AGENT = "groundtrace"
FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|structured", re.IGNORECASE)


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _Choice(msgspec.Struct):
    message: _Message
    finish_reason: str | None = None


class _Usage(msgspec.Struct):
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0


class _Completion(msgspec.Struct):
    """The part of a chat completion the engine reads (every other field is skipped by the decoder)."""

    choices: list[_Choice] = []
    usage: _Usage | None = None


_DECODE = msgspec.json.Decoder(_Completion)
_ENCODE = msgspec.json.Encoder()
_SSL: list[ssl.SSLContext] = []
_SSL_LOCK = threading.Lock()


def _ssl_context() -> ssl.SSLContext:
    """httpx's default verifying context, made once per process and shared by every pool: loading the CA
    bundle costs ~55 ms, which each new client (and each worker process of a sharded run) paid before."""
    with _SSL_LOCK:
        if not _SSL:
            _SSL.append(httpx.create_ssl_context())
        return _SSL[0]


class _Pool:
    """A thread's ``httpx.Client``, held in thread-local storage (weak-referenceable for its finalizer)."""

    __slots__ = ("__weakref__", "client")

    def __init__(self, client: httpx.Client) -> None:
        self.client = client


class HttpWire:
    """POST chat-completions bodies for ``model`` at ``base_url`` (module docstring); thread-safe (each
    thread sends on its own pool)."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str,
        *,
        timeout_s: float,
        pool: int = 20,
        sockets: bool = False,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.timeout_s = timeout_s
        self.headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        for env, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            if value := os.environ.get(env):
                self.headers[header] = value
        self.limits = httpx.Limits(max_connections=None, max_keepalive_connections=max(pool, 20))
        self._local = threading.local()
        self._clients: weakref.WeakSet[httpx.Client] = weakref.WeakSet()  # every thread's, for close()
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        # sync requests on one blocking socket per thread (socket_wire), unless a proxy is configured
        self._sockets: SocketPool | None = None
        if sockets and not proxied(self.url):
            tls = _ssl_context() if self.url.startswith("https:") else None
            self._sockets = SocketPool(self.url, timeout_s, tls)
            self._head = [("User-Agent", USER_AGENT), *self.headers.items()]

    def body(self, payload: dict[str, Any]) -> bytes:
        """The request bytes: ``payload`` (a complete chat body without ``model``) with the model first."""
        return _ENCODE.encode({"model": self.model, **payload})

    def post(self, payload: dict[str, Any]) -> WireAnswer:
        """Send one body and return its answer, raising the module docstring's errors."""
        if self._sockets is not None:
            try:
                got = self._sockets.post(self._head, self.body(payload))
            except WireTimeout as exc:
                raise TransientError(f"{self._where()}: timed out after {self.timeout_s}s") from exc
            except WireError as exc:
                raise TransientError(f"{self._where()}: connection error: {exc!r}") from exc
            return self.answer(got.status, got.headers, got.content, payload)
        try:
            response = self._thread_client().post(self.url, content=self.body(payload))
        except httpx.TimeoutException as exc:
            raise TransientError(f"{self._where()}: timed out after {self.timeout_s}s") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"{self._where()}: connection error: {exc!r}") from exc
        return self.answer(response.status_code, response.headers, response.content, payload)

    async def apost(self, payload: dict[str, Any]) -> WireAnswer:
        """:meth:`post` from a coroutine (the event loop's own ``AsyncClient``)."""
        try:
            response = await self._async_client().post(self.url, content=self.body(payload))
        except httpx.TimeoutException as exc:
            raise TransientError(f"{self._where()}: timed out after {self.timeout_s}s") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"{self._where()}: connection error: {exc!r}") from exc
        return self.answer(response.status_code, response.headers, response.content, payload)

    def answer(self, status: int, headers: Any, content: bytes, payload: dict[str, Any]) -> WireAnswer:
        """The :class:`WireAnswer` of a 2xx response, else the error its status maps to."""
        if status >= 300:
            raise self.status_error(status, headers, content, payload)
        try:
            done = _DECODE.decode(content)
        except msgspec.DecodeError as exc:  # not JSON (a proxy's error page) or not a chat completion
            raise TransientError(f"{self._where()}: malformed response body: {exc}") from exc
        if not done.choices:
            raise TransientError(f"{self._where()}: response carried no choices: {content[:200]!r}")
        choice = done.choices[0]
        text = choice.message.content
        if text is None:
            text = choice.message.refusal or ""
        usage = done.usage or _Usage()
        return WireAnswer(
            text=text,
            finish_reason=choice.finish_reason,
            prompt_tokens=int(usage.prompt_tokens or 0),
            completion_tokens=int(usage.completion_tokens or 0),
        )

    def status_error(self, status: int, headers: Any, content: bytes, payload: dict[str, Any]) -> LLMError:
        message = error_message(content)
        where = self._where()
        if status == 429 or status >= 500:
            retry_after = parse_retry_after(dict(headers))
            return TransientError(
                f"{where}: HTTP {status}: {message}", retry_after=retry_after, status=status
            )
        if status in (400, 404, 422) and "response_format" in payload and FORMAT_WORDS.search(message):
            return FormatRejectedError(f"{where}: HTTP {status}: {message}")
        return LLMError(f"{where}: HTTP {status}: {message}")

    def _where(self) -> str:
        return f"{self.model} at {self.base_url}"

    def _thread_client(self) -> httpx.Client:
        """This thread's client, made on its first request and closed when the thread ends (its holder in
        the thread-local storage goes then, and a finalizer closes the pool: no socket is left open)."""
        holder: _Pool | None = getattr(self._local, "pool", None)
        if holder is None:
            client = httpx.Client(
                timeout=self.timeout_s,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=2),
                headers=self.headers,
                verify=_ssl_context(),
            )
            holder = _Pool(client)
            weakref.finalize(holder, client.close)
            self._local.pool = holder
            with self._lock:
                self._clients.add(client)
        return holder.client

    def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async.get(loop)
            if client is None:
                client = httpx.AsyncClient(
                    timeout=self.timeout_s, limits=self.limits, headers=self.headers, verify=_ssl_context()
                )
                self._async[loop] = client
        return client

    def close(self) -> None:
        """Close the threads' connection pools (an event loop's pool goes with its loop)."""
        if self._sockets is not None:
            self._sockets.close()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            client.close()


def proxied(url: str) -> bool:
    """Whether the environment names a proxy for ``url`` (``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``ALL_PROXY``,
    not bypassed by ``NO_PROXY``): httpx honours these, the socket path does not, so it is not used."""
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.netloc)


def body_message(body: object) -> str | None:
    """The message of a decoded OpenAI-style error body (``{"error": {"message": ...}}``, ``{"error":
    "..."}`` or ``{"message": ...}``), or None when it holds none."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return None


def error_message(content: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's text (at most 500 chars)."""
    try:
        body = msgspec.json.decode(content)
    except msgspec.DecodeError:
        return content[:500].decode("utf-8", "replace").strip() or "(empty body)"
    message = body_message(body)
    return message if message is not None else str(body)[:500]
