"""agent.exec with host bindings: the engine calls back into this process
while a sandbox script runs (HostService.CallBinding over stdio)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentfs
import agentfs.aio


def test_sync_bindings(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def lookup(args: dict[str, Any]) -> dict[str, Any]:
        """find a user"""
        seen.append(args)
        # A binding may call the agent itself (it runs on its own thread).
        agent.fs.write_file("/looked-up", str(args["id"]))
        return {"id": args["id"], "name": "ada"}

    lookup.schema = {"type": "object", "properties": {"id": {"type": "integer"}}}  # type: ignore[attr-defined]

    def fails(args: dict[str, Any]) -> None:
        raise ValueError("no such user")

    with agentfs.AgentFS.open(path=str(tmp_path / "a.db")) as agent:
        r = agent.exec(
            "lookup --id 7 > /out.json; cat /out.json; fails || echo failed:$?; echo done",
            bindings={"lookup": lookup, "fails": fails},
        )
        assert r.exit_code == 0, r.stderr
        assert seen == [{"id": 7}]
        first, rest = r.stdout.decode().split("\n", 1)
        assert json.loads(first) == {"id": 7, "name": "ada"}
        assert rest == "failed:1\ndone\n"
        assert b"fails: no such user" in r.stderr
        assert json.loads(agent.fs.read_file("/out.json")) == {"id": 7, "name": "ada"}
        assert agent.fs.read_file("/looked-up") == "7"
        # Once the script ended the binding is gone: an unknown command.
        assert agent.exec("lookup --id 1; echo $?").stdout == b"127\n"


async def test_async_bindings(tmp_path: Path) -> None:
    async def lookup(args: dict[str, Any]) -> dict[str, Any]:
        return {"id": args["id"] * 2}

    lookup.schema = {"type": "object", "properties": {"id": {"type": "integer"}}}  # type: ignore[attr-defined]

    async with agentfs.aio.AgentFS.open(path=str(tmp_path / "b.db")) as agent:
        r = await agent.exec("lookup --id 21", bindings={"lookup": lookup})
        assert r.exit_code == 0, r.stderr
        assert json.loads(r.stdout) == {"id": 42}


def test_bindings_refused_over_http(open_kwargs: dict[str, object], transport: str) -> None:
    if transport != "http":
        pytest.skip("stdio serves bindings")
    with agentfs.AgentFS.open(**open_kwargs) as agent:  # type: ignore[arg-type]
        assert agent.exec("echo hi").stdout == b"hi\n"
        with pytest.raises(agentfs.FailedPreconditionError):
            agent.exec("x", bindings={"x": lambda a: 1})
