"""The socket transport's own connection handling (socket_wire), against small raw HTTP servers: what the
client tests over the WireServer do not reach — a kept-alive connection the server closed, chunked and
gzip bodies, ``Connection: close``, TLS with a certificate made here, a proxy in the environment."""

from __future__ import annotations

import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from groundtrace.core.llm.http_wire import HttpWire, proxied
from groundtrace.core.llm.retry import TransientError
from groundtrace.core.llm.socket_wire import Endpoint, SocketPool, WireError, WireTimeout

COMPLETION = {
    "choices": [{"message": {"content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
}
Handler = Callable[[socket.socket, int], bool]  # (connection, request number) -> keep the connection open


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(int(x.split(b":", 1)[1]) for x in lines if x.lower().startswith(b"content-length"))
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def _response(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Content-Type: application/json", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@pytest.fixture
def raw_server() -> Iterator[Callable[[Handler], tuple[str, list[int]]]]:
    """A one-thread HTTP server whose answers a test writes by hand; yields ``start(handler)`` →
    ``(base URL, connections accepted so far)``."""
    listeners: list[socket.socket] = []

    def start(handler: Handler) -> tuple[str, list[int]]:
        listener = socket.create_server(("127.0.0.1", 0))
        listeners.append(listener)
        accepted: list[int] = []

        def serve() -> None:
            count = 0
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                accepted.append(1)
                with conn:
                    while _read_request(conn):
                        count += 1
                        if not handler(conn, count):
                            break

        threading.Thread(target=serve, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", accepted

    yield start
    for listener in listeners:
        listener.close()


def _wire(url: str, timeout_s: float = 5.0) -> HttpWire:
    return HttpWire("m", url, "key", timeout_s=timeout_s, sockets=True)


ASK = {"messages": [{"role": "user", "content": "hi"}]}


def test_kept_alive_connection_closed_by_the_server_is_replaced_without_a_retry(raw_server) -> None:
    def once_per_connection(conn: socket.socket, _n: int) -> bool:
        conn.sendall(_response(json.dumps(COMPLETION).encode()))
        return False  # close after one answer, without saying so (an idle time-out)

    url, accepted = raw_server(once_per_connection)
    wire = _wire(url)
    assert wire.post(ASK).text == "hello"
    assert wire.post(ASK).text == "hello"  # the first socket is stale: sent again on a fresh one
    assert len(accepted) == 2


def test_one_connection_serves_every_request_of_a_thread(raw_server) -> None:
    def keep(conn: socket.socket, _n: int) -> bool:
        conn.sendall(_response(json.dumps(COMPLETION).encode()))
        return True

    url, accepted = raw_server(keep)
    wire = _wire(url)
    for _ in range(3):
        assert wire.post(ASK).prompt_tokens == 3
    assert len(accepted) == 1


def test_chunked_gzip_body_and_connection_close(raw_server) -> None:
    def chunked(conn: socket.socket, _n: int) -> bool:
        body = gzip.compress(json.dumps(COMPLETION).encode())
        half = len(body) // 2
        chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (body[:half], body[half:])) + b"0\r\n\r\n"
        head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\nConnection: close"
        conn.sendall(head.encode() + b"\r\n\r\n" + chunks)
        return False

    url, accepted = raw_server(chunked)
    wire = _wire(url)
    assert wire.post(ASK).text == "hello"
    assert wire.post(ASK).text == "hello"
    assert len(accepted) == 2  # Connection: close honoured


def test_429_headers_reach_the_retry_policy(raw_server) -> None:
    def limited(conn: socket.socket, _n: int) -> bool:
        body = json.dumps({"error": {"message": "slow down"}}).encode()
        conn.sendall(_response(body, "Retry-After: 2", status="429 Too Many Requests"))
        return True

    url, _ = raw_server(limited)
    with pytest.raises(TransientError, match="HTTP 429: slow down") as info:
        _wire(url).post(ASK)
    assert info.value.retry_after == 2.0 and info.value.status == 429


def test_a_silent_server_times_out(raw_server) -> None:
    url, _ = raw_server(lambda _conn, _n: True)  # reads the request, never answers
    pool = SocketPool(url + "/chat/completions", 0.3, None)
    with pytest.raises(WireTimeout):
        pool.post([], b"{}")
    with pytest.raises(TransientError, match=r"timed out after 0\.3s"):
        _wire(url, timeout_s=0.3).post(ASK)


def test_an_answer_cut_short_is_a_connection_error(raw_server) -> None:
    def cut(conn: socket.socket, _n: int) -> bool:
        conn.sendall(_response(json.dumps(COMPLETION).encode())[:-5])
        return False

    url, _ = raw_server(cut)
    with pytest.raises(WireError):
        SocketPool(url + "/chat/completions", 5.0, None).post([], b"{}")
    with pytest.raises(TransientError, match="connection error"):
        _wire(url).post(ASK)


def test_a_proxy_in_the_environment_sends_through_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    assert not proxied("https://api.example.com/v1/chat/completions")
    assert HttpWire("m", "https://api.example.com/v1", "k", timeout_s=1, sockets=True)._sockets is not None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.local:3128")
    assert proxied("https://api.example.com/v1/chat/completions")
    assert HttpWire("m", "https://api.example.com/v1", "k", timeout_s=1, sockets=True)._sockets is None
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert not proxied("https://api.example.com/v1/chat/completions")


def test_endpoint_of_a_url() -> None:
    assert Endpoint.of("https://api.openai.com/v1/chat/completions") == Endpoint(
        "api.openai.com", 443, True, "/v1/chat/completions"
    )
    assert Endpoint.of("http://127.0.0.1:8000/v1/x").authority == "127.0.0.1:8000"
    assert Endpoint.of("https://h/v1").authority == "h"
    with pytest.raises(ValueError):
        Endpoint.of("ftp://h/x")


HOST = "127.0.0.1"


def _self_signed(tmp_path: Path) -> Path:
    """A certificate (and key) for 127.0.0.1, in one PEM file."""
    pytest.importorskip("cryptography")
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    pem = tmp_path / "cert.pem"
    pem.write_bytes(
        cert.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return pem


def test_https_is_wrapped_verified_and_kept_alive(tmp_path: Path) -> None:
    pem = _self_signed(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(pem)
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def serve() -> None:
        while True:
            try:
                raw, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            try:
                with server_ctx.wrap_socket(raw, server_side=True) as conn:
                    n = 0
                    while _read_request(conn):
                        n += 1
                        if n == 3:
                            continue  # the third request is never answered: a TLS read time-out
                        conn.sendall(_response(json.dumps(COMPLETION).encode()))
            except (OSError, ssl.SSLError):
                continue

    threading.Thread(target=serve, daemon=True).start()
    url = f"https://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    try:
        trusting = ssl.create_default_context(cafile=str(pem))
        pool = SocketPool(url, 0.5, trusting)
        assert json.loads(pool.post([], b"{}").content)["usage"]["prompt_tokens"] == 3
        assert pool.post([], b"{}").status == 200
        assert len(accepted) == 1  # one TLS connection for both
        with pytest.raises(WireTimeout):
            pool.post([], b"{}")
        with pytest.raises(WireError, match="CERTIFICATE_VERIFY_FAILED"):  # a context that does not trust it
            SocketPool(url, 0.5, ssl.create_default_context()).post([], b"{}")
    finally:
        listener.close()
