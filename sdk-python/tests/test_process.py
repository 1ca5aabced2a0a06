"""Processes and persistent shells (ProcessService) over stdio and a real
`agentfs serve http`, sync and asyncio: the shared conformance cases of
spec/process/cases.json, then list/kill by pid and bindings."""

from __future__ import annotations

import asyncio
import errno
import json
import time
from pathlib import Path
from typing import Any

import pytest

import agentfs
from agentfs import aio

CASES = json.loads((Path(__file__).resolve().parents[2] / "spec" / "process" / "cases.json").read_text())["cases"]


def run_case(agent: agentfs.AgentFS, c: dict[str, Any]) -> tuple[int, str, str]:
    if "shell" in c:
        with agent.shell() as sh:
            for s in c["shell"]:
                r = sh.run(s)
        return r.exit_code, r.stdout.decode(), r.stderr.decode()
    p = agent.spawn(c["script"], keep_stdin_open="write" in c)
    assert p._feed is not None, "spawn did not stream"
    out, err = b"", b""
    while c.get("wait_for") and c["wait_for"].encode() not in out:
        chunks, done = p.read()
        assert not done, c["name"]
        for ch in chunks:
            if ch.stream == "stdout":
                out += ch.data
            else:
                err += ch.data
    if "write" in c:
        p.write(c["write"])
        p.close_stdin()
    if "kill" in c:
        p.kill(c["kill"] or 9)
    r = p.wait()
    return r.exit_code, (out + r.stdout).decode(), (err + r.stderr).decode()


async def run_case_async(agent: aio.AgentFS, c: dict[str, Any]) -> tuple[int, str, str]:
    if "shell" in c:
        async with await agent.shell() as sh:
            for s in c["shell"]:
                r = await sh.run(s)
        return r.exit_code, r.stdout.decode(), r.stderr.decode()
    p = await agent.spawn(c["script"], keep_stdin_open="write" in c)
    assert p._feed is not None, "spawn did not stream"
    out, err = b"", b""
    while c.get("wait_for") and c["wait_for"].encode() not in out:
        chunks, done = await p.read()
        assert not done, c["name"]
        for ch in chunks:
            if ch.stream == "stdout":
                out += ch.data
            else:
                err += ch.data
    if "write" in c:
        await p.write(c["write"])
        await p.close_stdin()
    if "kill" in c:
        await p.kill(c["kill"] or 9)
    r = await p.wait()
    return r.exit_code, (out + r.stdout).decode(), (err + r.stderr).decode()


def expected(c: dict[str, Any]) -> tuple[int, str, str]:
    e = c["expect"]
    return e["exit_code"], e["stdout"], e["stderr"]


def spy(transport: Any) -> list[str]:
    """Records the procedures the transport is asked for (unary calls and,
    over HTTP, streams), to show which way the output came."""
    calls: list[str] = []
    for name in ("unary", "open_stream"):
        orig = getattr(transport, name, None)
        if orig is None:
            continue

        def rec(procedure: str, *a: Any, _orig: Any = orig) -> Any:
            calls.append(procedure)
            return _orig(procedure, *a)

        setattr(transport, name, rec)
    return calls


def assert_streamed(transport: str, calls: list[str]) -> None:
    # Over HTTP every non-shell case went through StreamProcess and no
    # output was long-polled.
    assert "/agentfs.v1.ProcessService/ReadProcess" not in calls
    if transport == "http":
        want = sum(1 for c in CASES if "shell" not in c) + sum(len(c["shell"]) for c in CASES if "shell" in c)
        assert calls.count("/agentfs.v1.ProcessService/StreamProcess") == want


def test_conformance(agent: agentfs.AgentFS, transport: str) -> None:
    calls = spy(agent.transport)
    for c in CASES:
        assert run_case(agent, c) == expected(c), c["name"]
    assert_streamed(transport, calls)


async def test_conformance_async(open_kwargs: dict[str, object], transport: str) -> None:
    async with aio.AgentFS.open(**open_kwargs) as a:  # type: ignore[arg-type]
        calls = spy(a.transport)
        for c in CASES:
            assert await run_case_async(a, c) == expected(c), c["name"]
        assert_streamed(transport, calls)


def test_stream_start_error(agent: agentfs.AgentFS) -> None:
    """A process that does not start ends its stream with the error (over
    HTTP in the end-of-stream message), mapped as a unary call's."""
    with pytest.raises(OSError) as ei:
        agent.spawn("echo ran", readable=["work"], writable=[])
    assert ei.value.errno == errno.EINVAL
    assert "invalid sandbox policy" in str(ei.value)
    assert agent.processes() == []


def pids(a: agentfs.AgentFS) -> list[int]:
    return sorted(i.pid for i in a.processes())


def test_http_close_kills(http_server: Any) -> None:
    """Closing a streamed process's handle closes its HTTP response, and
    the server kills the process; closing the agent does so for the rest."""
    kw: dict[str, Any] = {"url": http_server.url, "token": http_server.token, "id": "closekill"}
    with agentfs.AgentFS.open(**kw) as a:
        p = a.spawn("echo first; sleep 3600")
        q = a.spawn("echo second; sleep 3600")
        assert p._feed is not None and q._feed is not None
        assert next(iter(p)).data == b"first\n"
        assert next(iter(q)).data == b"second\n"
        assert pids(a) == sorted([p.pid, q.pid])
        p.close()
        with pytest.raises(agentfs.EngineUnavailableError):
            p.read()
        while pids(a) != [q.pid]:
            time.sleep(0.02)
    with agentfs.AgentFS.open(**kw) as b:
        while b.processes():
            time.sleep(0.02)


def test_http_stream_reuses_connection(http_server: Any) -> None:
    """A stream read to its end hands its connection to the next one; a
    closed one's connection is gone."""
    with agentfs.AgentFS.open(url=http_server.url, token=http_server.token, id="reuse") as a:
        t = a.transport
        assert a.spawn("echo a").wait().stdout == b"a\n"
        assert len(t._idle) == 1
        conn = t._idle[0]
        p = a.spawn("echo b; sleep 3600")
        assert t._idle == [] and p._feed is not None
        assert next(iter(p)).data == b"b\n"
        p.close()
        assert conn not in t._conns
        assert a.spawn("echo c").wait().stdout == b"c\n"
        assert len(t._idle) == 1 and t._idle[0] is not conn


async def test_http_close_kills_async(http_server: Any) -> None:
    """The same with agentfs.aio, the handle closed while a read waits for
    output that never comes (the close wakes it)."""
    async with aio.AgentFS.open(url=http_server.url, token=http_server.token, id="closekill-aio") as a:
        async with await a.spawn("echo first; sleep 3600") as p:
            assert p._feed is not None
            chunks, done = await p.read()
            assert (chunks[0].data, done) == (b"first\n", False)
            waiting = asyncio.create_task(p.read())
        with pytest.raises(agentfs.EngineUnavailableError):
            await waiting
        while await a.processes():
            await asyncio.sleep(0.02)
    # Closing the agent while a read of a stream waits in a worker thread.
    kw: dict[str, Any] = {"url": http_server.url, "token": http_server.token, "id": "closekill-aio2"}
    async with aio.AgentFS.open(**kw) as a:
        q = await a.spawn("echo first; sleep 3600")
        await q.read()
        waiting = asyncio.create_task(q.read())
        while not q._lock.locked():
            await asyncio.sleep(0)
    with pytest.raises(agentfs.AgentFSError):
        await waiting
    async with aio.AgentFS.open(**kw) as b:
        while await b.processes():
            await asyncio.sleep(0.02)


def test_stream_list_kill(agent: agentfs.AgentFS) -> None:
    p = agent.spawn("echo first; sleep 3600")
    first = next(iter(p))
    assert (first.stream, first.data) == ("stdout", b"first\n")
    assert [(i.pid, i.running) for i in agent.processes()] == [(p.pid, True)]
    agent.kill(p.pid, 2)
    assert p.wait().exit_code == 130
    assert p.returncode == 130
    assert agent.processes() == []


def double(args: dict[str, Any]) -> int:
    return int(args["n"]) * 2


double.schema = {"type": "object", "properties": {"n": {"type": "number"}}}  # type: ignore[attr-defined]


def greet(args: dict[str, Any]) -> str:
    return "hi " + str(args["who"])


greet.schema = {"type": "object", "properties": {"who": {"type": "string"}}}  # type: ignore[attr-defined]


def test_bindings_in_spawn_and_shell(tmp_path: Path, engine: str) -> None:
    with agentfs.AgentFS.open(path=str(tmp_path / "a.db")) as a:
        p = a.spawn("double --n 21", bindings={"double": double})
        assert p.wait().stdout == b"42\n"
        with a.shell(bindings={"greet": greet}) as sh:
            sh.run("W=you")
            assert sh.run('greet --who "$W"').stdout == b'"hi you"\n'


def test_http_detached_outlives_lease(http_server: Any) -> None:
    with agentfs.AgentFS.open(url=http_server.url, token=http_server.token, id="detach") as a:
        p = a.spawn("sleep 3600", detach=True, lease_ms=50)
        q = a.spawn("sleep 3600", lease_ms=50)
        # A detached process is long-polled; a streamed one has no lease
        # (its stream holds it) and goes when its handle is closed.
        assert p._feed is None and q._feed is not None
        q.close()
        while len(a.processes()) != 1:
            time.sleep(0.02)
        assert [i.pid for i in a.processes()] == [p.pid]
        r = a.spawn("sleep 3600", detach=True)
        r.close()  # a detached process outlives its handle
        assert [i.pid for i in a.processes() if i.running] == sorted([p.pid, r.pid])
        a.kill(r.pid)
        p.kill()
        assert p.wait().exit_code == 137


def test_stdio_streams_and_close_kills(tmp_path: Path, engine: str) -> None:
    """Over stdio a spawned process streams (StreamProcess): its first line
    comes while it waits for stdin, with no ReadProcess; closing the agent
    ends the stream and the engine kills the script, whose audit record
    (written once it stopped) is then in the database."""
    db = str(tmp_path / "a.db")
    a = agentfs.AgentFS.open(path=db)
    p = a.spawn("echo first; read -r x; echo got $x; while :; do sleep 3600; done # victim-py", keep_stdin_open=True)
    assert p._feed is not None, "stdio spawn did not stream"
    chunks, done = p.read()
    assert (chunks[0].data, done) == (b"first\n", False)
    p.write("a\n")
    out = b""
    while b"got a\n" not in out:
        chunks, done = p.read()
        assert not done
        out += b"".join(c.data for c in chunks)
    a.close()
    with agentfs.AgentFS.open(path=db) as b:
        calls = [c for c in b.tools.get_by_name("exec") if "victim-py" in json.dumps(c.parameters)]
        assert len(calls) == 1 and calls[0].error, calls


async def test_stdio_streams_async(tmp_path: Path, engine: str) -> None:
    async with aio.AgentFS.open(path=str(tmp_path / "a.db")) as a:
        p = await a.spawn("echo first; read -r x; echo got $x; exit 3", keep_stdin_open=True)
        assert p._feed is not None, "stdio spawn did not stream"
        chunks, done = await p.read()
        assert (chunks[0].data, done) == (b"first\n", False)
        await p.write("a\n")
        await p.close_stdin()
        r = await p.wait()
        assert (r.exit_code, r.stdout) == (3, b"got a\n")
        assert await a.processes() == []
