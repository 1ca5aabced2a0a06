"""The stdio transport: `agentfs serve --stdio` as a child process.

Frames are a 4-byte big-endian length and one agentfs.v1.Frame
(spec/PROTOCOL.md). One reader thread reads every frame and hands each
answer to the call waiting for its id, so any number of threads (and
asyncio tasks) can have calls in flight at once. When the engine exits,
the reader fails every waiting call with EngineUnavailableError quoting the
exit status and the engine's last lines of standard error: nothing waits
forever.
"""

from __future__ import annotations

import asyncio
import collections
import io
import itertools
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, cast

from google.protobuf.message import Message

from ._engine import find_engine
from ._errors import AgentFSError, EngineUnavailableError, from_proto
from ._transport import M
from .v1 import errors_pb2, protocol_pb2

PROTOCOL_VERSION = 1
MAX_FRAME = 1 << 30
_HANDSHAKE_ID = 1


class _Pending:
    """One call waiting for its answer. `done` is a lock held until the
    answer (or the failure) is in; an asyncio caller sets `notify` instead."""

    __slots__ = ("done", "frame", "error", "notify", "on_message")

    def __init__(self, notify: Callable[[], None] | None = None) -> None:
        self.done = threading.Lock()
        self.done.acquire()
        self.frame: protocol_pb2.Frame | None = None
        self.error: BaseException | None = None
        self.notify = notify
        # A server stream's receiver of its Frame.message payloads.
        self.on_message: Callable[[bytes], None] | None = None

    def resolve(self) -> None:
        self.done.release()
        if self.notify is not None:
            self.notify()


class StdioTransport:
    """Runs the engine and talks to it over its standard input and output.

    `open` says what the engine opens (agentfs.v1.OpenOptions); `cwd` is the
    engine's working directory (ids resolve to .agentfs/ID.db under it)."""

    def __init__(
        self,
        open: protocol_pb2.OpenOptions,
        *,
        engine: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        client: str = "agentfs-sdk-python",
        heartbeat_ms: int = 0,
        handshake_timeout: float = 60.0,
    ) -> None:
        exe = find_engine(engine)
        self._proc = subprocess.Popen(
            [exe, "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            cwd=cwd,
            env=env,
        )
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self._in = io.BufferedWriter(cast(io.RawIOBase, self._proc.stdin), 1 << 16)
        self._out = io.BufferedReader(cast(io.RawIOBase, self._proc.stdout), 1 << 16)
        self._wlock = threading.Lock()
        self._plock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._served: dict[str, Callable[[bytes], bytes]] = {}
        self._ids = itertools.count(_HANDSHAKE_ID + 1)
        self._dead: str | None = None  # why calls fail from now on
        self._closing = False
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._last_write = time.monotonic()
        # An agent never closed (the program ends first): close the engine's
        # stdin so it shuts down cleanly (checkpoint, temporary database
        # removed) rather than being left to notice the pipe later.
        self._finalizer = weakref.finalize(self, _stop, self._proc)

        self._errt = threading.Thread(target=self._read_stderr, name="agentfs-stderr", daemon=True)
        self._errt.start()
        hello = _Pending()
        self._pending[_HANDSHAKE_ID] = hello
        self._reader = threading.Thread(target=self._read_loop, name="agentfs-reader", daemon=True)
        self._reader.start()

        self._write(
            protocol_pb2.Frame(
                id=_HANDSHAKE_ID,
                hello=protocol_pb2.Hello(
                    protocol_version=PROTOCOL_VERSION,
                    client=client,
                    open=open,
                    heartbeat_ms=heartbeat_ms,
                ),
            ),
            _HANDSHAKE_ID,
        )
        if not hello.done.acquire(timeout=handshake_timeout):
            self._kill()
            raise EngineUnavailableError(f"agentfs engine {exe} did not answer the handshake in {handshake_timeout:g} s")
        if hello.error is not None:
            raise hello.error
        assert hello.frame is not None
        if hello.frame.HasField("result"):
            self._kill()
            raise from_proto(hello.frame.result.error)
        self.welcome: protocol_pb2.Welcome = hello.frame.welcome
        self.engine = exe
        if heartbeat_ms > 0:
            threading.Thread(
                target=self._heartbeat, args=(heartbeat_ms / 1000,), name="agentfs-heartbeat", daemon=True
            ).start()

    def _heartbeat(self, interval: float) -> None:
        # The engine exits after three silent intervals: ping when we have
        # sent nothing for one. Its Pong has no waiter and is dropped.
        ids = itertools.count(1 << 62)
        while self._dead is None and not self._closing:
            idle = time.monotonic() - self._last_write
            if idle >= interval:
                self._write_quiet(protocol_pb2.Frame(id=next(ids), ping=protocol_pb2.Ping()))
                idle = 0
            time.sleep(max(interval - idle, interval / 10))

    # --- calls ---------------------------------------------------------

    def unary(self, procedure: str, request: Message, response_type: type[M]) -> M:
        pending = _Pending()
        id = self._send(procedure, request, pending)
        try:
            pending.done.acquire()
        except BaseException:  # KeyboardInterrupt: tell the engine to stop the work
            self._cancel(id)
            raise
        return _decode(pending, response_type)

    async def unary_async(self, procedure: str, request: Message, response_type: type[M]) -> M:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def notify() -> None:
            loop.call_soon_threadsafe(_set_done, fut)

        pending = _Pending(notify)
        id = self._send(procedure, request, pending)
        try:
            await fut
        except asyncio.CancelledError:
            self._cancel(id)
            raise
        return _decode(pending, response_type)

    def stream(
        self,
        procedure: str,
        request: Message,
        on_message: Callable[[bytes], None],
        on_end: Callable[[BaseException | None], None],
    ) -> Callable[[], None]:
        """Sends a server-streaming call (spec/PROTOCOL.md, Server streams):
        on_message gets each message's payload as its frame arrives, then
        on_end the stream's error or None; both run on the reader thread.
        Returns a function that cancels the call (the engine then ends
        the stream; for StreamProcess it kills the process)."""
        pending = _Pending()
        pending.on_message = on_message

        def notify() -> None:
            err = pending.error
            if err is None and pending.frame is not None and pending.frame.result.HasField("error"):
                err = from_proto(pending.frame.result.error)
            on_end(err)

        pending.notify = notify
        id = self._send(procedure, request, pending)
        return lambda: self._cancel_stream(id)

    def _cancel_stream(self, id: int) -> None:
        # Unlike _cancel, the stream stays registered: its Result frame
        # (with CANCELED) still ends it through on_end.
        try:
            self._write(protocol_pb2.Frame(id=id, cancel=protocol_pb2.Cancel()), None)
        except AgentFSError:
            pass

    def ping(self) -> None:
        """One Ping/Pong round trip: the transport alone, no method runs."""
        pending = _Pending()
        with self._plock:
            if self._dead is not None:
                raise EngineUnavailableError(self._dead)
            id = next(self._ids)
            self._pending[id] = pending
        self._write(protocol_pb2.Frame(id=id, ping=protocol_pb2.Ping()), id)
        pending.done.acquire()
        if pending.error is not None:
            raise pending.error

    def _send(self, procedure: str, request: Message, pending: _Pending) -> int:
        with self._plock:
            if self._dead is not None:
                raise EngineUnavailableError(self._dead)
            id = next(self._ids)
            self._pending[id] = pending
        frame = protocol_pb2.Frame(id=id, call=protocol_pb2.Call(method=procedure, payload=request.SerializeToString()))
        self._write(frame, id)
        return id

    def _cancel(self, id: int) -> None:
        with self._plock:
            if self._pending.pop(id, None) is None:
                return
        try:
            self._write(protocol_pb2.Frame(id=id, cancel=protocol_pb2.Cancel()), None)
        except AgentFSError:
            pass

    def _write(self, frame: protocol_pb2.Frame, id: int | None) -> None:
        body = frame.SerializeToString()
        try:
            with self._wlock:
                self._in.write(len(body).to_bytes(4, "big"))
                self._in.write(body)
                self._in.flush()
                self._last_write = time.monotonic()
        except (OSError, ValueError) as e:
            # The engine is gone (broken pipe) or we closed the pipe; the
            # reader explains why once it sees the end of stdout.
            self._reader.join(timeout=5)
            if id is not None:
                with self._plock:
                    self._pending.pop(id, None)
            raise EngineUnavailableError(self._dead or f"agentfs engine: write failed: {e}") from None

    # --- the reader ----------------------------------------------------

    def _read_loop(self) -> None:
        reason = "the engine closed its output"
        try:
            while True:
                head = self._out.read(4)
                if len(head) < 4:
                    break
                n = int.from_bytes(head, "big")
                if n > MAX_FRAME:
                    reason = f"protocol error: frame of {n} bytes"
                    break
                body = self._out.read(n)
                if len(body) < n:
                    break
                frame = protocol_pb2.Frame.FromString(body)
                kind = frame.WhichOneof("body")
                if kind == "result" or kind == "welcome" or kind == "pong":
                    with self._plock:
                        p = self._pending.pop(frame.id, None)
                    if p is not None:
                        p.frame = frame
                        p.resolve()
                elif kind == "message":
                    with self._plock:
                        p = self._pending.get(frame.id)
                    if p is not None and p.on_message is not None:
                        p.on_message(frame.message.payload)
                elif kind == "call":
                    self._answer_call(frame)
                elif kind == "ping":
                    self._write_quiet(protocol_pb2.Frame(id=frame.id, pong=protocol_pb2.Pong()))
        except Exception as e:  # a frame that does not decode
            reason = f"protocol error: {e}"
        finally:
            self._die(reason)

    def serve(self, procedure: str, handler: Callable[[bytes], bytes] | None) -> None:
        """Answers the engine's calls of procedure with handler (None stops
        serving it); sandbox bindings serve HostService/CallBinding."""
        if handler is None:
            self._served.pop(procedure, None)
        else:
            self._served[procedure] = handler

    def _answer_call(self, frame: protocol_pb2.Frame) -> None:
        handler = self._served.get(frame.call.method)
        if handler is None:
            err = errors_pb2.Error(
                kind=errors_pb2.ERROR_KIND_UNIMPLEMENTED,
                message=f"agentfs-sdk-python does not serve {frame.call.method}",
            )
            self._write_quiet(protocol_pb2.Frame(id=frame.id, result=protocol_pb2.Result(error=err)))
            return

        # Not on the reader thread: a handler may call the engine itself.
        def run() -> None:
            try:
                result = protocol_pb2.Result(payload=handler(frame.call.payload))
            except Exception as e:
                result = protocol_pb2.Result(
                    error=errors_pb2.Error(kind=errors_pb2.ERROR_KIND_INTERNAL, message=f"{frame.call.method}: {e}")
                )
            self._write_quiet(protocol_pb2.Frame(id=frame.id, result=result))

        threading.Thread(target=run, name="agentfs-host-call", daemon=True).start()

    def _write_quiet(self, frame: protocol_pb2.Frame) -> None:
        body = frame.SerializeToString()
        try:
            with self._wlock:
                self._in.write(len(body).to_bytes(4, "big") + body)
                self._in.flush()
                self._last_write = time.monotonic()
        except (OSError, ValueError):
            pass

    def _die(self, reason: str) -> None:
        try:
            status = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        self._errt.join(timeout=1)
        if self._closing:
            msg = "agentfs transport is closed"
        else:
            msg = f"agentfs engine exited ({_status(status)}): {reason}"
            tail = "\n".join(self._stderr)
            if tail:
                msg += "; its last output:\n" + tail
        with self._plock:
            self._dead = msg
            pending, self._pending = self._pending, {}
        for p in pending.values():
            p.error = EngineUnavailableError(msg)
            p.resolve()

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for line in iter(self._proc.stderr.readline, b""):
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    # --- lifecycle -----------------------------------------------------

    @property
    def pid(self) -> int:
        return self._proc.pid

    def close(self, timeout: float = 30.0) -> None:
        """Asks the engine to finish the calls in flight, close the database
        and exit; kills it if it does not within `timeout` seconds."""
        if self._closing:
            return
        self._closing = True
        with self._plock:
            dead = self._dead is not None
            id = next(self._ids)
            p = _Pending()
            if not dead:
                self._pending[id] = p
        if not dead:
            try:
                self._write(protocol_pb2.Frame(id=id, shutdown=protocol_pb2.Shutdown()), id)
                p.done.acquire(timeout=timeout)
            except AgentFSError:
                pass
        try:
            with self._wlock:
                self._in.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=timeout)
        self._finalizer.detach()

    def _kill(self) -> None:
        self._closing = True
        _kill(self._proc)
        self._reader.join(timeout=5)
        self._finalizer.detach()


def _decode(pending: _Pending, response_type: type[M]) -> M:
    if pending.error is not None:
        raise pending.error
    assert pending.frame is not None
    result = pending.frame.result
    if result.HasField("error"):
        raise from_proto(result.error)
    return response_type.FromString(result.payload)


def _set_done(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_result(None)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
    _kill(proc)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _status(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {-code}"
    return f"status {code}"
