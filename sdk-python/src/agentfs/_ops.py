"""Every operation of the idiomatic API, once: which generated client method
it calls, with what request, and how the response becomes the Python
value. The synchronous classes (agentfs._sync) and the asyncio ones
(agentfs.aio) both run these, so the two APIs cannot drift apart."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from google.protobuf.message import Message

from ._errors import InvalidArgumentError
from ._types import (
    _STATUS,
    DirEntry,
    ExecResult,
    Info,
    Stats,
    StatFs,
    SyncPullResult,
    SyncPushResult,
    SyncStats,
    ToolCall,
    ToolCallStats,
)
from .v1 import agent_pb2, filesystem_pb2 as fs, kv_pb2, sandbox_pb2, tools_pb2

T = TypeVar("T")

FS, KV, TOOLS, AGENT, SANDBOX = "fs", "kv", "tools", "agent", "sandbox"


@dataclass(frozen=True, slots=True)
class Op(Generic[T]):
    """One call: service ("fs", "kv", "tools", "agent"), the generated
    client's method name, the request and the conversion of the response."""

    service: str
    method: str
    request: Message
    convert: Callable[[Any], T]


def _none(_: Any) -> None:
    return None


def _data(content: str | bytes | bytearray | memoryview, encoding: str) -> bytes:
    if isinstance(content, str):
        return content.encode(encoding)
    return bytes(content)


# --- filesystem ---------------------------------------------------------


def stat(path: str) -> Op[Stats]:
    return Op(FS, "stat", fs.StatRequest(path=path), lambda r: Stats.from_proto(r.stat))


def lstat(path: str) -> Op[Stats]:
    return Op(FS, "lstat", fs.LstatRequest(path=path), lambda r: Stats.from_proto(r.stat))


def read_file(path: str, encoding: str | None) -> Op[Any]:
    if encoding:
        return Op(FS, "read_file", fs.ReadFileRequest(path=path), lambda r: r.data.decode(encoding))
    return Op(FS, "read_file", fs.ReadFileRequest(path=path), lambda r: r.data)


def write_file(
    path: str,
    content: str | bytes | bytearray | memoryview,
    encoding: str,
    *,
    mode: int = 0,
    create_parents: bool = True,
    append: bool = False,
    exclusive: bool = False,
) -> Op[None]:
    req = fs.WriteFileRequest(
        path=path,
        data=_data(content, encoding),
        mode=mode,
        create_parents=create_parents,
        append=append,
        exclusive=exclusive,
    )
    return Op(FS, "write_file", req, _none)


def readdir(path: str) -> Op[list[str]]:
    return Op(FS, "readdir", fs.ReaddirRequest(path=path), lambda r: list(r.names))


def _entries(r: Any) -> list[DirEntry]:
    return [DirEntry(e.name, Stats.from_proto(e.stat)) for e in r.entries]


def readdir_plus(path: str) -> Op[list[DirEntry]]:
    return Op(FS, "readdir_plus", fs.ReaddirPlusRequest(path=path), _entries)


def walk(path: str) -> Op[list[DirEntry]]:
    return Op(FS, "walk", fs.WalkRequest(path=path), _entries)


def mkdir(path: str, recursive: bool, mode: int) -> Op[None]:
    return Op(FS, "mkdir", fs.MkdirRequest(path=path, mode=mode, recursive=recursive), _none)


def rmdir(path: str) -> Op[None]:
    return Op(FS, "rmdir", fs.RmdirRequest(path=path), _none)


def unlink(path: str) -> Op[None]:
    return Op(FS, "unlink", fs.UnlinkRequest(path=path), _none)


def rm(path: str, force: bool, recursive: bool) -> Op[None]:
    return Op(FS, "remove", fs.RemoveRequest(path=path, recursive=recursive, force=force), _none)


def rename(old_path: str, new_path: str, noreplace: bool, exchange: bool) -> Op[None]:
    if noreplace and exchange:
        raise InvalidArgumentError("rename: noreplace and exchange exclude each other")
    flags = fs.RENAME_FLAGS_NOREPLACE if noreplace else fs.RENAME_FLAGS_EXCHANGE if exchange else 0
    return Op(FS, "rename", fs.RenameRequest(old_path=old_path, new_path=new_path, flags=cast(Any, flags)), _none)


def copy_file(src: str, dest: str) -> Op[None]:
    return Op(FS, "copy_file", fs.CopyFileRequest(src=src, dst=dest), _none)


def symlink(target: str, path: str) -> Op[None]:
    return Op(FS, "symlink", fs.SymlinkRequest(target=target, link_path=path), _none)


def readlink(path: str) -> Op[str]:
    return Op(FS, "readlink", fs.ReadlinkRequest(path=path), lambda r: r.target)


def link(existing: str, new_path: str) -> Op[None]:
    return Op(FS, "link", fs.LinkRequest(old_path=existing, new_path=new_path), _none)


def access(path: str, mode: int) -> Op[None]:
    return Op(FS, "access", fs.AccessRequest(path=path, mode=mode), _none)


def chmod(path: str, mode: int) -> Op[None]:
    return Op(FS, "chmod", fs.ChmodRequest(path=path, mode=mode), _none)


def chown(path: str, uid: int, gid: int, follow_symlinks: bool) -> Op[None]:
    return Op(FS, "chown", fs.ChownRequest(path=path, uid=uid, gid=gid, no_follow=not follow_symlinks), _none)


def utimes(path: str, atime_ns: int | None, mtime_ns: int | None, follow_symlinks: bool) -> Op[None]:
    req = fs.UtimesRequest(path=path, no_follow=not follow_symlinks)
    if atime_ns is not None:
        req.atime_ns = atime_ns
    if mtime_ns is not None:
        req.mtime_ns = mtime_ns
    return Op(FS, "utimes", req, _none)


def truncate(path: str, size: int) -> Op[None]:
    return Op(FS, "truncate", fs.TruncateRequest(path=path, size=size), _none)


def mknod(path: str, mode: int, rdev: int) -> Op[None]:
    return Op(FS, "mknod", fs.MknodRequest(path=path, mode=mode, rdev=rdev), _none)


def statfs() -> Op[StatFs]:
    def conv(r: fs.StatfsResponse) -> StatFs:
        return StatFs(r.inodes, r.bytes_used, r.block_size, r.blocks, r.blocks_free, r.files_free, r.name_max)

    return Op(FS, "statfs", fs.StatfsRequest(), conv)


def getxattr(path: str, name: str, follow_symlinks: bool) -> Op[bytes]:
    return Op(FS, "get_xattr", fs.GetXattrRequest(path=path, name=name, no_follow=not follow_symlinks), lambda r: r.value)


def setxattr(path: str, name: str, value: bytes, flags: int, follow_symlinks: bool) -> Op[None]:
    # os.XATTR_CREATE (1) and os.XATTR_REPLACE (2) are the enum's values.
    req = fs.SetXattrRequest(path=path, name=name, value=bytes(value), flags=cast(Any, flags), no_follow=not follow_symlinks)
    return Op(FS, "set_xattr", req, _none)


def listxattr(path: str, follow_symlinks: bool) -> Op[list[str]]:
    return Op(FS, "list_xattr", fs.ListXattrRequest(path=path, no_follow=not follow_symlinks), lambda r: list(r.names))


def removexattr(path: str, name: str, follow_symlinks: bool) -> Op[None]:
    req = fs.RemoveXattrRequest(path=path, name=name, no_follow=not follow_symlinks)
    return Op(FS, "remove_xattr", req, _none)


# --- file handles -------------------------------------------------------

_MODES = {
    "r": os.O_RDONLY,
    "r+": os.O_RDWR,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "w+": os.O_RDWR | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "a+": os.O_RDWR | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "x+": os.O_RDWR | os.O_CREAT | os.O_EXCL,
}


def open_flags(flags: str | int) -> int:
    """open(2) flags from a mode string like "rb", "w", "a+" or an int
    (os.O_* values: the engine uses Linux's)."""
    if isinstance(flags, int):
        return flags
    key = flags.replace("b", "").replace("t", "")
    if key not in _MODES:
        raise InvalidArgumentError(f"open: invalid mode {flags!r}")
    return _MODES[key]


def open_file(path: str, flags: int, mode: int) -> Op[tuple[int, Stats]]:
    return Op(FS, "open", fs.OpenRequest(path=path, flags=flags, mode=mode), lambda r: (r.handle, Stats.from_proto(r.stat)))


def pread(handle: int, size: int, offset: int) -> Op[bytes]:
    return Op(FS, "pread", fs.PreadRequest(handle=handle, offset=offset, size=size), lambda r: r.data)


def pwrite(handle: int, data: bytes | bytearray | memoryview, offset: int) -> Op[int]:
    req = fs.PwriteRequest(handle=handle, offset=offset, data=bytes(data))
    return Op(FS, "pwrite", req, lambda r: r.written)


def ftruncate(handle: int, size: int) -> Op[None]:
    return Op(FS, "ftruncate", fs.FtruncateRequest(handle=handle, size=size), _none)


def fsync(handle: int) -> Op[None]:
    return Op(FS, "fsync", fs.FsyncRequest(handle=handle), _none)


def fstat(handle: int) -> Op[Stats]:
    return Op(FS, "fstat", fs.FstatRequest(handle=handle), lambda r: Stats.from_proto(r.stat))


def close(handle: int) -> Op[None]:
    return Op(FS, "close", fs.CloseRequest(handle=handle), _none)


# --- key-value ------------------------------------------------------------


def kv_set(key: str, value: Any) -> Op[None]:
    return Op(KV, "kv_set", kv_pb2.KvSetRequest(key=key, value_json=json.dumps(value)), _none)


def kv_get(key: str, default: Any) -> Op[Any]:
    return Op(KV, "kv_get", kv_pb2.KvGetRequest(key=key), lambda r: json.loads(r.value_json) if r.found else default)


def kv_list(prefix: str, limit: int) -> Op[list[dict[str, Any]]]:
    def conv(r: kv_pb2.KvListResponse) -> list[dict[str, Any]]:
        return [{"key": e.key, "value": json.loads(e.value_json)} for e in r.entries]

    return Op(KV, "kv_list", kv_pb2.KvListRequest(prefix=prefix, limit=limit), conv)


def kv_delete(key: str) -> Op[bool]:
    return Op(KV, "kv_delete", kv_pb2.KvDeleteRequest(key=key), lambda r: r.deleted)


# --- tool calls -------------------------------------------------------------


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


def tool_call(c: tools_pb2.ToolCall) -> ToolCall:
    return ToolCall(
        id=c.id,
        name=c.name,
        parameters=json.loads(c.parameters_json) if c.HasField("parameters_json") else None,
        result=json.loads(c.result_json) if c.HasField("result_json") else None,
        error=c.error if c.HasField("error") else None,
        status=_STATUS.get(c.status, "pending"),
        started_at=c.started_at,
        completed_at=c.completed_at if c.HasField("completed_at") else None,
        duration_ms=c.duration_ms if c.HasField("duration_ms") else None,
    )


def tool_start(name: str, parameters: Any) -> Op[int]:
    return Op(TOOLS, "tool_start", tools_pb2.ToolStartRequest(name=name, parameters_json=_json(parameters)), lambda r: r.id)


def tool_success(call_id: int, result: Any) -> Op[None]:
    return Op(TOOLS, "tool_success", tools_pb2.ToolSuccessRequest(id=call_id, result_json=_json(result)), _none)


def tool_error(call_id: int, error: str) -> Op[None]:
    return Op(TOOLS, "tool_fail", tools_pb2.ToolFailRequest(id=call_id, error=error), _none)


def tool_record(
    name: str,
    started_at: int,
    completed_at: int,
    parameters: Any,
    result: Any,
    error: str | None,
) -> Op[int]:
    req = tools_pb2.ToolRecordRequest(
        name=name,
        started_at=started_at,
        completed_at=completed_at,
        parameters_json=_json(parameters),
        result_json=_json(result),
        error=error,
    )
    return Op(TOOLS, "tool_record", req, lambda r: r.id)


def tool_get(call_id: int) -> Op[ToolCall | None]:
    return Op(TOOLS, "tool_get", tools_pb2.ToolGetRequest(id=call_id), lambda r: tool_call(r.call) if r.found else None)


def tool_list(name: str = "", since: int = 0, limit: int | None = None) -> Op[list[ToolCall]]:
    req = tools_pb2.ToolListRequest(name=name, since=since, limit=limit or 0)
    return Op(TOOLS, "tool_list", req, lambda r: [tool_call(c) for c in r.calls])


def tool_stats() -> Op[list[ToolCallStats]]:
    def conv(r: tools_pb2.ToolStatsResponse) -> list[ToolCallStats]:
        return [ToolCallStats(s.name, s.total_calls, s.successful, s.failed, s.avg_duration_ms, s.pending) for s in r.stats]

    return Op(TOOLS, "tool_stats", tools_pb2.ToolStatsRequest(), conv)


# --- agent ----------------------------------------------------------------


def info_from_proto(r: agent_pb2.InfoResponse) -> Info:
    return Info(r.id, r.path, r.schema_version, r.chunk_size, r.page_size, r.read_only, r.overlay_base, r.engine_version)


def info() -> Op[Info]:
    return Op(AGENT, "info", agent_pb2.InfoRequest(), info_from_proto)


def _pull(r: agent_pb2.SyncPullResponse) -> SyncPullResult:
    return SyncPullResult(r.revision, r.changed, r.applied, r.kept)


def _push(r: agent_pb2.SyncPushResponse) -> SyncPushResult:
    return SyncPushResult(r.rows, r.revision)


def sync_pull() -> Op[SyncPullResult]:
    return Op(AGENT, "sync_pull", agent_pb2.SyncPullRequest(), _pull)


def sync_push() -> Op[SyncPushResult]:
    return Op(AGENT, "sync_push", agent_pb2.SyncPushRequest(), _push)


def sync() -> Op[tuple[SyncPullResult, SyncPushResult]]:
    return Op(AGENT, "sync", agent_pb2.SyncRequest(), lambda r: (_pull(r.pull), _push(r.push)))


def _stats(r: agent_pb2.SyncStatsResponse) -> SyncStats:
    return SyncStats(
        r.cdc_operations,
        r.main_wal_size,
        r.revert_wal_size,
        r.last_pull_unix_time or None,
        r.last_push_unix_time or None,
        r.revision,
        r.network_sent_bytes,
        r.network_received_bytes,
        r.remote_url,
    )


def sync_stats() -> Op[SyncStats]:
    return Op(AGENT, "sync_stats", agent_pb2.SyncStatsRequest(), _stats)


def _value(v: Any) -> agent_pb2.Value:
    if v is None:
        return agent_pb2.Value(null=True)
    if isinstance(v, bool):
        return agent_pb2.Value(integer=int(v))
    if isinstance(v, int):
        return agent_pb2.Value(integer=v)
    if isinstance(v, float):
        return agent_pb2.Value(real=v)
    if isinstance(v, str):
        return agent_pb2.Value(text=v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return agent_pb2.Value(blob=bytes(v))
    raise InvalidArgumentError(f"query: unsupported parameter type {type(v).__name__}")


def _py(v: agent_pb2.Value) -> Any:
    kind = v.WhichOneof("kind")
    return None if kind in (None, "null") else getattr(v, kind)


def query(sql: str, params: tuple[Any, ...]) -> Op[list[tuple[Any, ...]]]:
    req = agent_pb2.QueryRequest(sql=sql, params=[_value(p) for p in params])
    return Op(AGENT, "query", req, lambda r: [tuple(_py(v) for v in row.values) for row in r.rows])


# --- sandbox ----------------------------------------------------------------


def exec_script(
    script: str,
    dir: str,
    stdin: bytes,
    env: dict[str, str] | None,
    limits: str,
    bindings: list[sandbox_pb2.BindingSpec] | None = None,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    no_audit: bool = False,
    pol: dict[str, Any] | None = None,
) -> Op[ExecResult]:
    req = sandbox_pb2.ExecRequest(
        **(pol or {}),
        script=script,
        dir=dir,
        stdin=stdin,
        env=env or {},
        limits=limits,
        bindings=bindings or [],
        allow=allow or [],
        deny=deny or [],
        no_audit=no_audit,
    )

    def conv(r: sandbox_pb2.ExecResponse) -> ExecResult:
        return ExecResult(r.exit_code, r.stdout, r.stderr, r.limit, r.duration_ns)

    return Op(SANDBOX, "exec", req, conv)


def policy(req: sandbox_pb2.ExecRequest) -> Op[sandbox_pb2.EffectivePolicy]:
    return Op(SANDBOX, "policy", sandbox_pb2.PolicyRequest(exec=req), lambda r: r.policy)
