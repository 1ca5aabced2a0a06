"""The asyncio API: the same classes and methods as the synchronous one
(agentfs.AgentFS), each a coroutine.

>>> async with agentfs.aio.AgentFS.open(id="my-agent") as agent:
...     await agent.fs.write_file("/notes.txt", "hello")

`await AgentFS.open(...)` works too (agentfs-sdk's form, which also takes
an AgentFSOptions). Calls from many tasks are in flight at once; over stdio
they share one engine process and no thread per call.
"""

from __future__ import annotations

import asyncio
import os
import types
import weakref
from collections.abc import Generator
from typing import Any, Literal, TypeVar, overload

from . import _ops
from ._bindings import Binding, Bindings
from ._connect import connect
from ._engine import find_engine
from ._errors import *  # noqa: F403  (the same exceptions, importable from here)
from ._errors import UnimplementedError
from ._http import HttpTransport
from ._ops import Op
from ._mount import HTTP_REFUSAL, AsyncSandboxMount, Mounts
from ._session import AsyncSession, SessionInfo, info_of, open_request
from ._process import AsyncProcess, NetRule, ProcessInfo, AsyncShell, can_stream, infos, shell_request, start_request, stream_spawn_async, policy_fields
from ._stdio import StdioTransport
from ._types import (
    AgentFSOptions,
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
from .v1 import process_pb2, rpc, sandbox_pb2, session_pb2

__all__ = ["AgentFS", "AgentFSOptions", "Filesystem", "File", "KvStore", "ToolCalls"]

T = TypeVar("T")

Data = str | bytes | bytearray | memoryview


class _Clients:
    __slots__ = ("fs", "kv", "tools", "agent", "sandbox", "process", "session")

    def __init__(self, t: StdioTransport | HttpTransport) -> None:
        self.fs = rpc.AsyncFilesystemServiceClient(t)
        self.kv = rpc.AsyncKvServiceClient(t)
        self.tools = rpc.AsyncToolsServiceClient(t)
        self.agent = rpc.AsyncAgentServiceClient(t)
        self.sandbox = rpc.AsyncSandboxServiceClient(t)
        self.process = rpc.AsyncProcessServiceClient(t)
        self.session = rpc.AsyncSessionServiceClient(t)


class _Part:
    __slots__ = ("_c",)

    def __init__(self, clients: _Clients) -> None:
        self._c = clients

    async def _do(self, op: Op[T]) -> T:
        return op.convert(await getattr(getattr(self._c, op.service), op.method)(op.request))


class Filesystem(_Part):
    """See agentfs.Filesystem; every method is a coroutine here."""

    __slots__ = ()

    async def stat(self, path: str) -> Stats:
        return await self._do(_ops.stat(path))

    async def lstat(self, path: str) -> Stats:
        return await self._do(_ops.lstat(path))

    @overload
    async def read_file(self, path: str) -> str: ...
    @overload
    async def read_file(self, path: str, encoding: None) -> bytes: ...
    @overload
    async def read_file(self, path: str, encoding: str) -> str: ...
    async def read_file(self, path: str, encoding: str | None = "utf-8") -> str | bytes:
        return await self._do(_ops.read_file(path, encoding))  # type: ignore[no-any-return,unused-ignore]

    async def read_bytes(self, path: str) -> bytes:
        return await self._do(_ops.read_file(path, None))  # type: ignore[no-any-return,unused-ignore]

    async def write_file(
        self,
        path: str,
        content: Data,
        encoding: str = "utf-8",
        *,
        mode: int = 0,
        create_parents: bool = True,
        exclusive: bool = False,
    ) -> None:
        await self._do(
            _ops.write_file(path, content, encoding, mode=mode, create_parents=create_parents, exclusive=exclusive)
        )

    async def append_file(self, path: str, content: Data, encoding: str = "utf-8") -> None:
        await self._do(_ops.write_file(path, content, encoding, create_parents=False, append=True))

    async def readdir(self, path: str) -> list[str]:
        return await self._do(_ops.readdir(path))

    async def readdir_plus(self, path: str) -> list[DirEntry]:
        return await self._do(_ops.readdir_plus(path))

    async def walk(self, path: str = "/") -> list[DirEntry]:
        return await self._do(_ops.walk(path))

    async def mkdir(self, path: str, recursive: bool = False, mode: int = 0o755) -> None:
        await self._do(_ops.mkdir(path, recursive, mode))

    async def rmdir(self, path: str) -> None:
        await self._do(_ops.rmdir(path))

    async def unlink(self, path: str) -> None:
        await self._do(_ops.unlink(path))

    async def delete_file(self, path: str) -> None:
        await self._do(_ops.unlink(path))

    async def rm(self, path: str, force: bool = False, recursive: bool = False) -> None:
        await self._do(_ops.rm(path, force, recursive))

    async def rename(self, old_path: str, new_path: str, *, noreplace: bool = False, exchange: bool = False) -> None:
        await self._do(_ops.rename(old_path, new_path, noreplace, exchange))

    async def copy_file(self, src: str, dest: str) -> None:
        await self._do(_ops.copy_file(src, dest))

    async def symlink(self, target: str, path: str) -> None:
        await self._do(_ops.symlink(target, path))

    async def readlink(self, path: str) -> str:
        return await self._do(_ops.readlink(path))

    async def link(self, existing: str, new_path: str) -> None:
        await self._do(_ops.link(existing, new_path))

    async def access(self, path: str, mode: int = os.F_OK) -> None:
        await self._do(_ops.access(path, mode))

    async def exists(self, path: str) -> bool:
        try:
            await self._do(_ops.access(path, os.F_OK))
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    async def chmod(self, path: str, mode: int) -> None:
        await self._do(_ops.chmod(path, mode))

    async def chown(self, path: str, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        await self._do(_ops.chown(path, uid, gid, follow_symlinks))

    async def utimes(
        self, path: str, atime_ns: int | None = None, mtime_ns: int | None = None, *, follow_symlinks: bool = True
    ) -> None:
        await self._do(_ops.utimes(path, atime_ns, mtime_ns, follow_symlinks))

    async def truncate(self, path: str, size: int) -> None:
        await self._do(_ops.truncate(path, size))

    async def mknod(self, path: str, mode: int, rdev: int = 0) -> None:
        await self._do(_ops.mknod(path, mode, rdev))

    async def statfs(self) -> StatFs:
        return await self._do(_ops.statfs())

    async def getxattr(self, path: str, name: str, *, follow_symlinks: bool = True) -> bytes:
        return await self._do(_ops.getxattr(path, name, follow_symlinks))

    async def setxattr(
        self, path: str, name: str, value: bytes, flags: int = 0, *, follow_symlinks: bool = True
    ) -> None:
        await self._do(_ops.setxattr(path, name, value, flags, follow_symlinks))

    async def listxattr(self, path: str, *, follow_symlinks: bool = True) -> list[str]:
        return await self._do(_ops.listxattr(path, follow_symlinks))

    async def removexattr(self, path: str, name: str, *, follow_symlinks: bool = True) -> None:
        await self._do(_ops.removexattr(path, name, follow_symlinks))

    async def open(self, path: str, flags: str | int = "r", mode: int = 0o644) -> File:
        fl = _ops.open_flags(flags)
        handle, _ = await self._do(_ops.open_file(path, fl, mode))
        return File(self, handle, path, fl)


class File:
    """See agentfs.File; `async with` closes it."""

    def __init__(self, fs: Filesystem, handle: int, path: str, flags: int) -> None:
        self._fs = fs
        self.handle = handle
        self.name = path
        self.flags = flags
        self._pos = 0
        self.closed = False

    async def pread(self, size: int, offset: int) -> bytes:
        return await self._fs._do(_ops.pread(self.handle, size, offset))

    async def pwrite(self, data: bytes | bytearray | memoryview, offset: int) -> int:
        return await self._fs._do(_ops.pwrite(self.handle, data, offset))

    async def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        await self._fs._do(_ops.ftruncate(self.handle, size))
        return size

    async def fsync(self) -> None:
        await self._fs._do(_ops.fsync(self.handle))

    async def fstat(self) -> Stats:
        return await self._fs._do(_ops.fstat(self.handle))

    async def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = max((await self.fstat()).size - self._pos, 0)
        data = await self.pread(size, self._pos)
        self._pos += len(data)
        return data

    async def write(self, data: bytes | bytearray | memoryview) -> int:
        if self.flags & os.O_APPEND:
            self._pos = (await self.fstat()).size
        n = await self.pwrite(data, self._pos)
        self._pos += n
        return n

    async def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = (await self.fstat()).size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise OSError(22, os.strerror(22), self.name)
        self._pos = pos
        return pos

    def tell(self) -> int:
        return self._pos

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self._fs._do(_ops.close(self.handle))

    async def __aenter__(self) -> File:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class KvStore(_Part):
    __slots__ = ()

    async def set(self, key: str, value: Any) -> None:
        await self._do(_ops.kv_set(key, value))

    async def get(self, key: str, default: Any = None) -> Any:
        return await self._do(_ops.kv_get(key, default))

    async def list(self, prefix: str = "", limit: int = 0) -> list[dict[str, Any]]:
        return await self._do(_ops.kv_list(prefix, limit))

    async def delete(self, key: str) -> bool:
        return await self._do(_ops.kv_delete(key))


class ToolCalls(_Part):
    __slots__ = ()

    async def start(self, name: str, parameters: Any = None) -> int:
        return await self._do(_ops.tool_start(name, parameters))

    async def success(self, call_id: int, result: Any = None) -> None:
        await self._do(_ops.tool_success(call_id, result))

    async def error(self, call_id: int, error: str) -> None:
        await self._do(_ops.tool_error(call_id, error))

    async def record(
        self,
        name: str,
        started_at: int,
        completed_at: int,
        parameters: Any = None,
        result: Any = None,
        error: str | None = None,
    ) -> int:
        return await self._do(_ops.tool_record(name, started_at, completed_at, parameters, result, error))

    async def get(self, call_id: int) -> ToolCall | None:
        return await self._do(_ops.tool_get(call_id))

    async def get_by_name(self, name: str, limit: int | None = None) -> list[ToolCall]:
        return await self._do(_ops.tool_list(name=name, limit=limit))

    async def get_recent(self, since: int, limit: int | None = None) -> list[ToolCall]:
        return await self._do(_ops.tool_list(since=since + 1, limit=limit))

    async def get_stats(self) -> list[ToolCallStats]:
        return await self._do(_ops.tool_stats())


class AgentFS:
    """See agentfs.AgentFS; open with `await AgentFS.open(...)` or
    `async with AgentFS.open(...) as agent`."""

    def __init__(self, transport: StdioTransport | HttpTransport, info: Info, mount_env: dict[str, str] | None = None) -> None:
        self.transport = transport
        self._mounts = Mounts(mount_env or {})
        # An agent never closed (dropped, or the program ends first):
        # its mounts end too rather than outlive it.
        weakref.finalize(self, self._mounts.unmount_all)
        self._bindings = Bindings(transport)
        self._info = info
        c = _Clients(transport)
        self.rpc = c
        self.fs = Filesystem(c)
        self.kv = KvStore(c)
        self.tools = ToolCalls(c)
        self._agent = _Part(c)

    @staticmethod
    def open(
        options: AgentFSOptions | None = None,
        *,
        id: str | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        token: str | None = None,
        engine: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        create: bool = True,
        read_only: bool = False,
        chunk_size: int = 0,
        durability: Literal["normal", "full"] | None = None,
        heartbeat_ms: int = 0,
        encryption_key: str | bytes | None = None,
        cipher: str | None = None,
        sync_remote_url: str | None = None,
        sync_token: str | None = None,
        sync_partial_bootstrap_length: int = 0,
        sync_partial_bootstrap_query: str | None = None,
        sync_partial_segment_size: int = 0,
        sync_partial_prefetch: bool = False,
    ) -> _Opening:
        """Same options as agentfs.AgentFS.open."""
        kw: dict[str, Any] = dict(
            id=id,
            path=path,
            url=url,
            token=token,
            engine=engine,
            cwd=cwd,
            create=create,
            read_only=read_only,
            chunk_size=chunk_size,
            durability=durability,
            heartbeat_ms=heartbeat_ms,
            encryption_key=encryption_key,
            cipher=cipher,
            sync_remote_url=sync_remote_url,
            sync_token=sync_token,
            sync_partial_bootstrap_length=sync_partial_bootstrap_length,
            sync_partial_bootstrap_query=sync_partial_bootstrap_query,
            sync_partial_segment_size=sync_partial_segment_size,
            sync_partial_prefetch=sync_partial_prefetch,
        )
        return _Opening(options, kw)

    async def info(self) -> Info:
        return await self._agent._do(_ops.info())

    async def pull(self) -> SyncPullResult:
        """See agentfs.AgentFS.pull."""
        return await self._agent._do(_ops.sync_pull())

    async def push(self) -> SyncPushResult:
        """See agentfs.AgentFS.push."""
        return await self._agent._do(_ops.sync_push())

    async def sync(self) -> tuple[SyncPullResult, SyncPushResult]:
        """Pulls, then pushes."""
        return await self._agent._do(_ops.sync())

    async def stats(self) -> SyncStats:
        """See agentfs.AgentFS.stats."""
        return await self._agent._do(_ops.sync_stats())

    async def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        return await self._agent._do(_ops.query(sql, params))

    async def exec(
        self,
        script: str,
        *,
        dir: str = "/",
        stdin: bytes = b"",
        env: dict[str, str] | None = None,
        limits: str = "",
        bindings: dict[str, Binding] | None = None,
        allow: list[str] | None = None,
        deny: list[str] | None = None,
        readable: list[str] | None = None,
        writable: list[str] | None = None,
        default_deny: bool = False,
        net: list[NetRule] | None = None,
        limit_values: dict[str, int] | None = None,
        no_audit: bool = False,
    ) -> ExecResult:
        """Runs a shell script in the engine's in-process sandbox over the
        agent's files (POSIX utilities written in Go; no host process).
        `bindings` are functions of this process the script runs as
        commands (`lookup --id 7` calls bindings["lookup"]({"id": 7}); the
        JSON result is printed, an exception fails the command); a
        function's `schema` attribute, if any, is its JSON schema. stdio
        only: the engine calls back over the same connection. allow and deny
        name the commands that may (all when empty) and may not run;
        no_audit skips the engine's "exec" record in the tool-call log
        (for callers that record the call themselves).
        readable and writable are the path prefixes the script may read
        and write (None: everything, unless default_deny; readable alone
        makes nothing writable); default_deny makes readable, writable and
        allow allow-lists even when empty (the shell's builtins still run);
        net lists the NetRules curl may reach (none: no network);
        limit_values replace single limits of the profile
        ({"wall_time_ms": 5000, "max_memory_bytes": ...})."""
        specs = self._bindings.specs(bindings)
        self._bindings.register(bindings, asyncio.get_running_loop())
        try:
            return await self._agent._do(_ops.exec_script(script, dir, stdin, env, limits, specs, allow, deny, no_audit, pol=policy_fields(readable, writable, default_deny, net, limit_values)))
        finally:
            self._bindings.unregister(bindings)

    async def spawn(
        self,
        script: str,
        *,
        dir: str = "",
        stdin: bytes = b"",
        env: dict[str, str] | None = None,
        limits: str = "",
        bindings: dict[str, Binding] | None = None,
        allow: list[str] | None = None,
        deny: list[str] | None = None,
        readable: list[str] | None = None,
        writable: list[str] | None = None,
        default_deny: bool = False,
        net: list[NetRule] | None = None,
        limit_values: dict[str, int] | None = None,
        no_audit: bool = False,
        keep_stdin_open: bool = False,
        timeout_ms: int = 0,
        detach: bool = False,
        lease_ms: int = 0,
        _shell_id: int = 0,
    ) -> AsyncProcess:
        """Starts a script as a process and returns its handle: iterate it
        for output as it comes, write() stdin (keep_stdin_open=True),
        kill(signal), wait() for the exit code. Same options as exec, plus
        timeout_ms (SIGKILL after). The output streams, and the process
        ends with its stream (close() the handle, or the agent); over HTTP
        detach=True long-polls instead, and the process outlives this
        client. lease_ms is the lease of a long-polled process that is not
        detached, which spawn no longer makes (a stream needs none)."""
        specs = self._bindings.specs(bindings)
        self._bindings.register(bindings, asyncio.get_running_loop())
        start = start_request(
            script, dir=dir, stdin=stdin, env=env, limits=limits, specs=specs, allow=allow, deny=deny,
            no_audit=no_audit, shell_id=_shell_id, keep_stdin_open=keep_stdin_open, timeout_ms=timeout_ms,
            detach=detach, lease_ms=lease_ms, pol=policy_fields(readable, writable, default_deny, net, limit_values),
        )

        def release() -> None:
            self._bindings.unregister(bindings)

        try:
            if can_stream(self.transport, detach):
                return await stream_spawn_async(self.transport, self.rpc.process, start, release)
            r = await self.rpc.process.start_process(start)
        except BaseException:
            release()
            raise
        return AsyncProcess(self.rpc.process, r.pid, release)

    async def shell(
        self,
        *,
        dir: str = "/",
        env: dict[str, str] | None = None,
        limits: str = "",
        bindings: dict[str, Binding] | None = None,
        allow: list[str] | None = None,
        deny: list[str] | None = None,
        readable: list[str] | None = None,
        writable: list[str] | None = None,
        default_deny: bool = False,
        net: list[NetRule] | None = None,
        limit_values: dict[str, int] | None = None,
        no_audit: bool = False,
    ) -> AsyncShell:
        """Opens a persistent shell: working directory, variables and
        functions survive between its run() calls, as in `agentfs sh`."""
        specs = self._bindings.specs(bindings)
        self._bindings.register(bindings, asyncio.get_running_loop())
        try:
            r = await self.rpc.process.open_shell(shell_request(
                dir=dir, env=env, limits=limits, specs=specs, allow=allow, deny=deny, no_audit=no_audit,
                pol=policy_fields(readable, writable, default_deny, net, limit_values),
            ))
        except BaseException:
            self._bindings.unregister(bindings)
            raise
        return AsyncShell(self, r.shell_id, lambda: self._bindings.unregister(bindings))

    async def policy(
        self,
        *,
        dir: str = "/",
        env: dict[str, str] | None = None,
        limits: str = "",
        bindings: dict[str, Binding] | None = None,
        allow: list[str] | None = None,
        deny: list[str] | None = None,
        readable: list[str] | None = None,
        writable: list[str] | None = None,
        default_deny: bool = False,
        net: list[NetRule] | None = None,
        limit_values: dict[str, int] | None = None,
    ) -> sandbox_pb2.EffectivePolicy:
        """The effective policy of these exec options, every default filled
        in (agentfs.v1.EffectivePolicy, the message `agentfs sh
        --print-policy` prints as JSON; google.protobuf.json_format gives
        its JSON or a dict): what a script may read, write, run and reach.
        Nothing runs; a policy exec would refuse raises the same way
        (EINVAL). Bindings are listed by name."""
        req = sandbox_pb2.ExecRequest(
            dir=dir, env=env or {}, limits=limits, bindings=self._bindings.specs(bindings, listing=True),
            allow=allow or [], deny=deny or [], **policy_fields(readable, writable, default_deny, net, limit_values),
        )
        return await self._agent._do(_ops.policy(req))

    async def processes(self) -> list[ProcessInfo]:
        """The processes running (or ended with their exit not read)."""
        return infos(await self.rpc.process.list_processes(process_pb2.ListProcessesRequest()))

    async def open_session(self, **kw: Any) -> AsyncSession:
        """Opens (resumes or creates) an agent session: a conversation with
        a model whose tool calls run on this agent inside the engine. Keyword
        arguments: id, provider ("openai" or "anthropic"), model, base_url,
        api_key (empty ones come from the stored session, then the
        engine's environment), system, tools, read_only, limits, allow,
        deny, readable, writable, max_turns, max_tokens,
        max_response_bytes, timeout_ms. See docs/SESSIONS.md."""
        r = await self.rpc.session.open_session(open_request(**kw))
        return AsyncSession(self.rpc.session, info_of(r.session))

    async def sessions(self) -> list[SessionInfo]:
        """The sessions stored in this agent."""
        return [info_of(i) for i in (await self.rpc.session.list_sessions(session_pb2.ListSessionsRequest())).sessions]

    async def delete_session(self, id: str) -> bool:
        """Removes a stored session; True when there was one."""
        return bool((await self.rpc.session.delete_session(session_pb2.DeleteSessionRequest(session_id=id))).deleted)

    async def kill(self, pid: int, signal: int = 9) -> None:
        """Kills a process of processes() by pid (default SIGKILL)."""
        await self.rpc.process.kill_process(process_pb2.KillProcessRequest(pid=pid, signal=signal))

    async def mount_sandbox(self, dir: str | os.PathLike[str] | None = None, *, engine: str | os.PathLike[str] | None = None) -> AsyncSandboxMount:
        """See agentfs.AgentFS.mount_sandbox; `await m.unmount()` or
        `async with await agent.mount_sandbox() as m`."""
        if not isinstance(self.transport, StdioTransport):
            raise UnimplementedError(HTTP_REFUSAL)
        exe = find_engine(engine) if engine is not None else self.transport.engine
        # Waiting for the CLI to mount blocks: not on the event loop.
        return AsyncSandboxMount(await asyncio.to_thread(self._mounts.mount, exe, self._info.path, dir))

    async def close(self) -> None:
        # Mounts end before the engine (see agentfs.AgentFS.close);
        # shutdown waits for the engine to exit: not on the event loop.
        err = await asyncio.to_thread(self._mounts.unmount_all)
        await asyncio.to_thread(self.transport.close)
        if err is not None:
            raise err

    async def __aenter__(self) -> AgentFS:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        await self.close()


class _Opening:
    """What AgentFS.open returns: await it for the agent, or use it with
    `async with` to close the agent at the end of the block."""

    def __init__(self, options: AgentFSOptions | None, kw: dict[str, Any]) -> None:
        self._options = options
        self._kw = kw
        self._agent: AgentFS | None = None

    async def _open(self) -> AgentFS:
        # Starting the engine and the handshake block: run them off the loop.
        conn = await asyncio.to_thread(connect, self._options, **self._kw)
        return AgentFS(conn.transport, conn.info, conn.mount_env)

    def __await__(self) -> Generator[Any, None, AgentFS]:
        return self._open().__await__()

    async def __aenter__(self) -> AgentFS:
        self._agent = await self._open()
        return self._agent

    async def __aexit__(self, *exc: object) -> None:
        if self._agent is not None:
            await self._agent.close()
