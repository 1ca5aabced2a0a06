"""The HTTP transport: Connect's unary protocol against `agentfs serve http`.

POST {base}/agentfs.v1.Service/Method with the serialized request
(application/proto), a bearer token and the agent id in Agentfs-Agent.
Errors come back as Connect's JSON error body whose detail is the same
agentfs.v1.Error as over stdio. One persistent HTTP/1.1 connection per
thread, over the standard library's socket and ssl; no third-party package.
A server stream (StreamProcess) has a connection of its own, read one
envelope at a time as the caller asks for the next message.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import threading
import time
import urllib.parse

from typing import Any

from google.protobuf.message import Message

from ._errors import (
    AgentFSError,
    EngineUnavailableError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    UnimplementedError,
    from_proto,
)
from ._transport import M
from .v1 import errors_pb2

# Procedures that address the server, not an agent: they go without the
# Agentfs-Agent header (the server would look the agent up first, and
# CreateAgent is how it comes to exist).
_AGENTLESS = frozenset({"/agentfs.v1.AgentService/ListAgents", "/agentfs.v1.AgentService/CreateAgent"})

# A kept-alive connection idle this long (seconds) may have been closed by
# the server; a call failing on it as a disconnect is retried once.
_STALE_AFTER = 1.0

# Connect error codes without an agentfs.v1.Error detail.
_BY_CODE: dict[str, type[AgentFSError]] = {
    "invalid_argument": InvalidArgumentError,
    "not_found": NotFoundError,
    "unauthenticated": PermissionDeniedError,
    "permission_denied": PermissionDeniedError,
    "unimplemented": UnimplementedError,
    "unavailable": EngineUnavailableError,
}


class _Disconnected(ConnectionError):
    """The server closed the connection before answering."""


class _Conn:
    """One persistent HTTP/1.1 connection. A request is one write (headers
    and a small body together, TCP_NODELAY); the answer is read with a
    minimal parser (status, Content-Length or chunked). http.client does the
    same work in about 2.5 times the time per call (header formatting and
    its email-based response parser), which dominates small calls."""

    __slots__ = ("sock", "rfile", "last")

    def __init__(self, host: str, port: int, timeout: float, ctx: ssl.SSLContext | None) -> None:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ctx is not None:
            sock = ctx.wrap_socket(sock, server_hostname=host)
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self.last = time.monotonic()

    def close(self) -> None:
        try:
            self.rfile.close()
            self.sock.close()
        except OSError:
            pass

    def roundtrip(self, head: bytes, body: bytes) -> tuple[int, bytes, bool]:
        """Sends one request; returns status, body and whether the server
        closes the connection after it."""
        if len(body) <= 1 << 16:
            self.sock.sendall(head + body)
        else:  # no copy of large bodies
            self.sock.sendall(head)
            self.sock.sendall(body)
        rf = self.rfile
        line = rf.readline(1 << 16)
        if not line:
            raise _Disconnected("the server closed the connection")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ConnectionError(f"not an HTTP answer: {line[:80]!r}")
        status = int(parts[1])
        close = parts[0] == b"HTTP/1.0"
        length: int | None = None
        chunked = False
        while True:
            line = rf.readline(1 << 16)
            if not line:
                raise _Disconnected("the server closed the connection")
            if line in (b"\r\n", b"\n"):
                break
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                length = int(v)
            elif k == b"transfer-encoding":
                chunked = b"chunked" in v.lower()
            elif k == b"connection":
                close = v.strip().lower() == b"close"
        if chunked:
            out = bytearray()
            while True:
                size = int(rf.readline(1 << 16).split(b";")[0], 16)
                if size == 0:
                    while rf.readline(1 << 16) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                out += _read_exact(rf, size)
                rf.readline(1 << 16)
            data = bytes(out)
        elif length is not None:
            data = _read_exact(rf, length)
        else:
            data = rf.read()
            close = True
        self.last = time.monotonic()
        return status, data, close


def _read_exact(rf: Any, n: int) -> bytes:
    data: bytes = rf.read(n)
    if len(data) < n:
        raise _Disconnected("the server closed the connection in the middle of an answer")
    return data


class HttpStream:
    """One server-streaming call (Connect's streaming protocol) on a
    connection of its own. next() reads the next envelope (a flags byte, a
    4-byte big-endian length, the message) from the socket when it is
    asked for, so at most one message is held here: a caller that stops
    reading stops the server (its TCP window fills, then its bounded
    buffer, then the script). close() shuts the connection, and the server
    ends the call (StreamProcess kills its process). A stream read to its
    end hands its connection back for the next stream."""

    __slots__ = ("_t", "_conn", "_procedure", "_body", "_left", "_done", "_keep")

    def __init__(self, t: HttpTransport, conn: _Conn, procedure: str) -> None:
        self._t, self._procedure = t, procedure
        self._conn: _Conn | None = conn
        # The body's framing: "chunked", "length" (self._left bytes) or
        # "eof" (read until the server closes).
        self._body = "eof"
        self._left = 0
        self._done = False
        self._keep = True  # the server keeps the connection after the body

    def _start(self, head: bytes, payload: bytes) -> None:
        c = self._conn
        assert c is not None
        c.sock.sendall(head + len(payload).to_bytes(4, "big").rjust(5, b"\0") + payload)
        rf = c.rfile
        line = rf.readline(1 << 16)
        if not line:
            raise _Disconnected("the server closed the connection")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ConnectionError(f"not an HTTP answer: {line[:80]!r}")
        status = int(parts[1])
        self._keep = parts[0] != b"HTTP/1.0"
        while True:
            line = rf.readline(1 << 16)
            if not line:
                raise _Disconnected("the server closed the connection")
            if line in (b"\r\n", b"\n"):
                break
            k, _, v = line.partition(b":")
            k = k.strip().lower()
            if k == b"content-length":
                self._body, self._left = "length", int(v)
            elif k == b"transfer-encoding" and b"chunked" in v.lower():
                self._body = "chunked"
            elif k == b"connection":
                self._keep = v.strip().lower() != b"close"
        if self._body == "eof":
            self._keep = False
        if status != 200:
            raise _error(status, self._read_all(), self._t.url)

    def _read_all(self) -> bytes:
        out = bytearray()
        while True:
            b = self._read(1 << 16, eof_ok=True)
            if not b:
                return bytes(out)
            out += b

    def _read(self, n: int, eof_ok: bool = False) -> bytes:
        """Up to n bytes of the body (fewer at a chunk's end); b"" at its end."""
        if self._conn is None:
            raise _Disconnected("the stream ended")
        rf = self._conn.rfile
        if self._body == "chunked":
            if self._left == 0:
                size = int(rf.readline(1 << 16).split(b";")[0], 16)
                if size == 0:
                    while rf.readline(1 << 16) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    self._body, self._left = "length", 0
                    return b""
                self._left = size
            b = rf.read(min(n, self._left))
            if not b:
                raise _Disconnected("the server closed the connection in the middle of an answer")
            self._left -= len(b)
            if self._left == 0:
                rf.readline(1 << 16)  # the chunk's CRLF
            return bytes(b)
        if self._body == "length":
            if self._left == 0:
                return b""
            b = rf.read(min(n, self._left))
            if not b:
                raise _Disconnected("the server closed the connection in the middle of an answer")
            self._left -= len(b)
            return bytes(b)
        return bytes(rf.read1(n))

    def _exact(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            b = self._read(n - len(out))
            if not b:
                raise _Disconnected(f"{self._procedure}: the stream ended without its end message")
            out += b
        return out

    def next(self) -> bytes | None:
        """The next message's payload; None once the stream ended well.
        Raises the stream's error (mapped as a unary call's)."""
        if self._done:
            return None
        try:
            env = self._exact(5)
            flags, n = env[0], int.from_bytes(env[1:], "big")
            if n > 1 << 30:
                raise ConnectionError(f"{self._procedure}: an envelope of {n} bytes")
            msg = self._exact(n)
        except (OSError, ValueError) as e:
            self.close()
            raise EngineUnavailableError(f"agentfs server {self._t.url}: {self._procedure}: {e}") from None
        if flags & 0x02:
            self._done = True
            self._release()
            try:
                end = json.loads(msg)
            except ValueError:
                end = None
            err = end.get("error") if isinstance(end, dict) else None
            if err:
                raise _error_of(err if isinstance(err, dict) else {}, 200, msg, self._t.url)
            return None
        if flags & 0x01:
            # Compression is never asked for (no Connect-Accept-Encoding).
            self.close()
            raise AgentFSError(f"{self._procedure}: a compressed stream message that was not asked for", kind="INTERNAL")
        return msg

    def finish(self) -> None:
        """Reads the end after the last message (StreamProcess's exit):
        the end envelope follows it at once, and the connection is then
        free for the next stream. Its error, if any, has nothing to add."""
        try:
            while self.next() is not None:
                pass
        except AgentFSError:
            pass

    def _release(self) -> None:
        """The end envelope was read: the connection goes back to the
        transport when nothing follows it, else it is closed."""
        try:
            clean = self._keep and self._read(1, eof_ok=True) == b""
        except (OSError, ValueError):
            clean = False
        if clean:
            c, self._conn = self._conn, None
            assert c is not None
            self._t._park(c)  # another stream's now: close() leaves it
        else:
            self.close()

    def close(self) -> None:
        """Shuts the connection (also waking a thread blocked in next())."""
        c = self._conn
        if c is None:
            return
        try:
            c.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        c.close()
        self._t._forget(c)


class HttpTransport:
    """Talks to `agentfs serve http` at `url` ("http://127.0.0.1:7777")."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        agent: str | None = None,
        timeout: float = 300.0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise InvalidArgumentError(f"agentfs: not an http(s) URL: {url!r}")
        self.url = url
        self._host = u.hostname
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._ssl = (ssl_context or ssl.create_default_context()) if u.scheme == "https" else None
        self._base = u.path.rstrip("/")
        self._timeout = timeout
        host = self._host if ":" not in self._host else f"[{self._host}]"
        self._common = (
            f"Host: {host}:{self._port}\r\n"
            "Content-Type: application/proto\r\n"
            "Connect-Protocol-Version: 1\r\n"
            "Accept-Encoding: identity\r\n"
            "User-Agent: agentfs-sdk-python\r\n"
        )
        self._stream_common = self._common.replace("application/proto", "application/connect+proto")
        if token:
            self._common += f"Authorization: Bearer {token}\r\n"
            self._stream_common += f"Authorization: Bearer {token}\r\n"
        self.agent = agent
        self._local = threading.local()
        self._conns: list[_Conn] = []
        # Connections of streams that ended, for the next stream.
        self._idle: list[_Conn] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def agent(self) -> str | None:
        return self._agent

    @agent.setter
    def agent(self, agent: str | None) -> None:
        self._agent = agent
        self._agent_header = f"Agentfs-Agent: {agent}\r\n" if agent else ""

    def _conn(self) -> _Conn:
        c: _Conn | None = getattr(self._local, "conn", None)
        if c is None:
            if self._closed:
                raise EngineUnavailableError("agentfs transport is closed")
            c = _Conn(self._host, self._port, self._timeout, self._ssl)
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def _drop(self) -> None:
        c: _Conn | None = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None
            with self._lock:
                if c in self._conns:
                    self._conns.remove(c)

    def _forget(self, c: _Conn) -> None:
        with self._lock:
            if c in self._conns:
                self._conns.remove(c)
            if c in self._idle:
                self._idle.remove(c)

    def _park(self, c: _Conn) -> None:
        """Keeps the connection of a stream that ended for the next one."""
        c.last = time.monotonic()
        with self._lock:
            if not self._closed and c in self._conns:
                self._idle.append(c)
                return
        c.close()

    def open_stream(self, procedure: str, request: Message) -> HttpStream:
        """Starts a server-streaming call on a connection of its own (one a
        finished stream left, else a new one) and returns once the server
        answered its headers: the messages are then read with next().
        close() (or this transport's) ends it."""
        payload = request.SerializeToString()
        head = (
            f"POST {self._base}{procedure} HTTP/1.1\r\n{self._stream_common}{self._agent_header}"
            f"Content-Length: {5 + len(payload)}\r\n\r\n"
        ).encode("latin-1")
        for attempt in (0, 1):
            with self._lock:
                if self._closed:
                    raise EngineUnavailableError("agentfs transport is closed")
                conn = self._idle.pop() if self._idle and attempt == 0 else None
            if conn is None:
                try:
                    conn = _Conn(self._host, self._port, self._timeout, self._ssl)
                except OSError as e:
                    raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
                # A stream waits for output as long as the script runs: no
                # timeout on its reads (the server kills the process if the
                # stream goes).
                conn.sock.settimeout(None)
                with self._lock:
                    self._conns.append(conn)
            idle = time.monotonic() - conn.last
            st = HttpStream(self, conn, procedure)
            try:
                st._start(head, payload)
                return st
            except AgentFSError:
                st.close()
                raise
            except (_Disconnected, BrokenPipeError, ConnectionResetError) as e:
                # As in unary: a kept connection that sat idle may have
                # been closed by the server; retry once on a new one.
                st.close()
                if idle < _STALE_AFTER or attempt == 1:
                    raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
            except (OSError, ValueError) as e:
                st.close()
                raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
        raise AssertionError("unreachable")

    def unary(self, procedure: str, request: Message, response_type: type[M]) -> M:
        body = request.SerializeToString()
        agent = "" if procedure in _AGENTLESS else self._agent_header
        head = (
            f"POST {self._base}{procedure} HTTP/1.1\r\n{self._common}{agent}Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1")
        for attempt in (0, 1):
            try:
                conn = self._conn()
            except OSError as e:
                raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
            idle = time.monotonic() - conn.last
            try:
                status, data, close = conn.roundtrip(head, body)
                break
            except (_Disconnected, BrokenPipeError, ConnectionResetError) as e:
                # A kept-alive connection that sat idle may have been closed
                # by the server: retry once on a new one. Otherwise the call
                # may have run, and calls are not all idempotent: report it.
                self._drop()
                if idle < _STALE_AFTER or attempt == 1:
                    raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
            except (OSError, ValueError) as e:
                self._drop()
                raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
        if close:
            self._drop()
        if status == 200:
            return response_type.FromString(data)
        raise _error(status, data, self.url)

    async def unary_async(self, procedure: str, request: Message, response_type: type[M]) -> M:
        return await asyncio.to_thread(self.unary, procedure, request, response_type)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            conns, self._conns, self._idle = self._conns, [], []
        for c in conns:
            # Shut first: a thread blocked reading a stream holds the
            # socket open through a bare close, and the server must see
            # the stream go (it then kills the process).
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()


def _error(status: int, data: bytes, url: str) -> Exception:
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        text = data[:200].decode("utf-8", "replace").strip()
        if status in (401, 403):
            return PermissionDeniedError(f"agentfs server {url}: HTTP {status}: {text}")
        return AgentFSError(f"agentfs server {url}: HTTP {status}: {text}")
    return _error_of(doc, status, data, url)


def _error_of(doc: dict[str, Any], status: int, data: bytes, url: str) -> Exception:
    """The error of a Connect error JSON object (a unary answer's body, or
    the "error" of a stream's end message)."""
    for d in doc.get("details") or []:
        if d.get("type") == "agentfs.v1.Error" and d.get("value"):
            v = d["value"]
            raw = base64.b64decode(v + "=" * (-len(v) % 4))
            return from_proto(errors_pb2.Error.FromString(raw))
    code = str(doc.get("code", ""))
    msg = str(doc.get("message") or code or f"HTTP {status}")
    cls = _BY_CODE.get(code, AgentFSError)
    return cls(msg, kind=code.upper() or None)


