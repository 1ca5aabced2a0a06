"""The synchronous API: AgentFS.open(...) -> agent.fs / agent.kv / agent.tools.

Method names follow Turso's agentfs-sdk for Python (read_file, write_file,
readdir, mkdir, rm, rename, copy_file, access; kv.set/get/list/delete;
tools.start/success/error/record/get/get_by_name/get_recent/get_stats), so
code written for it runs here without `await`. Every method is safe to call
from several threads at once; the calls run concurrently in the engine.
"""

from __future__ import annotations

import os
import types
import weakref
from typing import Any, Literal, TypeVar, overload

from . import _ops
from ._bindings import Binding, Bindings
from ._connect import connect
from ._engine import find_engine
from ._errors import UnimplementedError
from ._http import HttpTransport
from ._ops import Op
from ._mount import HTTP_REFUSAL, Mounts, SandboxMount
from ._session import Session, SessionInfo, info_of, open_request
from ._process import Process, NetRule, ProcessInfo, Shell, can_stream, infos, shell_request, start_request, stream_spawn, policy_fields
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

T = TypeVar("T")

Data = str | bytes | bytearray | memoryview


class _Clients:
    """The generated clients over one transport."""

    __slots__ = ("fs", "kv", "tools", "agent", "sandbox", "process", "session")

    def __init__(self, t: StdioTransport | HttpTransport) -> None:
        self.fs = rpc.FilesystemServiceClient(t)
        self.kv = rpc.KvServiceClient(t)
        self.tools = rpc.ToolsServiceClient(t)
        self.agent = rpc.AgentServiceClient(t)
        self.sandbox = rpc.SandboxServiceClient(t)
        self.process = rpc.ProcessServiceClient(t)
        self.session = rpc.SessionServiceClient(t)


class _Part:
    __slots__ = ("_c",)

    def __init__(self, clients: _Clients) -> None:
        self._c = clients

    def _do(self, op: Op[T]) -> T:
        return op.convert(getattr(getattr(self._c, op.service), op.method)(op.request))


class Filesystem(_Part):
    """The agent's POSIX-like filesystem. Paths are absolute. Failures raise
    the built-in OSError subclass of their errno (FileNotFoundError...)."""

    __slots__ = ()

    def stat(self, path: str) -> Stats:
        """Attributes of path, following symlinks."""
        return self._do(_ops.stat(path))

    def lstat(self, path: str) -> Stats:
        """Attributes of path itself (a final symlink is not followed)."""
        return self._do(_ops.lstat(path))

    @overload
    def read_file(self, path: str) -> str: ...
    @overload
    def read_file(self, path: str, encoding: None) -> bytes: ...
    @overload
    def read_file(self, path: str, encoding: str) -> str: ...
    def read_file(self, path: str, encoding: str | None = "utf-8") -> str | bytes:
        """The whole file, decoded with `encoding`, or bytes with encoding=None."""
        return self._do(_ops.read_file(path, encoding))  # type: ignore[no-any-return]

    def read_bytes(self, path: str) -> bytes:
        return self._do(_ops.read_file(path, None))  # type: ignore[no-any-return]

    def write_file(
        self,
        path: str,
        content: Data,
        encoding: str = "utf-8",
        *,
        mode: int = 0,
        create_parents: bool = True,
        exclusive: bool = False,
    ) -> None:
        """Replaces the file's content in one transaction. Missing parent
        directories are created (as agentfs-sdk does) unless
        create_parents=False; exclusive=True fails with FileExistsError."""
        self._do(_ops.write_file(path, content, encoding, mode=mode, create_parents=create_parents, exclusive=exclusive))

    def append_file(self, path: str, content: Data, encoding: str = "utf-8") -> None:
        """Appends to the file (created if missing) in one transaction."""
        self._do(_ops.write_file(path, content, encoding, create_parents=False, append=True))

    def readdir(self, path: str) -> list[str]:
        """Names in the directory, sorted."""
        return self._do(_ops.readdir(path))

    def readdir_plus(self, path: str) -> list[DirEntry]:
        """Names with their attributes, in one round trip."""
        return self._do(_ops.readdir_plus(path))

    def walk(self, path: str = "/") -> list[DirEntry]:
        """Every path under path (included), parents first, with lstat
        attributes; DirEntry.name is the full path."""
        return self._do(_ops.walk(path))

    def mkdir(self, path: str, recursive: bool = False, mode: int = 0o755) -> None:
        self._do(_ops.mkdir(path, recursive, mode))

    def rmdir(self, path: str) -> None:
        self._do(_ops.rmdir(path))

    def unlink(self, path: str) -> None:
        self._do(_ops.unlink(path))

    def delete_file(self, path: str) -> None:
        """unlink (agentfs-sdk's name)."""
        self._do(_ops.unlink(path))

    def rm(self, path: str, force: bool = False, recursive: bool = False) -> None:
        """Removes a file, or a directory tree with recursive=True; force=True
        ignores a missing path."""
        self._do(_ops.rm(path, force, recursive))

    def rename(self, old_path: str, new_path: str, *, noreplace: bool = False, exchange: bool = False) -> None:
        self._do(_ops.rename(old_path, new_path, noreplace, exchange))

    def copy_file(self, src: str, dest: str) -> None:
        self._do(_ops.copy_file(src, dest))

    def symlink(self, target: str, path: str) -> None:
        """Creates the symlink `path` pointing at `target`."""
        self._do(_ops.symlink(target, path))

    def readlink(self, path: str) -> str:
        return self._do(_ops.readlink(path))

    def link(self, existing: str, new_path: str) -> None:
        """Creates a hard link."""
        self._do(_ops.link(existing, new_path))

    def access(self, path: str, mode: int = os.F_OK) -> None:
        """Raises unless path exists (and, with mode R_OK/W_OK/X_OK, allows it)."""
        self._do(_ops.access(path, mode))

    def exists(self, path: str) -> bool:
        try:
            self._do(_ops.access(path, os.F_OK))
        except (FileNotFoundError, NotADirectoryError):
            return False
        return True

    def chmod(self, path: str, mode: int) -> None:
        self._do(_ops.chmod(path, mode))

    def chown(self, path: str, uid: int, gid: int, *, follow_symlinks: bool = True) -> None:
        """uid or gid -1 leaves it unchanged."""
        self._do(_ops.chown(path, uid, gid, follow_symlinks))

    def utimes(
        self, path: str, atime_ns: int | None = None, mtime_ns: int | None = None, *, follow_symlinks: bool = True
    ) -> None:
        """Sets access and modification times (nanoseconds); None leaves one unchanged."""
        self._do(_ops.utimes(path, atime_ns, mtime_ns, follow_symlinks))

    def truncate(self, path: str, size: int) -> None:
        self._do(_ops.truncate(path, size))

    def mknod(self, path: str, mode: int, rdev: int = 0) -> None:
        self._do(_ops.mknod(path, mode, rdev))

    def statfs(self) -> StatFs:
        return self._do(_ops.statfs())

    def getxattr(self, path: str, name: str, *, follow_symlinks: bool = True) -> bytes:
        return self._do(_ops.getxattr(path, name, follow_symlinks))

    def setxattr(self, path: str, name: str, value: bytes, flags: int = 0, *, follow_symlinks: bool = True) -> None:
        self._do(_ops.setxattr(path, name, value, flags, follow_symlinks))

    def listxattr(self, path: str, *, follow_symlinks: bool = True) -> list[str]:
        return self._do(_ops.listxattr(path, follow_symlinks))

    def removexattr(self, path: str, name: str, *, follow_symlinks: bool = True) -> None:
        self._do(_ops.removexattr(path, name, follow_symlinks))

    def open(self, path: str, flags: str | int = "r", mode: int = 0o644) -> File:
        """Opens a handle for positional I/O. flags is a mode string ("r",
        "r+", "w", "a", "x", with optional "b") or os.O_* flags."""
        fl = _ops.open_flags(flags)
        handle, st = self._do(_ops.open_file(path, fl, mode))
        return File(self, handle, path, fl, st)


class File:
    """An open file of the agent's filesystem: pread/pwrite/truncate/fsync/
    fstat, plus read/write/seek at a position of its own. Close it (or use
    `with`); handles stay valid after the file is unlinked."""

    def __init__(self, fs: Filesystem, handle: int, path: str, flags: int, stats: Stats | None = None) -> None:
        self._fs = fs
        self.handle = handle
        self.name = path
        self.flags = flags
        self._pos = 0
        self.closed = False

    def pread(self, size: int, offset: int) -> bytes:
        """Up to size bytes at offset (fewer at end of file)."""
        return self._fs._do(_ops.pread(self.handle, size, offset))

    def pwrite(self, data: bytes | bytearray | memoryview, offset: int) -> int:
        return self._fs._do(_ops.pwrite(self.handle, data, offset))

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        self._fs._do(_ops.ftruncate(self.handle, size))
        return size

    def fsync(self) -> None:
        self._fs._do(_ops.fsync(self.handle))

    def fstat(self) -> Stats:
        return self._fs._do(_ops.fstat(self.handle))

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = max(self.fstat().size - self._pos, 0)
        data = self.pread(size, self._pos)
        self._pos += len(data)
        return data

    def write(self, data: bytes | bytearray | memoryview) -> int:
        if self.flags & os.O_APPEND:
            self._pos = self.fstat().size
        n = self.pwrite(data, self._pos)
        self._pos += n
        return n

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = self.fstat().size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise OSError(22, os.strerror(22), self.name)
        self._pos = pos
        return pos

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._fs._do(_ops.close(self.handle))

    def __enter__(self) -> File:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KvStore(_Part):
    """Key-value store; values are anything json.dumps accepts."""

    __slots__ = ()

    def set(self, key: str, value: Any) -> None:
        self._do(_ops.kv_set(key, value))

    def get(self, key: str, default: Any = None) -> Any:
        """The value of key, or default when it is missing."""
        return self._do(_ops.kv_get(key, default))

    def list(self, prefix: str = "", limit: int = 0) -> list[dict[str, Any]]:
        """[{"key": ..., "value": ...}] of the keys starting with prefix, in key order."""
        return self._do(_ops.kv_list(prefix, limit))

    def delete(self, key: str) -> bool:
        """Deletes key; False when it did not exist."""
        return self._do(_ops.kv_delete(key))


class ToolCalls(_Part):
    """The append-only log of the agent's tool calls."""

    __slots__ = ()

    def start(self, name: str, parameters: Any = None) -> int:
        """Records a pending call; returns its id."""
        return self._do(_ops.tool_start(name, parameters))

    def success(self, call_id: int, result: Any = None) -> None:
        self._do(_ops.tool_success(call_id, result))

    def error(self, call_id: int, error: str) -> None:
        self._do(_ops.tool_error(call_id, error))

    def record(
        self,
        name: str,
        started_at: int,
        completed_at: int,
        parameters: Any = None,
        result: Any = None,
        error: str | None = None,
    ) -> int:
        """Records a finished call (Unix seconds); returns its id."""
        return self._do(_ops.tool_record(name, started_at, completed_at, parameters, result, error))

    def get(self, call_id: int) -> ToolCall | None:
        return self._do(_ops.tool_get(call_id))

    def get_by_name(self, name: str, limit: int | None = None) -> list[ToolCall]:
        """Calls of the tool, newest first."""
        return self._do(_ops.tool_list(name=name, limit=limit))

    def get_recent(self, since: int, limit: int | None = None) -> list[ToolCall]:
        """Calls started after `since` (Unix seconds), newest first."""
        return self._do(_ops.tool_list(since=since + 1, limit=limit))

    def get_stats(self) -> list[ToolCallStats]:
        return self._do(_ops.tool_stats())


class AgentFS:
    """An agent: its filesystem (`fs`), key-value store (`kv`) and tool-call
    log (`tools`), served by the agentfs engine.

    >>> with AgentFS.open(id="my-agent") as agent:
    ...     agent.fs.write_file("/notes.txt", "hello")
    """

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
        """The generated clients (agentfs.v1.rpc) for everything the API has."""
        self.fs = Filesystem(c)
        self.kv = KvStore(c)
        self.tools = ToolCalls(c)
        self._agent = _Part(c)

    @classmethod
    def open(
        cls,
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
    ) -> AgentFS:
        """Opens an agent.

        - id="x": the database .agentfs/x.db under the working directory
          (cwd=, default the current one); path=...: that database file;
          neither: a temporary database deleted when the agent closes.
        - url="http://host:port" (or $AGENTFS_URL): the agent `id` on an
          `agentfs serve http` server, with token= (or $AGENTFS_TOKEN).
        - engine=: the agentfs binary (else $AGENTFS_BIN, the bundled one, PATH).
        - create=False fails when the database does not exist.
        - heartbeat_ms=N: the engine also exits when it hears nothing for 3N
          ms (the SDK pings while idle), for when its stdin may outlive us.
        - encryption_key= (hex text or bytes) and cipher= (aes128gcm,
          aes256gcm, aegis128l, aegis128x2, aegis128x4, aegis256,
          aegis256x2, aegis256x4; default: the file's, aegis256 for a new
          one): encryption at rest; the key goes to the engine in the
          handshake only.
        - sync_remote_url=: the agent's sync remote (docs/SYNC.md); a
          missing database is bootstrapped from it. sync_token= (default
          the engine's $TURSO_DB_AUTH_TOKEN). Then pull(), push(), sync()
          and stats().
        - sync_partial_bootstrap_length=N (bytes) or
          sync_partial_bootstrap_query="SQL": a database bootstrapped from
          sync_remote_url receives only the first N bytes of the remote, or
          the pages the server reads to run the query; the pages it lacks
          are fetched when read (partial sync, docs/SYNC.md; as `agentfs
          init --sync-partial-*`). sync_partial_segment_size= (bytes of
          each fetch, default 131072) and sync_partial_prefetch=True (also
          fetch the pages a fetched b-tree page points to) tune it. Used
          only when the database is bootstrapped.
        """
        conn = connect(
            options,
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
        return cls(conn.transport, conn.info, conn.mount_env)

    def info(self) -> Info:
        return self._agent._do(_ops.info())

    def pull(self) -> SyncPullResult:
        """Brings the sync remote's changes here; rows both sides changed
        keep this side's version (docs/SYNC.md). FailedPreconditionError
        when the agent has no sync remote."""
        return self._agent._do(_ops.sync_pull())

    def push(self) -> SyncPushResult:
        """Sends the agent's changes to the sync remote (after merging the
        remote's)."""
        return self._agent._do(_ops.sync_push())

    def sync(self) -> tuple[SyncPullResult, SyncPushResult]:
        """Pulls, then pushes."""
        return self._agent._do(_ops.sync())

    def stats(self) -> SyncStats:
        """The sync state (as `agentfs sync ID stats` prints it)."""
        return self._agent._do(_ops.sync_stats())

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Runs one read-only SQL statement on the database."""
        return self._agent._do(_ops.query(sql, params))

    def exec(
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
        self._bindings.register(bindings)
        try:
            return self._agent._do(_ops.exec_script(script, dir, stdin, env, limits, specs, allow, deny, no_audit, pol=policy_fields(readable, writable, default_deny, net, limit_values)))
        finally:
            self._bindings.unregister(bindings)

    def spawn(
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
    ) -> Process:
        """Starts a script as a process and returns its handle: iterate it
        for output as it comes, write() stdin (keep_stdin_open=True),
        kill(signal), wait() for the exit code. Same options as exec, plus
        timeout_ms (SIGKILL after). The output streams, and the process
        ends with its stream (close() the handle, or the agent); over HTTP
        detach=True long-polls instead, and the process outlives this
        client. lease_ms is the lease of a long-polled process that is not
        detached, which spawn no longer makes (a stream needs none)."""
        specs = self._bindings.specs(bindings)
        self._bindings.register(bindings)
        start = start_request(
            script, dir=dir, stdin=stdin, env=env, limits=limits, specs=specs, allow=allow, deny=deny,
            no_audit=no_audit, shell_id=_shell_id, keep_stdin_open=keep_stdin_open, timeout_ms=timeout_ms,
            detach=detach, lease_ms=lease_ms, pol=policy_fields(readable, writable, default_deny, net, limit_values),
        )

        def release() -> None:
            self._bindings.unregister(bindings)

        try:
            if can_stream(self.transport, detach):
                return stream_spawn(self.transport, self.rpc.process, start, release)
            r = self.rpc.process.start_process(start)
        except BaseException:
            release()
            raise
        return Process(self.rpc.process, r.pid, release)

    def shell(
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
    ) -> Shell:
        """Opens a persistent shell: working directory, variables and
        functions survive between its run() calls, as in `agentfs sh`."""
        specs = self._bindings.specs(bindings)
        self._bindings.register(bindings)
        try:
            r = self.rpc.process.open_shell(shell_request(
                dir=dir, env=env, limits=limits, specs=specs, allow=allow, deny=deny, no_audit=no_audit,
                pol=policy_fields(readable, writable, default_deny, net, limit_values),
            ))
        except BaseException:
            self._bindings.unregister(bindings)
            raise
        return Shell(self, r.shell_id, lambda: self._bindings.unregister(bindings))

    def policy(
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
        return self._agent._do(_ops.policy(req))

    def processes(self) -> list[ProcessInfo]:
        """The processes running (or ended with their exit not read)."""
        return infos(self.rpc.process.list_processes(process_pb2.ListProcessesRequest()))

    def open_session(self, **kw: Any) -> Session:
        """Opens (resumes or creates) an agent session: a conversation with
        a model whose tool calls run on this agent inside the engine. Keyword
        arguments: id, provider ("openai" or "anthropic"), model, base_url,
        api_key (empty ones come from the stored session, then the
        engine's environment), system, tools, read_only, limits, allow,
        deny, readable, writable, max_turns, max_tokens,
        max_response_bytes, timeout_ms. See docs/SESSIONS.md."""
        r = self.rpc.session.open_session(open_request(**kw))
        return Session(self.rpc.session, info_of(r.session))

    def sessions(self) -> list[SessionInfo]:
        """The sessions stored in this agent."""
        return [info_of(i) for i in self.rpc.session.list_sessions(session_pb2.ListSessionsRequest()).sessions]

    def delete_session(self, id: str) -> bool:
        """Removes a stored session; True when there was one."""
        return bool(self.rpc.session.delete_session(session_pb2.DeleteSessionRequest(session_id=id)).deleted)

    def kill(self, pid: int, signal: int = 9) -> None:
        """Kills a process of processes() by pid (default SIGKILL)."""
        self.rpc.process.kill_process(process_pb2.KillProcessRequest(pid=pid, signal=signal))

    def mount_sandbox(self, dir: str | os.PathLike[str] | None = None, *, engine: str | os.PathLike[str] | None = None) -> SandboxMount:
        """Mounts the agent's filesystem on a host directory with FUSE so
        that real programs (git, a compiler, tar) run over it: the escape
        hatch from the in-process sandbox (agentOS's mountSandbox). `dir`
        must exist and be empty; by default a new temporary directory,
        removed by unmount(). The mount is served by the engine's CLI
        (`agentfs mount`, engine= or this agent's engine) on the same
        database file; after unmount() (or close()) everything the programs
        wrote is in the agent. While it is mounted, write through the
        mount: the kernel caches what it read for a few seconds, so changes
        made meanwhile through agent.fs may show in the mount late. Needs a
        local agent (not HTTP) and Linux with /dev/fuse; an encryption key
        reaches the mount's server through its environment only."""
        if not isinstance(self.transport, StdioTransport):
            raise UnimplementedError(HTTP_REFUSAL)
        exe = find_engine(engine) if engine is not None else self.transport.engine
        return self._mounts.mount(exe, self._info.path, dir)

    def close(self) -> None:
        """Unmounts the agent's mounts (mount_sandbox), finishes the calls
        in flight and stops the engine (stdio) or closes the connections
        (http)."""
        # Mounts end before the engine: everything they wrote is in the
        # database when close() returns.
        err = self._mounts.unmount_all()
        self.transport.close()
        if err is not None:
            raise err

    def __enter__(self) -> AgentFS:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        self.close()
