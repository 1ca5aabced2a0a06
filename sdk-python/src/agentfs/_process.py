"""Processes and persistent shells of the engine (ProcessService), for the
synchronous API (Process, Shell) and the asyncio one (AsyncProcess,
AsyncShell). The process table is the engine's; these classes only call
it. Over stdio a process ends with the connection; over HTTP with its
lease (no read or write for lease_ms) unless it is detached."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .v1 import process_pb2, sandbox_pb2

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
) -> process_pb2.StartProcessRequest:
    ex = sandbox_pb2.ExecRequest(
        script=script, dir=dir, stdin=stdin, env=env or {}, limits=limits, bindings=specs or [],
        allow=allow or [], deny=deny or [], no_audit=no_audit,
    )
    return process_pb2.StartProcessRequest(
        exec=ex, shell_id=shell_id, keep_stdin_open=keep_stdin_open, timeout_ms=timeout_ms, detach=detach, lease_ms=lease_ms
    )


def shell_request(
    *, dir: str = "", env: dict[str, str] | None = None, limits: str = "",
    specs: list[sandbox_pb2.BindingSpec] | None = None, allow: list[str] | None = None,
    deny: list[str] | None = None, no_audit: bool = False,
) -> process_pb2.OpenShellRequest:
    return process_pb2.OpenShellRequest(exec=sandbox_pb2.ExecRequest(
        dir=dir, env=env or {}, limits=limits, bindings=specs or [], allow=allow or [], deny=deny or [], no_audit=no_audit,
    ))


def infos(r: process_pb2.ListProcessesResponse) -> list[ProcessInfo]:
    return [ProcessInfo(p.pid, p.script, p.shell_id, p.running, p.exit_code, p.started_unix_ms) for p in r.processes]


class _State:
    """What a read answered: the chunks, and the end once it came."""

    def __init__(self) -> None:
        self.result: ProcessResult | None = None

    def take(self, r: process_pb2.ReadProcessResponse) -> list[OutputChunk]:
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

    def __init__(self, client: Any, pid: int, release: Any) -> None:
        self._c, self.pid, self._release = client, pid, release
        self._st = _State()

    @property
    def returncode(self) -> int | None:
        """The exit code once the end was read, else None."""
        return None if self._st.result is None else self._st.result.exit_code

    def read(self) -> tuple[list[OutputChunk], bool]:
        """The next output (waits up to 30 s); True once the process ended and all was read."""
        if self._st.result is not None:
            return [], True
        chunks = self._st.take(self._c.read_process(process_pb2.ReadProcessRequest(pid=self.pid, wait_ms=_WAIT_MS)))
        if self._st.result is not None:
            self._release()
        return chunks, self._st.result is not None

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
            self._c.kill_process(process_pb2.KillProcessRequest(pid=self.pid, signal=signal))

    def wait(self) -> ProcessResult:
        """Waits for the end; stdout/stderr hold the output not read before."""
        return self._st.finish(list(self))


class AsyncProcess:
    """Process for agentfs.aio: `async for chunk in proc`, `await proc.wait()`."""

    def __init__(self, client: Any, pid: int, release: Any) -> None:
        self._c, self.pid, self._release = client, pid, release
        self._st = _State()
        self._lock = asyncio.Lock()

    @property
    def returncode(self) -> int | None:
        return None if self._st.result is None else self._st.result.exit_code

    async def read(self) -> tuple[list[OutputChunk], bool]:
        async with self._lock:  # one read at a time keeps the order
            if self._st.result is not None:
                return [], True
            r = await self._c.read_process(process_pb2.ReadProcessRequest(pid=self.pid, wait_ms=_WAIT_MS))
            chunks = self._st.take(r)
            if self._st.result is not None:
                self._release()
            return chunks, self._st.result is not None

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
            await self._c.kill_process(process_pb2.KillProcessRequest(pid=self.pid, signal=signal))

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
