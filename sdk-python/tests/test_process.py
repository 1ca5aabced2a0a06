"""Processes and persistent shells (ProcessService) over stdio and a real
`agentfs serve http`, sync and asyncio: the shared conformance cases of
spec/process/cases.json, then list/kill by pid and bindings."""

from __future__ import annotations

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


def test_conformance(agent: agentfs.AgentFS) -> None:
    for c in CASES:
        assert run_case(agent, c) == expected(c), c["name"]


async def test_conformance_async(open_kwargs: dict[str, object]) -> None:
    async with aio.AgentFS.open(**open_kwargs) as a:  # type: ignore[arg-type]
        for c in CASES:
            assert await run_case_async(a, c) == expected(c), c["name"]


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
        # The abandoned one goes when its lease runs out; the detached stays.
        while len(a.processes()) != 1:
            time.sleep(0.02)
        assert [i.pid for i in a.processes()] == [p.pid]
        with pytest.raises(agentfs.NotFoundError):
            q.read()
        p.kill()
        assert p.wait().exit_code == 137
