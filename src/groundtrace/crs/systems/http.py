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
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from groundtrace.core.llm.retry import RetriesExhaustedError, RetryPolicy, TransientError, parse_retry_after
from groundtrace.crs.systems.base import CRSSystem, SystemReply, TurnUsage
from groundtrace.crs.systems.predictions import SystemInput, SystemOutput

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class HTTPSystemError(RuntimeError):
    """The endpoint failed to give a valid answer (after retries for transient failures)."""


class _Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def is_url(text: str) -> bool:
    """True for ``http://`` / ``https://`` system specs."""
    return text.startswith(("http://", "https://"))


class HTTPSystem(CRSSystem):
    """POSTs each turn's SystemInput to ``url`` and reads a SystemOutput back (module docstring)."""

    thread_safe = True  # one httpx.Client (thread-safe connection pool) shared by the workers

    def __init__(
        self, url: str, *, timeout_s: float = 30.0, retries: int = 2, backoff_s: float = 0.5
    ) -> None:
        import httpx

        if not is_url(url):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.name = url
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
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
        """One POST; :class:`TransientError` for what is worth retrying, :class:`HTTPSystemError` else."""
        import httpx

        try:
            reply = self._client.post(self.url, json=body)
        except httpx.TimeoutException:
            raise TransientError(f"timed out after {self.timeout_s:g}s") from None
        except httpx.TransportError as exc:
            raise TransientError(f"transport error: {type(exc).__name__}: {exc}") from None
        if reply.status_code in RETRY_STATUS:
            raise TransientError(
                f"HTTP {reply.status_code}",
                status=reply.status_code,
                retry_after=parse_retry_after(reply.headers),
            )
        if reply.status_code != 200:
            raise HTTPSystemError(f"HTTP {reply.status_code} from {self.url}: {reply.text[:200]!r}")
        return reply.content


def parse_reply(content: bytes | str) -> SystemReply:
    """Validate an endpoint's JSON answer into a :class:`SystemReply` (raises :class:`HTTPSystemError`)."""
    import json

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
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise HTTPSystemError(f"invalid output: {where}: {first['msg']}") from None
    return SystemReply(output, TurnUsage(usage.prompt_tokens, usage.completion_tokens, usage.cost_usd))
