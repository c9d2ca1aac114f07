"""A CRS system behind an HTTP endpoint (``groundtrace crs run --system http://host:port/path``).

Contract: for each recommendation turn the runner POSTs the :class:`SystemInput` as JSON
(``Content-Type: application/json``) and expects ``200`` with a :class:`SystemOutput` JSON object
``{"ranking": [...], "response": "..."}``, optionally with ``"usage": {"prompt_tokens": int,
"completion_tokens": int, "cost_usd": float}`` for LLM cost accounting. Other keys are an error.

Transport failures (connection errors, time-outs, HTTP 429 and 5xx) are retried ``retries`` times by
the core retry policy (:class:`groundtrace.core.llm.retry.RetryPolicy`, no jitter): a wait of
``backoff_s · 2^k`` before retry ``k`` (0-based), or the server's ``Retry-After`` (capped at 60 s). After
that, or on any other status, a body that is not JSON, or JSON that is not a valid output,
:meth:`HTTPSystem.respond` raises :class:`HTTPSystemError` and the runner marks that turn unscorable with
the message. The gold labels are never sent.

Bounds (an endpoint is untrusted):

* ``timeout_s`` is the **total** time of one attempt — connecting, sending, waiting and reading the
  whole body — not the gap between two bytes: a server dripping one byte per second cannot hold a turn
  longer than ``timeout_s``. The attempt runs in a helper thread the caller stops waiting for at the
  deadline; that thread stops reading at its next chunk (or at httpx's own per-read time-out, also
  ``timeout_s``), so an abandoned attempt lives at most ``2 × timeout_s``.
* A body over ``max_response_bytes`` (default :data:`MAX_RESPONSE_BYTES` = 1 MiB; by ``Content-Length``
  or while reading) is refused without reading further: :class:`HTTPSystemError`, not retried.
* Usage numbers must be finite and >= 0 (a ``NaN`` cost is an invalid output).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundtrace.core.files.jsonl import MAX_JSON_DEPTH, json_depth
from groundtrace.core.files.validation import validation_message
from groundtrace.core.llm.retry import RetriesExhaustedError, RetryPolicy, TransientError, parse_retry_after
from groundtrace.crs.systems.base import CRSSystem, SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RESPONSE_BYTES = 1 << 20


class HTTPSystemError(RuntimeError):
    """The endpoint failed to give a valid answer (after retries for transient failures)."""


class _Usage(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0.0)


class _Attempt:
    """One POST in a helper thread, with a deadline the thread also checks between chunks."""

    def __init__(self, system: HTTPSystem, body: dict[str, Any]) -> None:
        self.system = system
        self.body = body
        self.deadline = time.monotonic() + system.timeout_s
        self.done = threading.Event()
        self.result: bytes | None = None
        self.error: BaseException | None = None

    def run(self) -> bytes:
        """The response body, or :class:`TransientError` / :class:`HTTPSystemError`."""
        thread = threading.Thread(target=self._work, name="crs-http", daemon=True)
        thread.start()
        if not self.done.wait(self.system.timeout_s):
            raise TransientError(f"timed out after {self.system.timeout_s:g}s (total per request)")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result

    def _work(self) -> None:
        try:
            self.result = self._post()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            self.error = exc
        finally:
            self.done.set()

    def _post(self) -> bytes:
        import httpx  # deferred: httpx (+ rich, idna: ~60 ms) is not loaded with the systems registry

        system, limit = self.system, self.system.max_response_bytes
        try:
            with system._client.stream("POST", system.url, json=self.body) as reply:
                if reply.status_code in RETRY_STATUS:
                    raise TransientError(
                        f"HTTP {reply.status_code}",
                        status=reply.status_code,
                        retry_after=parse_retry_after(reply.headers),
                    )
                declared = reply.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise HTTPSystemError(_too_large(limit, f"Content-Length {int(declared):,}"))
                chunks: list[bytes] = []
                size = 0
                for chunk in reply.iter_bytes():
                    size += len(chunk)
                    if size > limit:
                        raise HTTPSystemError(_too_large(limit, f"{size:,} bytes read"))
                    if time.monotonic() > self.deadline:
                        raise TransientError(f"timed out after {system.timeout_s:g}s (total per request)")
                    chunks.append(chunk)
                content = b"".join(chunks)
                if reply.status_code != 200:
                    raise HTTPSystemError(f"HTTP {reply.status_code} from {system.url}: {content[:200]!r}")
                return content
        except httpx.TimeoutException:
            raise TransientError(f"timed out after {system.timeout_s:g}s") from None
        except httpx.TransportError as exc:
            raise TransientError(f"transport error: {type(exc).__name__}: {exc}") from None


def _too_large(limit: int, seen: str) -> str:
    return f"response over the {limit:,}-byte limit ({seen}; raise it with --max-response-bytes)"


def is_url(text: str) -> bool:
    """True for ``http://`` / ``https://`` system specs."""
    return text.startswith(("http://", "https://"))


class HTTPSystem(CRSSystem):
    """POSTs each turn's SystemInput to ``url`` and reads a SystemOutput back (module docstring)."""

    thread_safe = True  # one httpx.Client (thread-safe connection pool) shared by the workers

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        # deferred: httpx (~60 ms with its deps) loads only when an HTTP system is made, not with the registry
        import httpx

        if not is_url(url):
            raise ValueError(f"not an http(s) URL: {url!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        if max_response_bytes < 1:
            raise ValueError(f"max_response_bytes must be >= 1, got {max_response_bytes!r}")
        self.url = url
        self.name = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_response_bytes = max_response_bytes
        self._client = httpx.Client(timeout=timeout_s)

    def config(self) -> dict[str, Any]:
        return {"url": self.url}

    def close(self) -> None:
        self._client.close()

    def respond(self, inp: SystemInput) -> SystemReply:
        body = inp.model_dump(mode="json")
        policy = self.retry_policy()
        try:
            content, _retries = policy.run(lambda: self._post(body))
        except RetriesExhaustedError as exc:
            raise HTTPSystemError(f"{self.url}: {exc.__cause__} ({self.retries + 1} attempts)") from None
        return parse_reply(content)

    def retry_policy(self) -> RetryPolicy:
        """The core retry policy of this endpoint: ``retries`` retries, ``backoff_s · 2^k``, no jitter."""
        return RetryPolicy(max_retries=self.retries, base_delay_s=self.backoff_s, jitter=0.0)

    def _post(self, body: dict[str, Any]) -> bytes:
        """One POST within the total time-out (:class:`_Attempt`); :class:`TransientError` for what is
        worth retrying, :class:`HTTPSystemError` else."""
        return _Attempt(self, body).run()


def parse_reply(content: bytes | str) -> SystemReply:
    """Validate an endpoint's JSON answer into a :class:`SystemReply` (raises :class:`HTTPSystemError`)."""
    raw = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and json_depth(raw) > MAX_JSON_DEPTH:
        raise HTTPSystemError(f"response JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HTTPSystemError(f"response is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HTTPSystemError(f"response must be a JSON object, got {type(data).__name__}")
    usage_data = data.pop("usage", None)
    try:
        output = SystemOutput.model_validate(data)
        usage = _Usage.model_validate(usage_data or {})
    except ValidationError as exc:
        prefix = ("usage",) if exc.title == _Usage.__name__ else ()
        raise HTTPSystemError(f"invalid output: {validation_message(exc, prefix=prefix)}") from None
    return SystemReply(output, TurnUsage(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd))
