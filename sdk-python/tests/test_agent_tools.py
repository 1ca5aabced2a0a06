"""The ready-made agent tools against the shared cases of
spec/tools/cases.json (the same cases run in every SDK), over both
transports: each case on a fresh agent, then the result or error code, the
files and kv afterwards, and the one tool-call record per call."""

from __future__ import annotations

import errno
import json
from typing import Any

import pytest

import agentfs
from agentfs.agent_tools import AGENT_TOOL_SPECS, agent_tools, call_agent_tool

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CASES = json.loads((REPO / "spec" / "tools" / "cases.json").read_text())["cases"]
SPEC = json.loads((REPO / "spec" / "tools" / "agent-tools.json").read_text())


def assert_subset(got: Any, want: Any, where: str) -> None:
    """Every key of want is equal in got (arrays element by element)."""
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got!r}"
        for i, w in enumerate(want):
            assert_subset(got[i], w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {got!r}"
        for k, w in want.items():
            assert_subset(got.get(k), w, f"{where}.{k}")
    else:
        assert got == want and type(got) is type(want), f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(agent: agentfs.AgentFS, case: dict[str, Any]) -> None:
    for p, content in case.get("files", {}).items():
        agent.fs.write_file(p, content)
    for k, v in case.get("kv", {}).items():
        agent.kv.set(k, v)
    call = case["call"]
    if "error" in case:
        with pytest.raises(OSError) as ei:
            call_agent_tool(agent, call["tool"], call["input"])
        assert ei.value.errno is not None and errno.errorcode[ei.value.errno] == case["error"], str(ei.value)
    else:
        assert_subset(call_agent_tool(agent, call["tool"], call["input"]), case["result"], "result")
    for p, content in case.get("files_after", {}).items():
        assert agent.fs.read_file(p) == content, p
    for k, v in case.get("kv_after", {}).items():
        assert agent.kv.get(k) == v, k
    # One record per call, under the tool's name, with its arguments; the
    # engine's own "exec" record is not added for bash and search.
    log = agent.tools.get_recent(0)
    assert [c.name for c in log] == [call["tool"]]
    assert log[0].parameters == call["input"]
    failed = "error" in case or (call["tool"] == "bash" and case["result"]["exit_code"] != 0)
    assert log[0].status == ("error" if failed else "success")


def test_specs_are_the_generated_copy() -> None:
    assert AGENT_TOOL_SPECS == SPEC["tools"]


def test_options_and_log(agent: agentfs.AgentFS) -> None:
    assert [t.name for t in agent_tools(agent)] == [t["name"] for t in SPEC["tools"]]
    assert [t.name for t in agent_tools(agent, read_only=True)] == ["read_file", "list", "search", "kv_get"]
    (rf,) = agent_tools(agent, only=["read_file"])
    agent.fs.write_file("/big.txt", "x" * 10000)
    assert len(rf({"path": "/big.txt"})["content"]) == 10000
    (call,) = agent.tools.get_by_name("read_file")
    assert call.result == {"path": "/big.txt", "size": 10000}

    # bash output is cut in the log, not in the result; the policy applies.
    (bash,) = agent_tools(agent, only=["bash"], deny=["rm"])
    assert len(bash({"command": "cat /big.txt"})["stdout"]) == 10000
    (bc,) = agent.tools.get_by_name("bash")
    assert len(bc.result["stdout"]) < 5000 and "more characters" in bc.result["stdout"]
    assert bash({"command": "rm /big.txt"})["exit_code"] != 0
    assert agent.fs.exists("/big.txt")

    before = len(agent.tools.get_recent(0))
    call_agent_tool(agent, "kv_set", {"key": "k", "value": 1}, no_log=True)
    assert len(agent.tools.get_recent(0)) == before
