"""A CRS system behind an HTTP endpoint (``groundtrace crs run --system http://host:port/path``).

Contract: for each recommendation turn the runner POSTs the :class:`SystemInput` as JSON
(``Content-Type: application/json``) and expects ``200`` with a :class:`SystemOutput` JSON object
``{"ranking": [...], "response": "..."}``, optionally with ``"usage": {"prompt_tokens": int,
"completion_tokens": int, "cost_usd": float}`` for LLM cost accounting. Other keys are an error.

Transport failures (connection errors, time-outs, HTTP 429 and 5xx) are retried ``retries`` times with
exponential backoff (``backoff_s · 2^attempt``); after that, or on any other status, a body that is not
JSON, or JSON that is not a valid output, :meth:`HTTPSystem.respond` raises :class:`HTTPSystemError` and
the runner marks that turn unscorable with the message. The gold labels are never sent.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

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
        import httpx

        body = inp.model_dump(mode="json")
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                reply = self._client.post(self.url, json=body)
            except httpx.TimeoutException:
                last = f"timed out after {self.timeout_s:g}s"
                continue
            except httpx.TransportError as exc:
                last = f"transport error: {type(exc).__name__}: {exc}"
                continue
            if reply.status_code in RETRY_STATUS:
                last = f"HTTP {reply.status_code}"
                continue
            if reply.status_code != 200:
                raise HTTPSystemError(f"HTTP {reply.status_code} from {self.url}: {reply.text[:200]!r}")
            return parse_reply(reply.content)
        raise HTTPSystemError(f"{self.url}: {last} ({self.retries + 1} attempts)")


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
