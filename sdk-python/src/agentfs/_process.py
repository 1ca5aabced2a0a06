"""Processes and persistent shells of the engine (ProcessService), for the
synchronous API (Process, Shell) and the asyncio one (AsyncProcess,
AsyncShell). The process table is the engine's; these classes only call
it. A spawned process streams its output (StreamProcess) and ends with
its stream: when its handle or the agent is closed, or the connection
goes. A detached one (HTTP) is read by long-poll (ReadProcess), has no
lease, and outlives its handle and this client."""

from __future__ import annotations

import asyncio
import queue
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Union

from ._errors import EngineUnavailableError, NotFoundError
from .v1 import process_pb2, sandbox_pb2

_STREAM_PROCESS = "/agentfs.v1.ProcessService/StreamProcess"

# What a process's stream hands over: a message, the stream's error, or
# _END (the stream ended well; the exit came in the last message).
_END = object()
_Item = Union[process_pb2.StreamProcessResponse, BaseException, object]


def can_stream(transport: Any, detach: bool) -> bool:
    """Whether spawn streams the output (StreamProcess): over stdio
    (stream) and HTTP (open_stream). A detached process must outlive this
    client, which a streamed one does not: it long-polls ReadProcess."""
    return not detach and (callable(getattr(transport, "stream", None)) or callable(getattr(transport, "open_stream", None)))


def _item(x: _Item) -> tuple[process_pb2.StreamProcessResponse | None, BaseException | None]:
    if isinstance(x, process_pb2.StreamProcessResponse):
        return x, None
    if isinstance(x, BaseException):
        return None, x
    return None, EngineUnavailableError("agentfs: the process stream ended without the exit status")


def _pull(st: Any) -> _Item:
    """The next item of an HTTP stream, read from its connection now."""
    try:
        b = st.next()
    except Exception as e:  # the stream's error, handed to read()
        return e
    if b is None:
        return _END
    m = process_pb2.StreamProcessResponse.FromString(b)
    if m.exited:
        # The last message: the end envelope follows at once; reading it
        # frees the connection for the next stream.
        st.finish()
    return m


def stream_spawn(transport: Any, client: Any, start: process_pb2.StartProcessRequest, release: Callable[[], None]) -> Process:
    """Starts a process with StreamProcess: its output comes as the script
    writes it, with no read calls; returns once the pid came."""
    req = process_pb2.StreamProcessRequest(start=start)
    feed: Callable[[], _Item]
    if not callable(getattr(transport, "stream", None)):
        # HTTP: the messages are read from the connection as read() asks
        # for them, so none pile up here.
        st = transport.open_stream(_STREAM_PROCESS, req)
        feed, close = (lambda: _pull(st)), st.close
    else:
        q: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        close = transport.stream(
            _STREAM_PROCESS, req,
            lambda b: q.put(process_pb2.StreamProcessResponse.FromString(b)),
            lambda err: q.put(_END if err is None else err),
        )
        feed = q.get
    first, err = _item(feed())
    if first is None:
        assert err is not None
        close()
        raise err
    return Process(client, first.pid, release, feed=feed, close=close)


async def stream_spawn_async(
    transport: Any, client: Any, start: process_pb2.StartProcessRequest, release: Callable[[], None]
) -> AsyncProcess:
    """stream_spawn for agentfs.aio: the transport's reader thread hands
    the messages to this event loop (stdio), or a worker thread reads the
    next one from the connection when read() asks (HTTP)."""
    req = process_pb2.StreamProcessRequest(start=start)
    feed: Callable[[], Awaitable[_Item]]
    if not callable(getattr(transport, "stream", None)):
        st = await asyncio.to_thread(transport.open_stream, _STREAM_PROCESS, req)
        feed, close = (lambda: asyncio.to_thread(_pull, st)), st.close
    else:
        loop = asyncio.get_running_loop()
        q: asyncio.Queue[_Item] = asyncio.Queue()

        def put(x: _Item) -> None:
            try:
                loop.call_soon_threadsafe(q.put_nowait, x)
            except RuntimeError:  # the loop is closed: nobody reads any more
                pass

        close = transport.stream(
            _STREAM_PROCESS, req,
            lambda b: put(process_pb2.StreamProcessResponse.FromString(b)),
            lambda err: put(_END if err is None else err),
        )
        feed = q.get
    first, err = _item(await feed())
    if first is None:
        assert err is not None
        close()
        raise err
    return AsyncProcess(client, first.pid, release, feed=feed, close=close)

def _once(fn: Callable[[], None]) -> Callable[[], None]:
    """fn, run at most once (read's end and close may both release)."""
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            fn()

    return run


# ReadProcess waits this long for output before answering empty.
_WAIT_MS = 30000


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """A piece of a process's output, in the order the script wrote it."""

    stream: Literal["stdout", "stderr"]
    data: bytes


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """How a process ended, with the output not read before wait()."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    limit: str
    # The signal of kill() that stopped it (0: none).
    signal: int


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    pid: int
    script: str
    shell_id: int
    running: bool
    exit_code: int
    started_unix_ms: int


@dataclass(frozen=True, slots=True)
class NetRule:
    """Lets curl reach URLs under `prefix` (an http:// or https:// URL
    prefix): only `methods` when set; `headers` are added at the boundary,
    so secrets stay in this process. Loopback, private and link-local
    addresses stay refused unless `allow_private`."""

    prefix: str
    methods: tuple[str, ...] | list[str] = ()
    headers: dict[str, str] | None = None
    allow_private: bool = False


def policy_fields(
    readable: list[str] | None = None,
    writable: list[str] | None = None,
    default_deny: bool = False,
    net: list[NetRule] | None = None,
    limit_values: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The policy fields of an ExecRequest (one mapping for exec, spawn,
    shell and policy)."""
    return {
        "readable": readable or [],
        "writable": writable or [],
        "restrict_paths": readable is not None and writable is not None,
        "default_deny": default_deny,
        "net": [
            sandbox_pb2.NetRuleSpec(prefix=r.prefix, methods=list(r.methods), headers=r.headers or {}, allow_private=r.allow_private)
            for r in net or []
        ],
        "limit_values": sandbox_pb2.SandboxLimits(**limit_values) if limit_values else None,
    }


def start_request(
    script: str,
    *,
    dir: str = "",
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    limits: str = "",
    specs: list[sandbox_pb2.BindingSpec] | None = None,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    no_audit: bool = False,
    shell_id: int = 0,
    keep_stdin_open: bool = False,
    timeout_ms: int = 0,
    detach: bool = False,
    lease_ms: int = 0,
    pol: dict[str, Any] | None = None,
) -> process_pb2.StartProcessRequest:
    ex = sandbox_pb2.ExecRequest(
        script=script, dir=dir, stdin=stdin, env=env or {}, limits=limits, bindings=specs or [],
        allow=allow or [], deny=deny or [], no_audit=no_audit, **(pol or {}),
    )
    return process_pb2.StartProcessRequest(
        exec=ex, shell_id=shell_id, keep_stdin_open=keep_stdin_open, timeout_ms=timeout_ms, detach=detach, lease_ms=lease_ms
    )


def shell_request(
    *, dir: str = "", env: dict[str, str] | None = None, limits: str = "",
    specs: list[sandbox_pb2.BindingSpec] | None = None, allow: list[str] | None = None,
    deny: list[str] | None = None, no_audit: bool = False, pol: dict[str, Any] | None = None,
) -> process_pb2.OpenShellRequest:
    return process_pb2.OpenShellRequest(exec=sandbox_pb2.ExecRequest(
        dir=dir, env=env or {}, limits=limits, bindings=specs or [], allow=allow or [], deny=deny or [], no_audit=no_audit,
        **(pol or {}),
    ))


def infos(r: process_pb2.ListProcessesResponse) -> list[ProcessInfo]:
    return [ProcessInfo(p.pid, p.script, p.shell_id, p.running, p.exit_code, p.started_unix_ms) for p in r.processes]


class _State:
    """What a read answered: the chunks, and the end once it came."""

    def __init__(self) -> None:
        self.result: ProcessResult | None = None

    def take(self, r: process_pb2.ReadProcessResponse | process_pb2.StreamProcessResponse) -> list[OutputChunk]:
        chunks = [OutputChunk("stderr" if c.stream == 2 else "stdout", c.data) for c in r.chunks]
        if r.exited:
            self.result = ProcessResult(r.exit_code, b"", b"", r.limit, r.signal)
        return chunks

    def finish(self, chunks: list[OutputChunk]) -> ProcessResult:
        assert self.result is not None
        out = b"".join(c.data for c in chunks if c.stream == "stdout")
        err = b"".join(c.data for c in chunks if c.stream == "stderr")
        r = self.result
        return ProcessResult(r.exit_code, out, err, r.limit, r.signal)


class Process:
    """A script running in the engine (agent.spawn): iterate it for its
    output as it comes, write() its stdin, kill(), wait() for the end."""

    def __init__(
        self, client: Any, pid: int, release: Any, feed: Callable[[], _Item] | None = None,
        close: Callable[[], None] | None = None,
    ) -> None:
        self._c, self.pid, self._release = client, pid, _once(release)
        self._st = _State()
        # The process's stream; None: read() long-polls ReadProcess.
        self._feed = feed
        # Ends the stream (the engine then kills the process).
        self._close = close
        self._closed = False

    @property
    def returncode(self) -> int | None:
        """The exit code once the end was read, else None."""
        return None if self._st.result is None else self._st.result.exit_code

    def read(self) -> tuple[list[OutputChunk], bool]:
        """The next output (waits up to 30 s); True once the process ended and all was read."""
        if self._st.result is not None:
            return [], True
        if self._closed:
            raise EngineUnavailableError(f"agentfs: process {self.pid}: the handle is closed")
        if self._feed is not None:
            m, err = _item(self._feed())
            if m is None:
                assert err is not None
                if self._closed:
                    raise EngineUnavailableError(f"agentfs: process {self.pid}: the handle is closed") from None
                raise err
            chunks = self._st.take(m)
        else:
            chunks = self._st.take(self._c.read_process(process_pb2.ReadProcessRequest(pid=self.pid, wait_ms=_WAIT_MS)))
        if self._st.result is not None:
            self._release()
        return chunks, self._st.result is not None

    def close(self) -> None:
        """Stops reading. A streamed process (every one but a detached)
        that still runs is killed by the engine when its stream ends,
        which this does; a detached one keeps running."""
        if self._closed:
            return
        self._closed = True
        if self._st.result is None:
            if self._close is not None:
                self._close()
            self._release()

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[OutputChunk]:
        while True:
            chunks, done = self.read()
            yield from chunks
            if done:
                return

    def write(self, data: str | bytes) -> None:
        """Writes to stdin (spawn with keep_stdin_open=True)."""
        self._c.write_process(process_pb2.WriteProcessRequest(pid=self.pid, data=data.encode() if isinstance(data, str) else data))

    def close_stdin(self) -> None:
        self._c.write_process(process_pb2.WriteProcessRequest(pid=self.pid, close_stdin=True))

    def kill(self, signal: int = 9) -> None:
        """Sends a POSIX signal (default SIGKILL): exit code 128+signal."""
        if self._st.result is None:
            try:
                self._c.kill_process(process_pb2.KillProcessRequest(pid=self.pid, signal=signal))
            except NotFoundError:
                # A streamed process that ended was reaped by its stream:
                # the exit is on its way to read().
                if self._feed is None:
                    raise

    def wait(self) -> ProcessResult:
        """Waits for the end; stdout/stderr hold the output not read before."""
        return self._st.finish(list(self))


class AsyncProcess:
    """Process for agentfs.aio: `async for chunk in proc`, `await proc.wait()`."""

    def __init__(
        self, client: Any, pid: int, release: Any, feed: Callable[[], Awaitable[_Item]] | None = None,
        close: Callable[[], None] | None = None,
    ) -> None:
        self._c, self.pid, self._release = client, pid, _once(release)
        self._st = _State()
        self._lock = asyncio.Lock()
        self._feed = feed
        self._close = close
        self._closed = False

    @property
    def returncode(self) -> int | None:
        return None if self._st.result is None else self._st.result.exit_code

    async def read(self) -> tuple[list[OutputChunk], bool]:
        async with self._lock:  # one read at a time keeps the order
            if self._st.result is not None:
                return [], True
            if self._closed:
                raise EngineUnavailableError(f"agentfs: process {self.pid}: the handle is closed")
            if self._feed is not None:
                m, err = _item(await self._feed())
                if m is None:
                    assert err is not None
                    if self._closed:
                        raise EngineUnavailableError(f"agentfs: process {self.pid}: the handle is closed") from None
                    raise err
                chunks = self._st.take(m)
            else:
                r = await self._c.read_process(process_pb2.ReadProcessRequest(pid=self.pid, wait_ms=_WAIT_MS))
                chunks = self._st.take(r)
            if self._st.result is not None:
                self._release()
            return chunks, self._st.result is not None

    async def close(self) -> None:
        """See Process.close. Not under the read lock: it also ends a read
        that waits for output."""
        if self._closed:
            return
        self._closed = True
        if self._st.result is None:
            if self._close is not None:
                self._close()
            self._release()

    async def __aenter__(self) -> AsyncProcess:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def __aiter__(self) -> AsyncIterator[OutputChunk]:
        while True:
            chunks, done = await self.read()
            for c in chunks:
                yield c
            if done:
                return

    async def write(self, data: str | bytes) -> None:
        await self._c.write_process(process_pb2.WriteProcessRequest(pid=self.pid, data=data.encode() if isinstance(data, str) else data))

    async def close_stdin(self) -> None:
        await self._c.write_process(process_pb2.WriteProcessRequest(pid=self.pid, close_stdin=True))

    async def kill(self, signal: int = 9) -> None:
        if self._st.result is None:
            try:
                await self._c.kill_process(process_pb2.KillProcessRequest(pid=self.pid, signal=signal))
            except NotFoundError:
                if self._feed is None:  # see Process.kill
                    raise

    async def wait(self) -> ProcessResult:
        return self._st.finish([c async for c in self])


class Shell:
    """A persistent shell (agent.shell()): cwd, variables and functions
    survive between run() calls, as in `agentfs sh`."""

    def __init__(self, agent: Any, shell_id: int, release: Any) -> None:
        self._a, self.id, self._release = agent, shell_id, release

    def spawn(self, script: str, **kw: Any) -> Process:
        p: Process = self._a.spawn(script, _shell_id=self.id, **kw)
        return p

    def run(self, script: str, **kw: Any) -> ProcessResult:
        return self.spawn(script, **kw).wait()

    def close(self) -> None:
        """Kills the shell's scripts and forgets its state."""
        try:
            self._a.rpc.process.close_shell(process_pb2.CloseShellRequest(shell_id=self.id))
        finally:
            self._release()

    def __enter__(self) -> Shell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncShell:
    """Shell for agentfs.aio."""

    def __init__(self, agent: Any, shell_id: int, release: Any) -> None:
        self._a, self.id, self._release = agent, shell_id, release

    async def spawn(self, script: str, **kw: Any) -> AsyncProcess:
        p: AsyncProcess = await self._a.spawn(script, _shell_id=self.id, **kw)
        return p

    async def run(self, script: str, **kw: Any) -> ProcessResult:
        return await (await self.spawn(script, **kw)).wait()

    async def close(self) -> None:
        try:
            await self._a.rpc.process.close_shell(process_pb2.CloseShellRequest(shell_id=self.id))
        finally:
            self._release()

    async def __aenter__(self) -> AsyncShell:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
