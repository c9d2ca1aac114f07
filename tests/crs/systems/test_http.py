"""HTTP systems: the same system scored through Python, HTTP and a predictions file gives identical
scores; transport and output failures make turns unscorable with the error recorded."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundtrace.crs.evaluation.offline import score_file
from groundtrace.crs.evaluation.run_files import PREDICTIONS_FILE, read_predictions
from groundtrace.crs.evaluation.runner import run_dialogue, run_system
from groundtrace.crs.systems import HTTPSystem, build_system, is_url
from groundtrace.crs.systems.http import HTTPSystemError, parse_reply
from groundtrace.crs.systems.predictions import Prediction, SystemInput
from tests.crs.report.demo_data import make_demo

Handler = Callable[[dict], tuple[int, bytes]]


@contextmanager
def serve(handler: Handler) -> Iterator[str]:
    """A stdlib HTTP server on 127.0.0.1 (ephemeral port) in a thread; yields its URL."""

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, payload = handler(body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/respond"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return make_demo(tmp_path_factory.mktemp("http"), n_dialogues=24)


@pytest.mark.slow
def test_python_http_and_predictions_paths_score_identically(demo, tmp_path) -> None:
    system = build_system("random", seed=11)
    direct = run_system(system, demo.dialogues, demo.kb, tmp_path / "py", split="all", workers=2)
    seen: list[dict] = []

    def handler(body: dict) -> tuple[int, bytes]:
        seen.append(body)
        inp = SystemInput.model_validate(body)  # the wire format is exactly the contract
        out = system.respond(inp).model_dump()
        out["usage"] = {"prompt_tokens": 3, "completion_tokens": 2, "cost_usd": 0.0}
        return 200, json.dumps(out).encode()

    with serve(handler) as url:
        remote = run_system(
            HTTPSystem(url), demo.dialogues, demo.kb, tmp_path / "http", split="all", workers=3
        )
    offline = score_file(
        tmp_path / "py" / PREDICTIONS_FILE, demo.dialogues, demo.kb, tmp_path / "file", split="all"
    )
    assert direct.table.n_turns > 0 and len(seen) == direct.table.n_turns
    assert all(set(body) == set(SystemInput.model_fields) for body in seen)  # the contract, no gold labels
    assert remote.table.to_dict() == direct.table.to_dict()
    assert offline.table.to_dict() == direct.table.to_dict()
    on_disk = [json.loads((tmp_path / d / "scores.json").read_text()) for d in ("py", "http", "file")]
    assert on_disk[0] == on_disk[1] == on_disk[2]
    assert remote.info["usage"]["prompt_tokens"] == 3 * remote.table.n_turns
    assert remote.info["system"] == url and remote.info["config"] == {"url": url}


def test_failures_are_recorded_per_turn(demo, tmp_path) -> None:
    def mode_of(dialogue_id: str, turn_index: int) -> int:
        return (int(dialogue_id[-6:]) + turn_index // 2) % 5  # system turns are odd: 1, 3, 5 ...

    def handler(body: dict) -> tuple[int, bytes]:
        pool = [c["poi_id"] for c in body["candidates"]]
        mode = mode_of(body["dialogue_id"], body["turn_index"])
        if mode == 0:
            return 500, b'{"error": "boom"}'
        if mode == 1:
            return 200, b"<html>not json</html>"
        if mode == 2:
            return 200, json.dumps({"ranking": ["ghost", *pool], "response": "x"}).encode()
        if mode == 3:
            return 200, json.dumps({"ranking": pool, "response": "x", "extra": 1}).encode()
        return 200, json.dumps({"ranking": pool, "response": "fine"}).encode()

    with serve(handler) as url:
        result = run_system(
            HTTPSystem(url, retries=1, backoff_s=0.0), demo.dialogues[:6], demo.kb, tmp_path, split="all"
        )
    preds = read_predictions(tmp_path / PREDICTIONS_FILE).predictions
    errors = {mode_of(p.dialogue_id, p.turn_index): p.error for p in preds}
    assert set(errors) == {0, 1, 2, 3, 4}
    assert "HTTP 500" in errors[0] and "2 attempts" in errors[0]
    assert "not JSON" in errors[1]
    assert "unknown POI id(s) 'ghost'" in errors[2]
    assert "extra" in errors[3]
    assert errors[4] is None
    assert result.info["counts"]["unscorable_turns"] == sum(p.error is not None for p in preds)
    assert len(preds) == result.table.n_turns


def test_timeouts_and_dead_endpoints_are_unscorable(demo, tmp_path) -> None:
    def slow(body: dict) -> tuple[int, bytes]:
        time.sleep(0.5)
        return 200, b'{"ranking": [], "response": ""}'

    one = demo.dialogues[:1]
    with serve(slow) as url:
        result = run_system(
            HTTPSystem(url, timeout_s=0.05, retries=0), one, demo.kb, tmp_path / "slow", split="all"
        )
    assert all(not t.scorable and "timed out" in t.error for t in result.table.turns)
    with serve(slow) as url:
        dead = url  # closed when the block ends
    result = run_system(
        HTTPSystem(dead, retries=1, backoff_s=0.0), one, demo.kb, tmp_path / "dead", split="all"
    )
    assert all(not t.scorable and "transport error" in t.error for t in result.table.turns)


def test_is_url() -> None:
    assert is_url("http://h:1/x") and is_url("https://h/x")
    assert not is_url("random") and not is_url("ftp://h")
    with pytest.raises(ValueError):
        HTTPSystem("random")


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
        st.dictionaries(
            st.sampled_from(["ranking", "response", "usage", "x"]),
            st.one_of(
                st.none(), st.integers(), st.text(max_size=5), st.lists(st.text(max_size=3), max_size=3)
            ),
            max_size=4,
        ).map(lambda d: json.dumps(d).encode()),
    )
)
def test_parse_reply_only_ever_raises_its_own_error(payload: bytes) -> None:
    try:
        reply = parse_reply(payload)
    except HTTPSystemError:
        return
    assert isinstance(reply.output.ranking, list) and isinstance(reply.output.response, str)


DOC = Path(__file__).resolve().parents[3] / "docs" / "crs-evaluation.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_doc_wire_examples_are_valid_contract_objects() -> None:
    request, response, prediction = _blocks("json")
    inp = SystemInput.model_validate_json(request)
    reply = parse_reply(response.encode())
    assert reply.output.ranking == [c.poi_id for c in inp.candidates]
    assert reply.usage.prompt_tokens == 812
    pred = Prediction.model_validate_json(prediction.strip())
    assert pred.response == reply.output.response


def test_doc_python_example_runs_through_the_runner(demo) -> None:
    from groundtrace.core.registry import Registry
    from groundtrace.crs.systems import CRSSystem

    (code,) = _blocks("python")
    importing = "from groundtrace.crs.systems import SYSTEMS, CRSSystem"
    assert importing in code
    # run the example against a private registry: the global one is shared with other tests
    local = Registry("CRS system", base=CRSSystem)
    namespace = {"SYSTEMS": local, "CRSSystem": CRSSystem}
    exec(compile(code.replace(importing, ""), str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    system = local.get("cheapest")(seed=1)
    system.name = "cheapest"
    preds = run_dialogue(system, demo.dialogues[0], demo.kb, "closed")
    assert preds and all(p.error is None for p in preds)
    assert system.config() == {"seed": 1}


def test_cli_run_with_an_http_endpoint_scores_like_the_class(demo, tmp_path) -> None:
    from typer.testing import CliRunner

    from groundtrace.cli import app

    system = build_system("random", seed=5)
    direct = run_system(system, demo.dialogues[:8], demo.kb, tmp_path / "py", split="all")

    def handler(body: dict) -> tuple[int, bytes]:
        return 200, system.respond(SystemInput.model_validate(body)).model_dump_json().encode()

    args = ["--dataset", str(demo.dataset), "--split", "all", "--kb", str(demo.kb_path), "--limit", "8"]
    with serve(handler) as url:
        result = CliRunner().invoke(
            app, ["crs", "run", *args, "--system", url, "--out", str(tmp_path / "http"), "--workers", "2"]
        )
    assert result.exit_code == 0, result.output
    # the CLI keeps the first 8 dialogues of the split: the same 8 the direct run was given
    http_scores = json.loads((tmp_path / "http" / "scores.json").read_text())
    assert http_scores == json.loads((tmp_path / "py" / "scores.json").read_text())
    assert direct.table.n_turns == http_scores["n_turns"] > 0
    info = json.loads((tmp_path / "http" / "run.json").read_text())
    assert info["system"] == url and info["usage"]["latency_s"]["mean"] > 0


def test_retries_follow_the_core_retry_policy(demo, monkeypatch: pytest.MonkeyPatch) -> None:
    """503, 429 with Retry-After: 2, then 200: waits backoff·2^0 = 0.25 s, then the server's 2 s."""
    import httpx

    from groundtrace.core.llm.retry import RetryPolicy

    answers = iter(
        [
            httpx.Response(503),
            httpx.Response(429, headers={"Retry-After": "2"}),
            None,  # then valid answers built from the request
        ]
    )

    def handler(request: httpx.Request) -> httpx.Response:
        answer = next(answers, None)
        if answer is not None:
            return answer
        pool = [c["poi_id"] for c in json.loads(request.content)["candidates"]]
        return httpx.Response(200, json={"ranking": pool, "response": "ok"})

    system = HTTPSystem("http://example.invalid/respond", retries=2, backoff_s=0.25)
    system._client = httpx.Client(transport=httpx.MockTransport(handler))
    waits: list[float] = []
    policy = system.retry_policy()
    assert isinstance(policy, RetryPolicy) and policy.max_retries == 2 and policy.jitter == 0.0
    monkeypatch.setattr(system, "retry_policy", lambda: RetryPolicy(2, 0.25, jitter=0.0, sleep=waits.append))
    preds = run_dialogue(system, demo.dialogues[0], demo.kb, "closed")
    assert all(p.error is None and p.response == "ok" for p in preds)
    assert waits == [0.25, 2.0]
