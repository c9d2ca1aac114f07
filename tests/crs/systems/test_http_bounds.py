"""HTTP system bounds (issue 9): the time-out is total per request, and an over-large body is refused.

The servers are stdlib HTTP servers on 127.0.0.1. No test asserts a duration: each checks an outcome
that differs between a per-byte and a total time-out (the drip would complete and be accepted under a
per-byte time-out).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from groundtrace.crs.systems.http import MAX_RESPONSE_BYTES, HTTPSystem, HTTPSystemError
from groundtrace.crs.systems.predictions import SystemInput

GOOD = json.dumps({"ranking": [], "response": "ok"}).encode()
INPUT = SystemInput(dialogue_id="d", turn_index=1, setting="closed", city="c", poi_type="restaurant",
                    history=[], candidates=[], reviews=[])  # fmt: skip


@contextmanager
def serve(write: Callable[[BaseHTTPRequestHandler], None]) -> Iterator[tuple[str, dict]]:
    """A server whose POST handler is ``write(handler)``; yields (url, state) — state["finished"] is set
    when a handler wrote its whole body."""
    state: dict = {"finished": 0}

    class H(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                write(self)
                state["finished"] += 1
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/respond", state
    finally:
        server.shutdown()
        server.server_close()


def drip(handler: BaseHTTPRequestHandler) -> None:
    """A valid answer sent one byte every 0.1 s (len(GOOD) = 32 bytes, about 3 s in all)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(GOOD)))
    handler.end_headers()
    for byte in GOOD:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.1)


def test_a_slow_drip_cannot_defeat_the_timeout() -> None:
    # Each byte arrives 0.1 s after the previous one, well inside a 0.5 s per-read time-out, so a per-byte
    # time-out would wait ~3 s and accept the answer. The total time-out gives up after 0.5 s.
    with serve(drip) as (url, _state):
        system = HTTPSystem(url, timeout_s=0.5, retries=0)
        with pytest.raises(HTTPSystemError, match=r"timed out after 0.5s \(total per request\)"):
            system.respond(INPUT)
        system.close()


@pytest.mark.slow
def test_the_drip_is_accepted_with_enough_time() -> None:
    # control: the same server is a valid endpoint when the time-out covers the whole answer
    with serve(drip) as (url, state):
        system = HTTPSystem(url, timeout_s=30, retries=0)
        assert system.respond(INPUT).output.response == "ok"
        system.close()
    assert state["finished"] == 1


def test_a_50_mb_answer_is_refused_by_content_length() -> None:
    body = b'{"ranking": [], "response": "' + b"x" * (50 << 20) + b'"}'

    def huge(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    with serve(huge) as (url, _state):
        system = HTTPSystem(url, timeout_s=30, retries=0)
        with pytest.raises(HTTPSystemError, match=r"over the 1,048,576-byte limit \(Content-Length 52,428,"):
            system.respond(INPUT)
        system.close()


def test_an_answer_without_length_is_cut_at_the_limit() -> None:
    # no Content-Length (HTTP/1.0, the body ends when the connection closes): counted while reading
    body = b'{"ranking": [], "response": "' + b"x" * (2 * MAX_RESPONSE_BYTES) + b'"}'

    def unsized(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.end_headers()
        handler.wfile.write(body)

    with serve(unsized) as (url, _state):
        system = HTTPSystem(url, timeout_s=30, retries=0)
        with pytest.raises(HTTPSystemError, match=r"over the 1,048,576-byte limit \(\d[\d,]* bytes read"):
            system.respond(INPUT)
        small = HTTPSystem(url, timeout_s=30, retries=0, max_response_bytes=10)
        with pytest.raises(HTTPSystemError, match="over the 10-byte limit"):
            small.respond(INPUT)
        system.close()
        small.close()


def test_an_answer_at_the_limit_is_accepted() -> None:
    def exact(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(GOOD)))
        handler.end_headers()
        handler.wfile.write(GOOD)

    with serve(exact) as (url, _state):
        system = HTTPSystem(url, timeout_s=30, retries=0, max_response_bytes=len(GOOD))
        assert system.respond(INPUT).output.response == "ok"
        system.close()


@pytest.mark.parametrize("usage", ['{"cost_usd": NaN}', '{"cost_usd": -1}', '{"cost_usd": Infinity}'])
def test_non_finite_or_negative_usage_is_an_invalid_output(usage) -> None:
    payload = ('{"ranking": [], "response": "ok", "usage": ' + usage + "}").encode()

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    with serve(answer) as (url, _state):
        system = HTTPSystem(url, timeout_s=30, retries=0)
        with pytest.raises(HTTPSystemError, match="invalid output: usage.cost_usd"):
            system.respond(INPUT)
        system.close()


@pytest.mark.parametrize("kwargs", [{"timeout_s": 0}, {"timeout_s": float("nan")}, {"max_response_bytes": 0}])
def test_bad_bounds_are_refused(kwargs) -> None:
    with pytest.raises(ValueError):
        HTTPSystem("http://127.0.0.1:9/x", **kwargs)


def test_a_deeply_nested_answer_is_an_invalid_output_not_a_recursion_error() -> None:
    from groundtrace.crs.systems.http import parse_reply

    deep = b'{"ranking": [], "response": "x", "extra": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    with pytest.raises(HTTPSystemError, match="nested deeper than 100 levels"):
        parse_reply(deep)
    assert parse_reply(GOOD).output.response == "ok"
