"""A tiny local HTTP server speaking the OpenAI chat-completions wire format, for tests and demos.

It lets every LLM path be exercised end-to-end through the real HTTP client, with no network and no
monkeypatching::

    def answer(request: dict) -> str | Reply:
        return '{"value": "oak"}'          # the assistant message content

    with WireServer(answer) as server:
        client = OpenAIClient(model="test", base_url=server.base_url, api_key="x")
        ...
        server.requests                      # every JSON request body received, in order
                                             # (WireServer(answer, keep_requests=False): none kept)

A responder returns either the assistant ``content`` string or a :class:`Reply` to inject failures:
an HTTP status (429, 500 ...), a delay (to trigger client time-outs), a raw body (malformed JSON), or
explicit usage numbers. A message's ``content`` may be a string or a list of OpenAI content parts
(``text`` / ``image_url``); anything else is answered with HTTP 400 like a real server. The reported
``prompt_tokens`` (unless a Reply sets them) count the text of every message with
:func:`~groundtrace.core.evidence.tokens.count_tokens` plus the fixed per-image estimate of
:mod:`groundtrace.core.llm.content`. Only ``POST /v1/chat/completions`` (and ``/chat/completions``) is served;
``GET /v1/models`` lists one model.

``server.in_flight`` / ``server.max_in_flight`` count chat requests being handled at once (to check a
client's concurrency bound), and :func:`scripted` turns a list of replies into a responder.
:func:`rate_limited` wraps a responder in a simulated rate limit — HTTP 429 with ``Retry-After`` for a
share of requests, or for every request over a concurrency cap — to test adaptive concurrency.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import msgspec

from groundtrace.core.evidence.tokens import count_tokens
from groundtrace.core.llm.content import messages_tokens

_MSGSPEC = msgspec.json.Decoder()


def _decode(raw: bytes) -> Any:
    """A request body parsed by msgspec (a 26 KB Scout request costs ~3x less CPU than with ``json.loads``,
    and the server shares the machine with the client it serves in the benchmarks); what msgspec refuses
    but ``json.loads`` reads (a lone surrogate escape ``\\ud800``) goes to ``json.loads``, so the server
    accepts exactly what it did."""
    try:
        return _MSGSPEC.decode(raw)
    except msgspec.DecodeError:
        return json.loads(raw)


@dataclass
class Reply:
    """A scripted answer: normal content, or an injected failure."""

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    raw_body: str | None = None
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    headers: dict[str, str] | None = None
    error_message: str | None = None  # message of an injected error body (status != 200)


Responder = Callable[[dict[str, Any]], "str | Reply"]


def scripted(*replies: str | Reply) -> Responder:
    """A responder answering the n-th request with ``replies[n]`` (the last one repeats)."""
    if not replies:
        raise ValueError("scripted() needs at least one reply")
    lock = threading.Lock()
    served = [0]

    def respond(_request: dict[str, Any]) -> str | Reply:
        with lock:
            index = min(served[0], len(replies) - 1)
            served[0] += 1
        return replies[index]

    return respond


class RateLimit:
    """A simulated rate limit around ``responder`` (see :func:`rate_limited`); counts what it did."""

    def __init__(
        self,
        responder: Responder,
        *,
        share: float = 0.0,
        first: int | None = None,
        max_in_flight: int | None = None,
        retry_after_s: float | None = 1.0,
    ) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share must be in [0, 1], got {share}")
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        self.responder = responder
        self.share, self.first, self.max_in_flight = share, first, max_in_flight
        self.retry_after_s = retry_after_s
        self.seen = 0  # requests received
        self.limited = 0  # answered 429
        self.in_flight = 0  # admitted requests being answered
        self._lock = threading.Lock()

    def _refuse(self, index: int) -> bool:
        """Request ``index`` (0-based) gets a 429: over the cap, or one of the deterministic ``share``
        (request i when ``floor((i + 1) × share) > floor(i × share)``) among the ``first`` requests."""
        if self.max_in_flight is not None and self.in_flight >= self.max_in_flight:
            return True
        if self.first is not None and index >= self.first:
            return False
        return int((index + 1) * self.share) > int(index * self.share)

    def __call__(self, request: dict[str, Any]) -> str | Reply:
        with self._lock:
            index, self.seen = self.seen, self.seen + 1
            refused = self._refuse(index)
            if refused:
                self.limited += 1
            else:
                self.in_flight += 1
        if refused:
            headers = {} if self.retry_after_s is None else {"Retry-After": f"{self.retry_after_s:g}"}
            return Reply(status=429, headers=headers, error_message="rate limit reached (simulated)")
        try:
            answer = self.responder(request)
            reply = answer if isinstance(answer, Reply) else Reply(content=answer)
            if reply.delay_s:  # answered here, so the request counts as in flight while it waits
                time.sleep(reply.delay_s)
            return dataclasses.replace(reply, delay_s=0.0)
        finally:
            with self._lock:
                self.in_flight -= 1


def rate_limited(
    responder: Responder,
    *,
    share: float = 0.0,
    first: int | None = None,
    max_in_flight: int | None = None,
    retry_after_s: float | None = 1.0,
) -> RateLimit:
    """``responder`` behind a simulated rate limit: HTTP 429 (with ``Retry-After: retry_after_s`` unless
    ``None``) for a deterministic ``share`` of the requests — only among the ``first`` requests when
    given, so a client can be seen to recover — and for every request that arrives while
    ``max_in_flight`` admitted requests are being answered."""
    return RateLimit(
        responder, share=share, first=first, max_in_flight=max_in_flight, retry_after_s=retry_after_s
    )


def _content_problem(request: dict[str, Any]) -> str | None:
    """Why the request's messages are malformed (content neither a string nor content parts), or None."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            continue
        if not isinstance(content, list) or not content:
            return f"messages[{index}].content must be a string or a non-empty array of content parts"
        for number, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                continue
            if (
                kind == "image_url"
                and isinstance(part.get("image_url"), dict)
                and part["image_url"].get("url")
            ):
                continue
            return f"messages[{index}].content[{number}] is not a text or image_url content part"
    return None


def _chat_body(request: dict[str, Any], reply: Reply, counter: int) -> dict[str, Any]:
    content = reply.content or ""
    messages = request.get("messages", [])
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else messages_tokens(messages)
    completion_tokens = (
        reply.completion_tokens if reply.completion_tokens is not None else count_tokens(content)
    )
    return {
        "id": f"chatcmpl-local-{counter}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "local-test"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class WireServer:
    """Serve ``responder`` on ``127.0.0.1:<free port>`` in a background thread (context manager)."""

    def __init__(
        self, responder: Responder, host: str = "127.0.0.1", port: int = 0, *, keep_requests: bool = True
    ) -> None:
        """``keep_requests=False`` keeps no request body (``requests`` stays empty; ``received`` counts
        them): a benchmark's thousands of parsed bodies would otherwise stay alive, and every full garbage
        collection of the server process would walk them all."""
        self.responder = responder
        self.keep_requests = keep_requests
        self.requests: list[dict[str, Any]] = []
        self.received = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # client gave up (time-out test)
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200, json.dumps({"object": "list", "data": [{"id": "local-test", "object": "model"}]})
                    )
                else:
                    self._send(404, json.dumps({"error": {"message": "not found"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))
                    return
                request = _decode(raw)
                problem = _content_problem(request)
                if problem is not None:
                    self._send(
                        400, json.dumps({"error": {"message": problem, "type": "invalid_request_error"}})
                    )
                    return
                with server._lock:
                    if server.keep_requests:
                        server.requests.append(request)
                    server.received += 1
                    counter = server.received
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(request, counter)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, request: dict[str, Any], counter: int) -> None:
                answer = server.responder(request)
                reply = answer if isinstance(answer, Reply) else Reply(content=answer)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.raw_body is not None:
                    self._send(reply.status, reply.raw_body, reply.headers)
                elif reply.status != 200:
                    message = reply.error_message or f"injected HTTP {reply.status}"
                    err = {"error": {"message": message, "type": "injected", "code": reply.status}}
                    self._send(reply.status, json.dumps(err), reply.headers)
                else:
                    self._send(200, json.dumps(_chat_body(request, reply, counter)), reply.headers)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` — what an OpenAI client takes as ``base_url``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> WireServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
