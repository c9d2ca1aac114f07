"""One keep-alive HTTP/1.1 connection per calling thread, on a blocking socket, framed by h11.

The default transport of :class:`~groundtrace.core.llm.openai_client.OpenAIClient` (``transport="socket"``)
sends each synchronous request here (:class:`~groundtrace.core.llm.http_wire.HttpWire` builds the body and
reads the answer). Why not httpx: with many threads waiting on calls while others compute, what a request
costs is not only its CPU but the number of times its thread gives the GIL away. Every blocking socket
call releases the GIL and, when it returns, waits for it — up to the 5 ms switch interval, or longer,
behind other threads, whenever another thread is computing. httpx's sync request makes ten such calls on
a kept-alive connection (strace, the Scout's 26 KB body: a readability ``poll`` before reuse, and a
``poll`` before each of two ``send`` and two ``recv`` because a socket with a Python time-out polls
first); this makes two: one ``sendall`` of the head and body together (into a send buffer of up to
1 MiB, so it need not wait for the server to read), and one ``recv`` that normally holds the whole
answer. 64 threads that each compute 3 ms between requests to a server answering after 300 ms waited
337-407 ms per request over httpx and 308-310 ms here, with 0.7 ms CPU per request against 1.9-2.0
(load 5.2; docs/catalog-store.md has the catalog Scout's numbers).

How it stays correct:

* **framing** — h11 (the parser httpx itself uses) writes the request and reads the response: status,
  headers, ``Content-Length`` or chunked bodies, keep-alive or close; no hand-parsed HTTP;
* **time-outs** — ``timeout_s`` bounds the connect, each send and each read, as httpx's single time-out
  does. A plain socket is left blocking and the kernel enforces the bound (``SO_RCVTIMEO`` /
  ``SO_SNDTIMEO``: one system call per operation instead of ``poll`` + call); a TLS socket (and any
  platform without those options) uses Python's own socket time-out. Either way an expiry raises
  :class:`WireTimeout`;
* **TLS** — ``https`` URLs are wrapped with the SSL context given (the verifying one httpx builds), with
  server-name checking;
* **stale connections** — a kept-alive connection the server has closed while idle fails before any byte
  of the answer arrives; that request is sent once more on a fresh connection (what a readability poll
  before each reuse would have caught, without the poll). Any other failure is raised;
* **compressed bodies** — no ``Accept-Encoding`` is sent, so a server answers uncompressed; a ``gzip`` or
  ``deflate`` body is still decoded.

Errors: :class:`WireTimeout` (a time-out) and :class:`WireError` (anything else on the connection: refused,
reset, closed mid-answer, a response h11 cannot parse). The caller maps them (``HttpWire``: both to a
:class:`~groundtrace.core.llm.retry.TransientError`, with the same messages as the httpx path).
"""

from __future__ import annotations

import errno
import socket
import ssl
import struct
import sys
import threading
import weakref
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

RECV_BYTES = 65536
SEND_BUFFER = 1 << 20  # a request up to ~1 MiB is copied into the kernel at once (the kernel caps it)
KERNEL_TIMEOUTS = sys.platform.startswith(("linux", "darwin"))


class WireError(Exception):
    """The connection failed (refused, reset, closed before the answer ended, or an unparseable answer)."""


class WireTimeout(WireError):
    """Connecting, sending or reading took longer than the time-out."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where requests go: ``host``, ``port``, whether TLS wraps the socket, and the path prefix."""

    host: str
    port: int
    tls: bool
    path: str

    @classmethod
    def of(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        tls = parts.scheme == "https"
        return cls(parts.hostname, parts.port or (443 if tls else 80), tls, parts.path or "/")

    @property
    def authority(self) -> str:
        """The ``Host`` header: the port only when it is not the scheme's default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"


@dataclass(slots=True)
class Answer:
    """A whole HTTP response: status, headers (lower-case names) and the decoded body."""

    status: int
    headers: dict[str, str]
    content: bytes


class Connection:
    """One HTTP/1.1 connection, opened on first use and kept alive between requests (one request at a
    time: a thread owns it)."""

    def __init__(self, endpoint: Endpoint, timeout_s: float, tls: ssl.SSLContext | None) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.tls = tls
        self.sock: socket.socket | None = None
        self.h11 = h11.Connection(h11.CLIENT)
        self.used = False  # an answer has been read on this socket (so it may have gone stale since)

    def request(self, target: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """POST ``body`` to ``target``; a kept-alive socket that turns out closed is replaced once."""
        head = [("Host", self.endpoint.authority), *headers, ("Content-Length", str(len(body)))]
        try:
            return self._exchange(target, head, body)
        except _Stale:
            self.close()
        return self._exchange(target, head, body)  # a fresh socket: nothing is stale any more

    def _exchange(self, target: str, head: list[tuple[str, str]], body: bytes) -> Answer:
        if self.sock is None:
            self.sock = self._connect()
            self.h11 = h11.Connection(h11.CLIENT)
            self.used = False
        conn, sock, reused = self.h11, self.sock, self.used
        try:
            request = _out(conn.send(h11.Request(method="POST", target=target, headers=head)))
            request += _out(conn.send(h11.Data(data=body))) + _out(conn.send(h11.EndOfMessage()))
            try:
                sock.sendall(request)  # head and body in one call
            except (BrokenPipeError, ConnectionResetError) as exc:
                if reused:
                    raise _Stale from exc
                raise
            answer = _receive(conn, sock, reused)
        except BaseException:
            self.close()
            raise
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
            self.used = True
        else:  # the server closes after this answer (Connection: close)
            self.close()
        return answer

    def _connect(self) -> socket.socket:
        ep = self.endpoint
        try:
            sock = socket.create_connection((ep.host, ep.port), timeout=self.timeout_s)
        except TimeoutError as exc:
            raise WireTimeout(f"connecting to {ep.authority} timed out") from exc
        except OSError as exc:
            raise WireError(f"cannot connect to {ep.authority}: {exc!r}") from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # Linux starts a TCP send buffer at 16 KB: a Scout body of ~26 KB made ``sendall`` wait for the
            # server to read (2.7 ms per request against a local server, and one more wait for the GIL)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            if ep.tls:
                if self.tls is None:
                    raise WireError("an https endpoint needs an SSL context")
                return self.tls.wrap_socket(sock, server_hostname=ep.host)  # keeps the Python time-out
            if KERNEL_TIMEOUTS:
                whole = int(self.timeout_s)
                bound = struct.pack("ll", whole, int((self.timeout_s - whole) * 1_000_000))
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, bound)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, bound)
                sock.settimeout(None)  # blocking: the kernel bounds each call
        except BaseException as exc:
            sock.close()
            if isinstance(exc, TimeoutError):
                raise WireTimeout(f"TLS handshake with {ep.authority} timed out") from exc
            if isinstance(exc, OSError):  # ssl.SSLError included
                raise WireError(f"cannot connect to {ep.authority}: {exc!r}") from exc
            raise
        return sock

    def close(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()


class _Stale(Exception):
    """A reused connection failed before any byte of its answer: resend on a fresh one."""


def _out(data: bytes | None) -> bytes:
    """What h11 gives to send (``None`` only for a ``ConnectionClosed`` event, never sent here)."""
    return data or b""


def _receive(conn: h11.Connection, sock: socket.socket, reused: bool) -> Answer:
    """Read one whole response from ``sock`` through ``conn``."""
    status, headers, chunks = 0, {}, []
    got_any = False
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as exc:
            if reused and not got_any:
                raise _Stale from exc
            raise WireError(f"malformed HTTP response: {exc}") from exc
        if event is h11.NEED_DATA:
            try:
                data = _recv(sock)
            except WireError as exc:
                if reused and not got_any and isinstance(exc.__cause__, ConnectionResetError):
                    raise _Stale from exc
                raise
            got_any = got_any or bool(data)
            conn.receive_data(data)
        elif isinstance(event, h11.Response):
            status = event.status_code
            headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in event.headers}
        elif isinstance(event, h11.Data):
            chunks.append(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return Answer(status, headers, _decoded(b"".join(chunks), headers))
        elif isinstance(event, h11.ConnectionClosed):
            raise WireError("connection closed before the answer ended")
        # h11.InformationalResponse (1xx): nothing to keep; read on


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(RECV_BYTES)
    except TimeoutError as exc:
        raise WireTimeout("read timed out") from exc
    except BlockingIOError as exc:  # SO_RCVTIMEO expired on a blocking socket
        raise WireTimeout("read timed out") from exc
    except OSError as exc:
        raise WireError(f"read failed: {exc!r}") from exc


def _decoded(content: bytes, headers: dict[str, str]) -> bytes:
    coding = headers.get("content-encoding", "identity").strip().lower()
    if coding in ("", "identity"):
        return content
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompress(content, 16 + zlib.MAX_WBITS)
        if coding == "deflate":
            try:
                return zlib.decompress(content)
            except zlib.error:  # raw deflate without the zlib header
                return zlib.decompress(content, -zlib.MAX_WBITS)
    except zlib.error as exc:
        raise WireError(f"bad {coding} body: {exc}") from exc
    raise WireError(f"unsupported Content-Encoding {coding!r}")


class _Held:
    """A thread's connection in its thread-local storage; when the thread ends this goes, and a finalizer
    closes the socket (none is left open)."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn


class SocketPool:
    """Each calling thread's :class:`Connection` to one URL (closed with :meth:`close`, or when its thread
    ends)."""

    def __init__(self, url: str, timeout_s: float, tls: ssl.SSLContext | None) -> None:
        self.endpoint = Endpoint.of(url)
        self.target = self.endpoint.path
        self.timeout_s = timeout_s
        self.tls = tls
        self._local = threading.local()
        self._all: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def post(self, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """POST ``body`` to the URL on this thread's connection (module docstring for errors)."""
        held: _Held | None = getattr(self._local, "held", None)
        if held is None:
            conn = Connection(self.endpoint, self.timeout_s, self.tls)
            held = self._local.held = _Held(conn)
            weakref.finalize(held, conn.close)
            with self._lock:
                self._all.add(conn)
        try:
            return held.conn.request(self.target, headers, body)
        except WireError:
            raise
        except TimeoutError as exc:  # a Python socket time-out while sending (TLS)
            raise WireTimeout("write timed out") from exc
        except BlockingIOError as exc:  # SO_SNDTIMEO expired while sending
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                raise WireTimeout("write timed out") from exc
            raise WireError(f"write failed: {exc!r}") from exc
        except (OSError, h11.LocalProtocolError) as exc:
            raise WireError(f"write failed: {exc!r}") from exc

    def close(self) -> None:
        """Close every thread's socket (a thread that sends again reconnects)."""
        with self._lock:
            conns = list(self._all)
        for conn in conns:
            conn.close()
