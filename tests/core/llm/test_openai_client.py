"""The real OpenAIClient (openai SDK over HTTP) against a local WireServer: no monkeypatching."""

from __future__ import annotations

import json
import random
import socket

import pytest
from pydantic import BaseModel, Field

from groundtrace.core.llm.base import LLMClient, LLMError, SchemaMalformedError
from groundtrace.core.llm.engine import REASK_TRUNCATED, LLMRequest
from groundtrace.core.llm.openai_client import OpenAIClient
from groundtrace.core.llm.retry import RetriesExhaustedError
from groundtrace.core.llm.wire_server import Reply, scripted


class Place(BaseModel):
    name: str
    stars: int = Field(ge=1, le=5)


VALID = '{"name": "Oak Bistro", "stars": 4}'
ASK = [{"role": "user", "content": "Recommend one place as JSON."}]


def test_valid_schema_answer(serve, make_client) -> None:
    server = serve(scripted(Reply(content=VALID, prompt_tokens=100, completion_tokens=20)))
    client = make_client(server)
    assert isinstance(client, LLMClient)
    done = client.complete(ASK, Place)
    assert done.parsed == Place(name="Oak Bistro", stars=4)
    assert done.text == VALID and done.finish_reason == "stop" and not done.cached
    assert (done.usage.calls, done.usage.prompt_tokens, done.usage.completion_tokens) == (1, 100, 20)
    assert done.usage.retries == 0 and done.usage.reasks == 0
    [request] = server.requests
    assert request["model"] == "priced-test"
    assert request["messages"] == ASK
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "Place"
    assert fmt["json_schema"]["schema"]["required"] == ["name", "stars"]
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False


def test_fenced_answer_with_prose_is_parsed(serve, make_client) -> None:
    server = serve(scripted(f"Here you go:\n```json\n{VALID}\n```\nEnjoy!"))
    assert make_client(server).complete(ASK, Place).parsed == Place(name="Oak Bistro", stars=4)


def test_plain_text_without_schema(serve, make_client) -> None:
    server = serve(scripted("Try Oak Bistro."))
    done = make_client(server).complete([{"role": "user", "content": "hi"}])
    assert done.text == "Try Oak Bistro." and done.parsed is None
    assert "response_format" not in server.requests[0]


def test_429_then_success_honours_retry_after(serve, make_client, sleeper) -> None:
    server = serve(scripted(Reply(status=429, headers={"Retry-After": "3"}), VALID))
    client = make_client(server)
    done = client.complete(ASK, Place)
    assert done.parsed.stars == 4
    assert done.usage.retries == 1 and done.usage.calls == 1
    assert sleeper.delays == [3.0]
    assert len(server.requests) == 2
    assert client.usage().retries == 1


def test_500_twice_then_success_uses_seeded_backoff(serve, make_client, sleeper) -> None:
    server = serve(scripted(Reply(status=500), Reply(status=503), VALID))
    done = make_client(server).complete(ASK, Place)
    assert done.usage.retries == 2 and len(server.requests) == 3
    # delay_k = min(20, 0.5 * 2**k) * (1 - 0.5 * u_k), u_k from random.Random(7) (the fixture's seed)
    rng = random.Random(7)
    expected = [0.5 * (1 - 0.5 * rng.random()), 1.0 * (1 - 0.5 * rng.random())]
    assert sleeper.delays == pytest.approx(expected)
    assert 0.25 <= sleeper.delays[0] <= 0.5 and 0.5 <= sleeper.delays[1] <= 1.0


def test_timeout_then_success(serve, make_client) -> None:
    server = serve(scripted(Reply(content=VALID, delay_s=3.0), VALID))
    done = make_client(server, timeout_s=1.0).complete(ASK, Place)
    assert done.parsed.name == "Oak Bistro"
    assert done.usage.retries == 1
    assert len(server.requests) == 2


def test_persistent_500_fails_after_max_retries(serve, make_client, sleeper) -> None:
    server = serve(scripted(Reply(status=500)))
    client = make_client(server, max_retries=3)
    with pytest.raises(RetriesExhaustedError, match="HTTP 500") as info:
        client.complete(ASK, Place)
    assert isinstance(info.value, LLMError)
    assert len(server.requests) == 4  # first try + 3 retries
    assert len(sleeper.delays) == 3
    assert client.usage().retries == 3 and client.usage().calls == 0


def test_connection_refused_is_retried_then_fails(make_client, sleeper) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    class Dead:
        base_url = f"http://127.0.0.1:{port}/v1"

    with pytest.raises(RetriesExhaustedError, match="connection error"):
        make_client(Dead(), max_retries=2).complete(ASK, Place)
    assert len(sleeper.delays) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_fail_at_once(serve, make_client, sleeper, status) -> None:
    server = serve(scripted(Reply(status=status), VALID))
    with pytest.raises(LLMError, match=f"HTTP {status}") as info:
        make_client(server).complete(ASK, Place)
    assert not isinstance(info.value, RetriesExhaustedError)
    assert len(server.requests) == 1 and sleeper.delays == []


def test_malformed_body_is_retried(serve, make_client) -> None:
    server = serve(scripted(Reply(raw_body="<html>proxy error</html>"), VALID))
    done = make_client(server).complete(ASK, Place)
    assert done.parsed.stars == 4 and done.usage.retries == 1


def test_malformed_json_then_valid_after_reask(serve, make_client) -> None:
    server = serve(scripted('Sure! {"name": "Oak Bistro", "stars": }', VALID))
    done = make_client(server).complete(ASK, Place)
    assert done.parsed == Place(name="Oak Bistro", stars=4)
    assert (done.usage.calls, done.usage.reasks) == (2, 1)
    second = server.requests[1]["messages"]
    assert second[: len(ASK)] == ASK
    assert second[-2] == {"role": "assistant", "content": 'Sure! {"name": "Oak Bistro", "stars": }'}
    assert second[-1]["role"] == "user" and "invalid JSON" in second[-1]["content"]


def test_reask_message_carries_the_validation_error(serve, make_client) -> None:
    server = serve(scripted('{"name": "Oak Bistro", "stars": 9}', VALID))
    done = make_client(server).complete(ASK, Place)
    assert done.parsed.stars == 4
    reask = server.requests[1]["messages"][-1]["content"]
    assert "stars" in reask and "less than or equal to 5" in reask


def test_truncated_json_is_reasked(serve, make_client) -> None:
    server = serve(scripted(Reply(content='{"name": "Oak Bis', finish_reason="length"), VALID))
    done = make_client(server).complete(ASK, Place, max_tokens=8)
    assert done.parsed.name == "Oak Bistro" and done.usage.reasks == 1
    assert server.requests[1]["messages"][-1]["content"] == REASK_TRUNCATED
    assert server.requests[0]["max_tokens"] == 8


def test_length_finish_is_malformed_even_when_text_parses(serve, make_client) -> None:
    server = serve(scripted(Reply(content=VALID, finish_reason="length"), '{"name": "Elm", "stars": 2}'))
    assert make_client(server).complete(ASK, Place).parsed.name == "Elm"


def test_always_invalid_raises_schema_malformed_with_raw_text(serve, make_client) -> None:
    server = serve(scripted('{"name": "Oak"}', '{"name": "Oak", "stars": "many"}', '{"stars": 2}'))
    client = make_client(server, max_reasks=2)
    with pytest.raises(SchemaMalformedError) as info:
        client.complete(ASK, Place)
    assert info.value.raw_text == '{"stars": 2}'
    assert "name" in info.value.errors and "Field required" in info.value.errors
    assert len(server.requests) == 3
    spent = client.usage()
    assert (spent.calls, spent.reasks) == (3, 2)


def test_zero_reasks_fails_on_first_bad_answer(serve, make_client) -> None:
    server = serve(scripted("no json here", VALID))
    with pytest.raises(SchemaMalformedError, match="no JSON object"):
        make_client(server, max_reasks=0).complete(ASK, Place)
    assert len(server.requests) == 1


def test_auto_falls_back_to_json_object_and_remembers(serve, make_client) -> None:
    def responder(request: dict) -> str | Reply:
        if request.get("response_format", {}).get("type") == "json_schema":
            return Reply(status=400, error_message="response_format type 'json_schema' is not supported")
        return VALID

    server = serve(responder)
    client = make_client(server, structured="auto")
    assert client.complete(ASK, Place).parsed.stars == 4
    assert client.structured_mode == "json_object"
    second = server.requests[1]
    assert second["response_format"] == {"type": "json_object"}
    assert second["messages"][0]["role"] == "system" and '"stars"' in second["messages"][0]["content"]
    client.complete([{"role": "user", "content": "another"}], Place)
    assert len(server.requests) == 3  # the json_schema mode is not tried again


def test_fixed_mode_does_not_fall_back(serve, make_client) -> None:
    server = serve(scripted(Reply(status=400, error_message="unknown field response_format")))
    with pytest.raises(LLMError, match="rejected response_format 'json_schema'"):
        make_client(server, structured="json_schema").complete(ASK, Place)


def test_prompt_only_mode_sends_no_response_format(serve, make_client) -> None:
    server = serve(scripted(VALID))
    make_client(server, structured="prompt").complete(ASK, Place)
    request = server.requests[0]
    assert "response_format" not in request
    instruction = request["messages"][0]["content"]
    assert json.loads(instruction.split("\n", 1)[1])["properties"]["stars"]["maximum"] == 5


def test_bad_messages_are_rejected_before_sending(serve, make_client) -> None:
    server = serve(scripted(VALID))
    with pytest.raises(ValueError, match=r"messages\[0\]"):
        make_client(server).complete([{"role": "wizard", "content": "x"}], Place)
    assert server.requests == []


# -- cache -------------------------------------------------------------------------------------------


def test_identical_request_is_served_from_cache(serve, make_client, cache) -> None:
    server = serve(scripted(Reply(content=VALID, prompt_tokens=50, completion_tokens=10)))
    client = make_client(server, cache=cache)
    first = client.complete(ASK, Place)
    second = client.complete(ASK, Place)
    assert len(server.requests) == 1
    assert not first.cached and second.cached
    assert second.parsed == first.parsed
    assert second.usage.cache_hits == 1 and second.usage.calls == 0 and second.usage.cost_usd == 0
    total = client.usage()
    assert (total.calls, total.cache_hits, total.prompt_tokens) == (1, 1, 50)


class PlaceV2(BaseModel):
    name: str
    stars: int = Field(ge=1, le=5)
    city: str = "unknown"


def test_cache_misses_when_schema_or_options_change(serve, make_client, cache) -> None:
    server = serve(scripted('{"name": "Oak Bistro", "stars": 4, "city": "Reno"}'))
    client = make_client(server, cache=cache)
    client.complete(ASK, Place)
    client.complete(ASK, PlaceV2)  # other schema
    client.complete(ASK, Place, max_tokens=64)  # other option
    client.complete(ASK, Place, seed=1)  # other option
    client.complete([{"role": "user", "content": "Another place?"}], Place)  # other prompt
    assert len(server.requests) == 5
    client.complete(ASK, PlaceV2)
    assert len(server.requests) == 5 and len(cache) == 5


def test_sampled_requests_are_not_cached_unless_seeded(serve, make_client, cache) -> None:
    server = serve(scripted(VALID))
    client = make_client(server, cache=cache)
    client.complete(ASK, Place, temperature=0.7)
    client.complete(ASK, Place, temperature=0.7)
    assert len(server.requests) == 2 and len(cache) == 0
    client.complete(ASK, Place, temperature=0.7, seed=3)
    assert client.complete(ASK, Place, temperature=0.7, seed=3).cached
    assert len(server.requests) == 3


def test_failed_calls_are_not_cached(serve, make_client, cache) -> None:
    server = serve(scripted("nope"))
    client = make_client(server, cache=cache, max_reasks=0)
    for _ in range(2):
        with pytest.raises(SchemaMalformedError):
            client.complete(ASK, Place)
    assert len(server.requests) == 2 and len(cache) == 0


def test_cache_persists_across_client_instances(serve, make_client, tmp_path) -> None:
    from groundtrace.core.llm.cache import ResponseCache

    server = serve(scripted(VALID))
    with ResponseCache(tmp_path / "shared.sqlite") as first_cache:
        make_client(server, cache=first_cache).complete(ASK, Place)
    with ResponseCache(tmp_path / "shared.sqlite") as second_cache:
        done = make_client(server, cache=second_cache).complete(ASK, Place)
        assert done.cached and done.parsed.stars == 4
        assert second_cache.stats()["hits"] == 1
    assert len(server.requests) == 1


# -- ledger ------------------------------------------------------------------------------------------


def test_ledger_sums_tokens_and_cost(serve, make_client) -> None:
    server = serve(
        scripted(
            Reply(content=VALID, prompt_tokens=1000, completion_tokens=500),
            Reply(content="bad", prompt_tokens=2000, completion_tokens=100),
            Reply(content=VALID, prompt_tokens=1000, completion_tokens=150),
        )
    )
    client = make_client(server)  # "priced-test": $2 / 1M prompt tokens, $8 / 1M completion tokens
    first = client.complete(ASK, Place)
    second = client.complete(ASK, Place)  # one re-ask: 2000+100 then 1000+150 tokens
    # first:  1000*2/1e6 + 500*8/1e6 = 0.002 + 0.004 = 0.006
    # second: (2000+1000)*2/1e6 + (100+150)*8/1e6 = 0.006 + 0.002 = 0.008
    assert first.usage.cost_usd == pytest.approx(0.006)
    assert second.usage.cost_usd == pytest.approx(0.008)
    total = client.usage()
    assert total.cost_usd == pytest.approx(0.014)
    assert (total.calls, total.prompt_tokens, total.completion_tokens, total.reasks) == (3, 4000, 750, 1)
    assert client.ledger.unpriced_models == set()
    assert client.ledger.to_dict()["by_model"]["priced-test"]["calls"] == 3


def test_unknown_model_costs_zero_and_is_flagged(serve, make_client) -> None:
    server = serve(scripted(Reply(content=VALID, prompt_tokens=1000, completion_tokens=500)))
    client = make_client(server, model="mystery-model")
    assert client.complete(ASK, Place).usage.cost_usd == 0.0
    assert client.ledger.unpriced_models == {"mystery-model"}
    assert client.usage().prompt_tokens == 1000


# -- async -------------------------------------------------------------------------------------------


def _echo_slow(request: dict) -> Reply:
    number = request["messages"][-1]["content"]
    return Reply(content=json.dumps({"name": f"place {number}", "stars": 3}), delay_s=0.15)


@pytest.mark.parametrize("bound", [1, 3])
@pytest.mark.slow
def test_async_concurrency_bound_is_respected(serve, make_client, bound) -> None:
    server = serve(_echo_slow)
    client = make_client(server, concurrency=bound)
    requests = [LLMRequest(messages=[{"role": "user", "content": str(i)}], schema=Place) for i in range(9)]
    results = client.complete_many(requests)
    assert [r.parsed.name for r in results] == [f"place {i}" for i in range(9)]  # input order kept
    assert len(server.requests) == 9
    assert server.max_in_flight <= bound
    if bound > 1:
        assert server.max_in_flight >= 2  # requests did overlap


def test_complete_many_can_return_exceptions(serve, make_client) -> None:
    def responder(request: dict) -> str:
        return "garbage" if request["messages"][0]["content"] == "bad" else VALID

    server = serve(responder)
    client = make_client(server, max_reasks=0)
    results = client.complete_many(
        [LLMRequest(messages=[{"role": "user", "content": c}], schema=Place) for c in ("ok", "bad", "ok2")],
        return_exceptions=True,
    )
    assert results[0].parsed.stars == 4 and results[2].parsed.stars == 4
    assert isinstance(results[1], SchemaMalformedError) and results[1].raw_text == "garbage"


def test_async_retries_use_the_injected_sleep(serve, make_client, sleeper) -> None:
    import asyncio

    server = serve(scripted(Reply(status=429, headers={"retry-after-ms": "1500"}), VALID))
    client = make_client(server)
    done = asyncio.run(client.acomplete(ASK, Place))
    assert done.usage.retries == 1 and sleeper.delays == [1.5]
    # the client works again on a fresh event loop (per-loop semaphores and HTTP clients)
    assert asyncio.run(client.acomplete(ASK, Place)).parsed.stars == 4


def test_complete_many_refuses_inside_a_running_loop(serve, make_client) -> None:
    import asyncio

    client = make_client(serve(scripted(VALID)))

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="acomplete_many"):
            client.complete_many([LLMRequest(messages=ASK)])

    asyncio.run(inside())


def test_missing_api_key_without_base_url_is_a_clear_error() -> None:
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        OpenAIClient("gpt-4o-mini")


def test_stale_cache_entry_that_no_longer_validates_is_replaced(serve, make_client, cache) -> None:
    from groundtrace.core.llm.cache import cache_key

    key = cache_key(
        "priced-test", ASK, {"temperature": 0.0, "max_tokens": None, "seed": None}, Place.model_json_schema()
    )
    cache.put(
        key,
        model="priced-test",
        request={},
        text='{"name": "Old", "stars": 0}',
        finish_reason="stop",
        prompt_tokens=1,
        completion_tokens=1,
    )
    server = serve(scripted(VALID))
    done = make_client(server, cache=cache).complete(ASK, Place)
    assert not done.cached and done.parsed.stars == 4 and len(server.requests) == 1
    assert cache.get(key).text == VALID


FAULTS = (
    Reply(status=500),
    Reply(raw_body='{"id": "x", "choices": [{"message": {"content": "trunc'),  # truncated wire JSON
    Reply(status=429, headers={"Retry-After": "2"}),
    '{"name": "Oak", "stars": 0}',  # invalid -> re-ask
    Reply(content='{"name": "Oak Bis', finish_reason="length"),  # truncated answer -> re-ask
    VALID,
)


def test_sync_and_async_share_every_decision(serve, make_client, sleeper) -> None:
    """The same fault script gives the same requests, answer, usage and back-off, sync and async."""
    import asyncio

    runs = []
    for use_async in (False, True):
        sleeper.delays.clear()
        server = serve(scripted(*FAULTS))
        client = make_client(server, max_reasks=2)
        done = asyncio.run(client.acomplete(ASK, Place)) if use_async else client.complete(ASK, Place)
        runs.append((done.parsed, done.usage, list(sleeper.delays), server.requests, client.usage()))
    assert runs[0] == runs[1]
    parsed, usage, delays, requests, ledger = runs[0]
    assert parsed == Place(name="Oak Bistro", stars=4)
    # 6 requests: 500, truncated body and 429 are transport retries; two re-asks; 3 answered calls
    assert len(requests) == 6
    assert (usage.calls, usage.retries, usage.reasks) == (3, 3, 2)
    assert delays[2] == 2.0  # Retry-After honoured on the third retry
    assert ledger == usage


def test_unknown_completion_option_is_a_type_error(serve, make_client) -> None:
    server = serve(scripted(VALID))
    with pytest.raises(TypeError, match="temprature"):
        make_client(server).complete(ASK, Place, temprature=0.2)  # type: ignore[call-arg]
    assert server.requests == []


def test_the_wire_body_is_exactly_the_built_payload_sync_and_async(serve, make_client) -> None:
    """The body goes to the SDK as ``extra_body`` (no per-argument walk): what the server receives is the
    engine's payload plus the model, nothing dropped, added or changed."""
    import asyncio

    from groundtrace.core.llm.engine import build_payload
    from groundtrace.core.llm.schema import as_output_schema

    server = serve(scripted(VALID))
    client = make_client(server)
    client.complete(ASK, Place, max_tokens=50, seed=3)
    asyncio.run(client.acomplete(ASK, Place, max_tokens=50, seed=3))
    options = {"temperature": 0.0, "max_tokens": 50, "seed": 3}
    expected = {"model": "priced-test", **build_payload(ASK, as_output_schema(Place), options, "json_schema")}
    assert server.requests == [expected, expected]
