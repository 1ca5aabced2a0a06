"""Opening an agent: which transport, what to open, the engine's answer.
Shared by the synchronous API and agentfs.aio."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from . import _ops
from ._errors import InvalidArgumentError
from ._http import HttpTransport
from ._mount import key_env
from ._stdio import StdioTransport
from ._types import AgentFSOptions, Info
from .v1 import agent_pb2, protocol_pb2, rpc

__version__ = "0.7.0"

_ID = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass
class Connection:
    transport: StdioTransport | HttpTransport
    info: Info
    # What `agentfs mount` of the same database needs in its environment
    # (the key of an encrypted one); see agent.mount_sandbox.
    mount_env: dict[str, str] = field(default_factory=dict)


def _key_bytes(key: str | bytes | None) -> bytes:
    """The key as bytes: hex text (as the CLI's --key) or bytes. The key
    travels in the handshake only, never in the engine's arguments."""
    if key is None:
        return b""
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    text = key.strip()
    try:
        if not text or len(text) % 2:
            raise ValueError
        return bytes.fromhex(text)
    except ValueError:
        # Never repeat the key: only its length.
        raise InvalidArgumentError(
            f"encryption_key is not hexadecimal ({len(text)} characters): give 32 or 64 hex digits, or the key's bytes"
        ) from None


def connect(
    options: AgentFSOptions | None,
    *,
    id: str | None,
    path: str | os.PathLike[str] | None,
    url: str | None,
    token: str | None,
    engine: str | os.PathLike[str] | None,
    cwd: str | os.PathLike[str] | None,
    create: bool,
    read_only: bool,
    chunk_size: int,
    durability: str | None,
    heartbeat_ms: int = 0,
    encryption_key: str | bytes | None = None,
    cipher: str | None = None,
    sync_remote_url: str | None = None,
    sync_token: str | None = None,
    sync_partial_bootstrap_length: int = 0,
    sync_partial_bootstrap_query: str | None = None,
    sync_partial_segment_size: int = 0,
    sync_partial_prefetch: bool = False,
) -> Connection:
    if options is not None:
        id = id or options.id
        path = path or options.path
    if id is not None and not _ID.match(id):
        raise InvalidArgumentError("Agent ID must contain only alphanumeric characters, hyphens, and underscores")
    url = url or os.environ.get("AGENTFS_URL") or None
    if url:
        if sync_partial_bootstrap_length or sync_partial_bootstrap_query or sync_partial_segment_size or sync_partial_prefetch:
            raise InvalidArgumentError("AgentFS.open: sync_partial_* options are for a local database bootstrapped from sync_remote_url, not an HTTP agent")
        if path is not None:
            raise InvalidArgumentError("AgentFS.open: path= is for a local database; over HTTP name the agent with id=")
        if not id:
            raise InvalidArgumentError("AgentFS.open: url= needs id= (the agent on the server)")
        token = token or os.environ.get("AGENTFS_TOKEN") or None
        http = HttpTransport(url, token=token, agent=id)
        try:
            agent = rpc.AgentServiceClient(http)
            if create:
                resp = agent.create_agent(agent_pb2.CreateAgentRequest(id=id, chunk_size=chunk_size, exist_ok=True))
                info = _ops.info_from_proto(resp.info)
            else:
                info = _ops.info_from_proto(agent.info(agent_pb2.InfoRequest()))
        except BaseException:
            http.close()
            raise
        return Connection(http, info)

    key = _key_bytes(encryption_key)
    opts = protocol_pb2.OpenOptions(
        id="" if path is not None else (id or ""),
        path=os.fspath(os.path.abspath(path)) if path is not None and cwd is None else os.fspath(path or ""),
        no_create=not create,
        read_only=read_only,
        chunk_size=chunk_size,
        durability=durability or "",
        encryption_key=key,
        cipher=cipher or "",
        sync_remote_url=sync_remote_url or "",
        sync_token=sync_token or "",
        sync_partial_bootstrap_length=sync_partial_bootstrap_length,
        sync_partial_bootstrap_query=sync_partial_bootstrap_query or "",
        sync_partial_segment_size=sync_partial_segment_size,
        sync_partial_prefetch=sync_partial_prefetch,
    )
    stdio = StdioTransport(
        opts, engine=engine, cwd=cwd, client=f"agentfs-sdk-python/{__version__}", heartbeat_ms=heartbeat_ms
    )
    return Connection(stdio, _ops.info_from_proto(stdio.welcome.info), key_env(key, cipher or ""))


