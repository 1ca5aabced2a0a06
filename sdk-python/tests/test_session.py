"""Agent sessions (SessionService), sync and asyncio, against the scripted
model server (core/cmd/fakemodel, bin/fakemodel): the shared case of
spec/sessions/case.json for both wire formats."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentfs
from agentfs import aio

REPO = Path(__file__).resolve().parents[2]
CASE = json.loads((REPO / "spec" / "sessions" / "case.json").read_text())


@pytest.fixture
def fakemodel(tmp_path: Path) -> Iterator[Any]:
    """Starts bin/fakemodel for a provider; yields a function giving its URL."""
    exe = os.environ.get("AGENTFS_FAKEMODEL") or str(REPO / "bin" / "fakemodel")
    if not os.access(exe, os.X_OK):
        pytest.fail(f"no fake model server at {exe}: run `go tool task build` or set AGENTFS_FAKEMODEL")
    procs: list[subprocess.Popen[str]] = []

    def start(provider: str) -> str:
        script = tmp_path / f"script-{provider}.json"
        script.write_text(json.dumps(dict(CASE["script"], provider=provider)))
        p = subprocess.Popen([exe, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(p)
        assert p.stdout is not None
        return p.stdout.readline().strip()

    yield start
    for p in procs:
        assert p.stdin is not None
        p.stdin.close()
        p.wait(timeout=30)


def check_server(url: str) -> None:
    with urllib.request.urlopen(f"{url}/_fakemodel/failures") as r:
        status = json.load(r)
    assert status["failures"] == []
    assert status["turns_left"] == 0


def check_prompt(agent: agentfs.AgentFS | None, p: dict[str, Any], events: list[agentfs.SessionEvent]) -> None:
    text = "".join(e.text for e in events if e.type == "text")
    assert text == p["want_text"], events
    assert events[-1].type == "done"
    assert [e.tool_name for e in events if e.type == "tool_call"] == p["want_tools"]
    results = [e for e in events if e.type == "tool_result"]
    if "want_tool_error" in p:
        assert any(e.is_error and p["want_tool_error"] in e.result["error"] for e in results), results
    else:
        assert not any(e.is_error for e in results), results


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_session_case(engine: str, fakemodel: Any, tmp_path: Path, provider: str) -> None:
    url = fakemodel(provider)
    path = str(tmp_path / "a.db")
    for i, p in enumerate(CASE["prompts"]):
        # Each prompt in a new engine: the second resumes from the database.
        with agentfs.AgentFS.open(path=path) as agent:
            s = agent.open_session(id=CASE["session_id"], provider=provider, model=CASE["script"]["model"],
                                   base_url=url, api_key=CASE["script"]["api_key"], writable=p.get("writable"))
            assert s.id == CASE["session_id"]
            events = list(s.prompt(p["text"]))
            check_prompt(agent, p, events)
            for f, content in p["want_files"].items():
                assert agent.fs.read_file(f) == content
            if "want_log" in p:
                assert [c.name for c in reversed(agent.tools.get_recent(0))] == p["want_log"]
            if i == len(CASE["prompts"]) - 1:
                assert [x.id for x in agent.sessions()] == [CASE["session_id"]]
    check_server(url)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_session_case_aio(engine: str, fakemodel: Any, tmp_path: Path, provider: str) -> None:
    url = fakemodel(provider)
    path = str(tmp_path / "a.db")
    for p in CASE["prompts"]:
        async with aio.AgentFS.open(path=path) as agent:
            s = await agent.open_session(id=CASE["session_id"], provider=provider, model=CASE["script"]["model"],
                                         base_url=url, api_key=CASE["script"]["api_key"], writable=p.get("writable"))
            events = [e async for e in s.prompt(p["text"])]
            check_prompt(None, p, events)
            for f, content in p["want_files"].items():
                assert await agent.fs.read_file(f) == content
    check_server(url)


def test_session_errors(engine: str) -> None:
    with agentfs.AgentFS.open() as agent:
        with pytest.raises(agentfs.AgentFSError, match="no model"):
            agent.open_session(provider="openai")
        s = agent.open_session(provider="openai", model="m", base_url="http://127.0.0.1:1")
        events = list(s.prompt("hi"))
        assert [e.type for e in events] == ["error", "done"]
        assert "connection refused" in events[0].error
        with pytest.raises(agentfs.PromptError, match="prompt failed"):
            s.run("again")
        assert agent.delete_session(s.id) is False
