"""The HTTP transport: Connect's unary protocol against `agentfs serve http`.

POST {base}/agentfs.v1.Service/Method with the serialized request
(application/proto), a bearer token and the agent id in Agentfs-Agent.
Errors come back as Connect's JSON error body whose detail is the same
agentfs.v1.Error as over stdio. The standard library's http.client keeps
one persistent connection per thread; no third-party HTTP package.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import ssl
import threading
import time
import urllib.parse

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
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._base = u.path.rstrip("/")
        self._timeout = timeout
        self._ssl = ssl_context
        self._headers = {
            "Content-Type": "application/proto",
            "Connect-Protocol-Version": "1",
            "User-Agent": "agentfs-sdk-python",
        }
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self.agent = agent
        self._local = threading.local()
        self._conns: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def agent(self) -> str | None:
        return self._agent

    @agent.setter
    def agent(self, agent: str | None) -> None:
        self._agent = agent
        self._plain = dict(self._headers)
        self._agent_headers = dict(self._headers)
        if agent:
            self._agent_headers["Agentfs-Agent"] = agent

    def _conn(self) -> http.client.HTTPConnection:
        c: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if c is None:
            if self._closed:
                raise EngineUnavailableError("agentfs transport is closed")
            if self._https:
                c = http.client.HTTPSConnection(self._host, self._port, timeout=self._timeout, context=self._ssl)
            else:
                c = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def _drop(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def unary(self, procedure: str, request: Message, response_type: type[M]) -> M:
        body = request.SerializeToString()
        headers = self._plain if procedure in _AGENTLESS else self._agent_headers
        for attempt in (0, 1):
            conn = self._conn()
            idle = time.monotonic() - getattr(self._local, "last", 0.0) if conn.sock is not None else 0.0
            try:
                conn.request("POST", self._base + procedure, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self._local.last = time.monotonic()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A kept-alive connection that sat idle may have been closed
                # by the server: retry once on a new one. Otherwise the call
                # may have run, and calls are not all idempotent: report it.
                self._drop()
                if idle < _STALE_AFTER or attempt == 1:
                    raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                raise EngineUnavailableError(f"agentfs server {self.url}: {e}") from None
        if resp.status == 200:
            return response_type.FromString(data)
        raise _error(resp.status, data, self.url)

    async def unary_async(self, procedure: str, request: Message, response_type: type[M]) -> M:
        return await asyncio.to_thread(self.unary, procedure, request, response_type)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.close()
            except OSError:
                pass


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
    for d in doc.get("details") or []:
        if d.get("type") == "agentfs.v1.Error" and d.get("value"):
            v = d["value"]
            raw = base64.b64decode(v + "=" * (-len(v) % 4))
            return from_proto(errors_pb2.Error.FromString(raw))
    code = str(doc.get("code", ""))
    msg = str(doc.get("message") or code or f"HTTP {status}")
    cls = _BY_CODE.get(code, AgentFSError)
    return cls(msg, kind=code.upper() or None)


