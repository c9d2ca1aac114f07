"""Fixtures for the LLM client tests: a real OpenAIClient against a local WireServer, fast retries."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from groundtrace.core.llm.cache import ResponseCache
from groundtrace.core.llm.ledger import PriceTable
from groundtrace.core.llm.openai_client import OpenAIClient
from groundtrace.core.llm.retry import RetryPolicy
from groundtrace.core.llm.wire_server import Responder, WireServer

# Test prices: USD per 1M tokens (see test_ledger_sums for the arithmetic).
TEST_PRICES = PriceTable.from_rules([{"pattern": "priced-*", "input": 2.0, "output": 8.0}])


class SleepRecorder:
    """Injected sleep: records the requested delays instead of waiting, and a fake clock that only a
    sleep advances (the client's Retry-After pause is measured on it)."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.now = 0.0

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self(seconds)

    def clock(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's LLM settings, cache or config file."""
    for name in (
        "GROUNDTRACE_LLM",
        "GROUNDTRACE_LLM_BASE_URL",
        "GROUNDTRACE_LLM_MODEL",
        "GROUNDTRACE_LLM_API_KEY",
        "GROUNDTRACE_LLM_CONFIG",
        "GROUNDTRACE_LLM_PRICES",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GROUNDTRACE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def sleeper() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def serve() -> Iterator[Callable[[Responder], WireServer]]:
    servers: list[WireServer] = []

    def start(responder: Responder) -> WireServer:
        server = WireServer(responder).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(params=["socket", "httpx", "sdk"])
def make_client(sleeper: SleepRecorder, request: pytest.FixtureRequest) -> Callable[..., OpenAIClient]:
    """A client on each transport (``socket``, the default, ``httpx`` and the openai ``sdk``): every
    client test checks that all three make the same decisions."""

    def build(
        server: WireServer, *, model: str = "priced-test", max_retries: int = 3, **kw: object
    ) -> OpenAIClient:
        retry = RetryPolicy(
            max_retries=max_retries,
            rng=random.Random(7),
            sleep=sleeper,
            asleep=sleeper.asleep,
            clock=sleeper.clock,
        )
        kw.setdefault("timeout_s", 5.0)
        kw.setdefault("prices", TEST_PRICES)
        kw.setdefault("transport", request.param)
        return OpenAIClient(model, base_url=server.base_url, api_key="test-key", retry=retry, **kw)  # type: ignore[arg-type]

    return build


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[ResponseCache]:
    with ResponseCache(tmp_path / "llm.sqlite") as c:
        yield c
