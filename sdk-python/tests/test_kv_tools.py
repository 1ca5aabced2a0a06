"""Key-value store and tool-call log over both transports."""

from __future__ import annotations

import time

import agentfs


def test_kv(agent: agentfs.AgentFS) -> None:
    kv = agent.kv
    assert kv.get("missing") is None
    assert kv.get("missing", 42) == 42
    kv.set("user:1", {"name": "Alice", "tags": ["a", 1, None, 2.5]})
    kv.set("user:2", "bob")
    kv.set("zzz", True)
    assert kv.get("user:1") == {"name": "Alice", "tags": ["a", 1, None, 2.5]}
    assert kv.list("user:") == [
        {"key": "user:1", "value": {"name": "Alice", "tags": ["a", 1, None, 2.5]}},
        {"key": "user:2", "value": "bob"},
    ]
    kv.set("user:2", 7)
    assert kv.get("user:2") == 7
    assert kv.delete("user:2") is True
    assert kv.delete("user:2") is False
    assert [e["key"] for e in kv.list("")] == ["user:1", "zzz"]


def test_tools(agent: agentfs.AgentFS) -> None:
    tools = agent.tools
    before = int(time.time()) - 1
    cid = tools.start("search", {"q": "x"})
    call = tools.get(cid)
    assert call is not None and call.status == "pending" and call.parameters == {"q": "x"}
    tools.success(cid, {"hits": 3})
    call = tools.get(cid)
    assert call is not None and call.status == "success" and call.result == {"hits": 3}
    assert call.completed_at is not None and call.duration_ms is not None
    fid = tools.start("fetch")
    tools.error(fid, "timeout")
    failed = tools.get(fid)
    assert failed is not None and failed.status == "error" and failed.error == "timeout" and failed.parameters is None
    rid = tools.record("search", 1700000000, 1700000002, {"q": "y"}, [1, 2])
    rec = tools.get(rid)
    assert rec is not None and rec.duration_ms == 2000 and rec.result == [1, 2]
    assert tools.get(999999) is None
    assert [c.id for c in tools.get_by_name("search")] == [cid, rid]
    assert [c.id for c in tools.get_by_name("search", limit=1)] == [cid]
    assert {c.id for c in tools.get_recent(before)} == {cid, fid}
    stats = {s.name: (s.total_calls, s.successful, s.failed) for s in tools.get_stats()}
    assert stats == {"fetch": (1, 0, 1), "search": (2, 2, 0)}
