"""List content (OpenAI text / image_url parts) end to end: validation, payload, cache key, tokens, wire."""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from groundtrace.core.evidence.tokens import count_tokens
from groundtrace.core.llm.base import ChatMessage, ImagePart, LLMError, TextPart
from groundtrace.core.llm.cache import ResponseCache, cache_key
from groundtrace.core.llm.content import (
    DATA_URL_KEY_PREFIX,
    IMAGE_TOKEN_ESTIMATE,
    IMAGE_TOKEN_ESTIMATE_LOW,
    content_text,
    content_tokens,
    has_images,
    key_messages,
    messages_tokens,
)
from groundtrace.core.llm.engine import build_payload, normalise_messages
from groundtrace.core.llm.local import LocalLlamaClient, _LoadedModel
from groundtrace.core.llm.schema import as_output_schema
from groundtrace.core.llm.wire_server import Reply, WireServer, scripted

OPTS = {"temperature": 0.0, "max_tokens": None, "seed": None}


def data_url(payload: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(payload).decode('ascii')}"


def vision(
    payload: bytes = b"\x89PNG label one", prompt: str = "Transcribe the label.", detail: str | None = None
) -> list[dict[str, Any]]:
    image: dict[str, Any] = {"url": data_url(payload)}
    if detail is not None:
        image["detail"] = detail
    return [
        {"role": "system", "content": "You read product images."},
        {
            "role": "user",
            "content": [{"type": "text", "text": prompt}, {"type": "image_url", "image_url": image}],
        },
    ]


class Label(BaseModel):
    text: str


# -- the message contract ------------------------------------------------------------------------------


def test_list_content_validates_into_typed_parts_and_back_to_plain_dicts() -> None:
    msg = ChatMessage.model_validate(vision(detail="low")[1])
    assert isinstance(msg.content, list)
    assert isinstance(msg.content[0], TextPart) and isinstance(msg.content[1], ImagePart)
    assert msg.content[1].image_url.detail == "low"
    plain = normalise_messages(vision())
    assert plain[0] == {"role": "system", "content": "You read product images."}
    assert plain[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": data_url(b"\x89PNG label one")},
    }
    # a ChatMessage instance and its dict give the same wire form; strings stay strings
    assert normalise_messages([msg]) == [msg.wire()]
    assert normalise_messages([{"role": "user", "content": "hi"}]) == [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("message", "why"),
    [
        ({"role": "user", "content": []}, "at least 1"),
        ({"role": "user", "content": [{"type": "audio", "data": "x"}]}, "audio"),
        ({"role": "user", "content": [{"type": "text", "text": "a", "extra": 1}]}, "extra"),
        (
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]},
            "data:image",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "data:text/plain;base64,aGk="}}],
            },
            "data:image",
        ),
        (
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": data_url(b"x"), "detail": "max"}}],
            },
            "detail",
        ),
        (
            {"role": "system", "content": [{"type": "image_url", "image_url": {"url": data_url(b"x")}}]},
            "only allowed in user messages",
        ),
        ({"role": "user", "content": 42}, "content"),
    ],
)
def test_bad_content_parts_are_rejected_before_sending(message: dict, why: str) -> None:
    with pytest.raises(ValueError, match=r"messages\[1\]") as info:
        normalise_messages([{"role": "system", "content": "s"}, message])
    assert why in str(info.value)


def test_http_image_urls_and_text_only_parts_are_accepted() -> None:
    plain = normalise_messages(
        [
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "https://cdn.example/x.png"}}],
            },
        ]
    )
    assert plain[0]["content"] == [{"type": "text", "text": "ok"}]
    assert has_images(plain) and not has_images(plain[:1])


# -- payload -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["json_schema", "json_object", "prompt"])
def test_payload_keeps_the_content_parts_in_every_structured_mode(mode: str) -> None:
    msgs = normalise_messages(vision())
    body = build_payload(msgs, as_output_schema(Label), {"temperature": 0.0, "seed": None}, mode)  # type: ignore[arg-type]
    assert body["messages"][-1] == msgs[-1] and "seed" not in body
    if mode == "json_schema":
        assert body["messages"] == msgs
    else:  # the schema instruction is one more (string) system message in front
        assert isinstance(body["messages"][0]["content"], str) and "JSON" in body["messages"][0]["content"]
        assert body["messages"][1:] == msgs


# -- cache key -----------------------------------------------------------------------------------------


def test_cache_key_holds_the_image_sha256_not_its_bytes() -> None:
    big = bytes(range(256)) * 400  # ~100 kB image -> ~136 kB of base64
    msgs = normalise_messages(vision(big))
    keyed = key_messages(msgs)
    url = msgs[1]["content"][1]["image_url"]["url"]
    import hashlib

    assert (
        keyed[1]["content"][1]["image_url"]["url"]
        == DATA_URL_KEY_PREFIX + hashlib.sha256(url.encode()).hexdigest()
    )
    assert keyed[0] == msgs[0] and keyed[1]["content"][0] == msgs[1]["content"][0]
    assert len(json.dumps(keyed)) < 600 < len(url)
    assert msgs[1]["content"][1]["image_url"]["url"] == url  # the wire messages are not touched
    # string-only messages key exactly as before
    assert key_messages([{"role": "user", "content": "hi"}]) == [{"role": "user", "content": "hi"}]


def test_cache_key_changes_with_the_image_prompt_and_detail() -> None:
    base = cache_key("m", normalise_messages(vision(b"one")), OPTS, None)
    assert base == cache_key("m", normalise_messages(vision(b"one")), OPTS, None)
    assert base != cache_key("m", normalise_messages(vision(b"two")), OPTS, None)
    assert base != cache_key("m", normalise_messages(vision(b"one", prompt="Other prompt.")), OPTS, None)
    assert base != cache_key("m", normalise_messages(vision(b"one", detail="low")), OPTS, None)
    jpeg = [
        vision(b"one")[0],
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Transcribe the label."},
                {"type": "image_url", "image_url": {"url": data_url(b"one", "image/jpeg")}},
            ],
        },
    ]
    assert base != cache_key("m", normalise_messages(jpeg), OPTS, None)


# -- token estimate ----------------------------------------------------------------------------------------


def test_token_estimate_counts_text_parts_and_a_fixed_cost_per_image() -> None:
    prompt = "Transcribe the label, please."
    high = normalise_messages(vision(prompt=prompt))[1]["content"]
    low = normalise_messages(vision(prompt=prompt, detail="low"))[1]["content"]
    assert content_tokens(high) == count_tokens(prompt) + IMAGE_TOKEN_ESTIMATE == count_tokens(prompt) + 765
    assert content_tokens(low) == count_tokens(prompt) + IMAGE_TOKEN_ESTIMATE_LOW == count_tokens(prompt) + 85
    assert content_tokens(high, count=len) == len(prompt) + 765  # any counter (e.g. a budget's estimate)
    assert content_tokens("a b c") == 3 and content_text("a b") == "a b"
    assert (
        content_text(
            [
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": "b"},
            ]
        )
        == "a\nb"
    )
    msgs = normalise_messages(vision(prompt=prompt))
    assert (
        messages_tokens(msgs, per_message=4)
        == count_tokens("You read product images.") + content_tokens(high) + 8
    )


# -- over the wire (real OpenAI SDK client against the local WireServer) -------------------------------


def test_image_message_over_the_wire_is_sent_cached_and_counted(
    serve, make_client, cache: ResponseCache, tmp_path: Path
) -> None:
    server = serve(lambda req: "USDA ORGANIC")
    client = make_client(server, cache=cache)
    first = client.complete(vision(b"front"))
    assert first.text == "USDA ORGANIC" and not first.cached
    sent = server.requests[0]["messages"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "Transcribe the label."},
        {"type": "image_url", "image_url": {"url": data_url(b"front")}},
    ]
    # the server counted the text of every message plus the per-image estimate
    expected_prompt = count_tokens("You read product images.") + count_tokens("Transcribe the label.") + 765
    assert first.usage.prompt_tokens == expected_prompt and first.usage.calls == 1
    again = client.complete(vision(b"front"))
    assert again.cached and again.text == "USDA ORGANIC" and len(server.requests) == 1
    other = client.complete(vision(b"back"))
    assert not other.cached and len(server.requests) == 2
    total = client.usage()
    assert (total.calls, total.cache_hits, total.prompt_tokens) == (2, 1, 2 * expected_prompt)
    # the stored request carries the image's sha256, never the base64 payload
    rows = [r[0] for r in sqlite3.connect(cache.path).execute("SELECT request_json FROM responses")]
    assert len(rows) == 2 and all(DATA_URL_KEY_PREFIX in r and "base64" not in r for r in rows)


def test_image_message_500_then_success_is_retried(serve, make_client, sleeper) -> None:
    server = serve(scripted(Reply(status=500), "NET WT 16 OZ"))
    done = make_client(server).complete(vision())
    assert done.text == "NET WT 16 OZ" and done.usage.retries == 1 and done.usage.calls == 1
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1]
    assert len(sleeper.delays) == 1


def test_image_message_with_a_schema_in_prompt_mode(serve, make_client) -> None:
    server = serve(scripted('{"text": "USDA ORGANIC"}'))
    done = make_client(server, structured="prompt").complete(vision(), Label)
    assert done.parsed == Label(text="USDA ORGANIC")
    sent = server.requests[0]
    assert "response_format" not in sent and isinstance(sent["messages"][0]["content"], str)
    assert sent["messages"][-1]["content"][1]["type"] == "image_url"


def test_async_image_message(serve, make_client) -> None:
    server = serve(scripted("LOT 42"))
    done = asyncio.run(make_client(server).acomplete(vision()))
    assert done.text == "LOT 42" and server.requests[0]["messages"][1]["content"][1]["type"] == "image_url"


def test_wire_server_answers_400_to_malformed_content() -> None:
    with WireServer(lambda req: "ok") as server:
        url = f"{server.base_url}/chat/completions"
        bad = httpx.post(
            url, json={"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]}
        )
        good = httpx.post(url, json={"model": "m", "messages": vision()})
    assert bad.status_code == 400 and "content[0]" in bad.json()["error"]["message"]
    assert good.status_code == 200 and good.json()["choices"][0]["message"]["content"] == "ok"
    assert len(server.requests) == 1


# -- the text-only local backend -------------------------------------------------------------------------


def test_local_backend_refuses_images_with_a_clear_error(tmp_path: Path) -> None:
    client = LocalLlamaClient(tmp_path / "absent.gguf", cache=None)
    with pytest.raises(LLMError, match="text-only; image content parts are not supported") as info:
        client.complete(vision())
    assert type(info.value) is LLMError  # refused before loading: not a missing-model error
    assert client.usage().calls == 0


def test_local_backend_sends_text_parts_as_one_string(tmp_path: Path) -> None:
    class FakeServer:
        def __init__(self) -> None:
            self.bodies: list[dict[str, Any]] = []

        def handle_chat_completions(self, body: dict[str, Any]) -> dict[str, Any]:
            self.bodies.append(body)
            return {
                "choices": [{"message": {"content": "blue"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 1},
            }

    fake = FakeServer()
    client = LocalLlamaClient(tmp_path / "fake.gguf", cache=None)
    client._loaded = _LoadedModel(fake, 0.0)
    parts = [{"type": "text", "text": "Name one colour."}, {"type": "text", "text": "One word."}]
    done = client.complete([{"role": "user", "content": parts}])
    assert done.text == "blue" and done.usage.prompt_tokens == 7
    assert fake.bodies[0]["messages"] == [{"role": "user", "content": "Name one colour.\nOne word."}]
