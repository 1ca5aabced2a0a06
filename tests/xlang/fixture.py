#!/usr/bin/env python3
"""Cross-language fixture for the Python SDK (tests/xlang/README.md).

    python fixture.py write DB   replay tests/compat/fixture-ops.json into a new DB
    python fixture.py dump DB    print the canonical JSON of tests/compat/dump.mjs

sdk-python/tests/test_turso_compat.py imports replay() and content() from here.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
from pathlib import Path

from agentfs import AgentFS

OPS = Path(__file__).resolve().parents[1] / "compat" / "fixture-ops.json"


def content(op: dict) -> bytes:
    if isinstance(op.get("text"), str):
        return op["text"].encode("utf-8")
    if isinstance(op.get("pattern"), int):
        return bytes(i % 256 for i in range(op["pattern"]))
    raise ValueError(f"writeFile op without content: {op}")


def replay(agent: AgentFS) -> None:
    """Applies every operation of fixture-ops.json to an open agent."""
    ops = json.loads(OPS.read_text("utf-8"))["ops"]
    ids: dict[str, int] = {}
    for op in ops:
        kind = op["op"]
        if kind == "mkdir":
            agent.fs.mkdir(op["path"])
        elif kind == "writeFile":
            agent.fs.write_file(op["path"], content(op))
        elif kind == "symlink":
            agent.fs.symlink(op["target"], op["path"])
        elif kind == "kvSet":
            agent.kv.set(op["key"], op["value"])
        elif kind == "toolStart":
            ids[op["as"]] = agent.tools.start(op["name"], op.get("parameters"))
        elif kind == "toolSuccess":
            agent.tools.success(ids[op["ref"]], op.get("result"))
        elif kind == "toolError":
            agent.tools.error(ids[op["ref"]], op["error"])
        elif kind == "toolRecord":
            agent.tools.record(op["name"], op["startedAt"], op["completedAt"],
                               op.get("parameters"), op.get("result"), op.get("error"))
        else:
            raise ValueError(f"unknown op: {op}")


def write(db: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    with AgentFS.open(path=db) as agent:
        replay(agent)


def dump(db: str) -> None:
    with AgentFS.open(path=db) as agent:
        files: list[dict] = []

        def walk(d: str) -> None:
            for name in agent.fs.readdir(d):
                p = f"/{name}" if d == "/" else f"{d}/{name}"
                st = agent.fs.lstat(p)
                e: dict = {"path": p, "mode": st.mode & 0o7777}
                fmt = stat.S_IFMT(st.mode)
                if fmt == stat.S_IFDIR:
                    e["type"] = "dir"
                    files.append(e)
                    walk(p)
                elif fmt == stat.S_IFREG:
                    data = agent.fs.read_file(p, encoding=None)
                    e.update(type="file", size=st.size, sha256=hashlib.sha256(data).hexdigest())
                    if len(data) != st.size:
                        e["content_length"] = len(data)
                    files.append(e)
                elif fmt == stat.S_IFLNK:
                    e.update(type="symlink", target=agent.fs.readlink(p))
                    files.append(e)
                else:
                    e.update(type="other", raw_mode=st.mode)
                    files.append(e)

        walk("/")
        utf8 = lambda s: s.encode("utf-8")  # noqa: E731
        files.sort(key=lambda e: utf8(e["path"]))
        kv = sorted(({"key": r["key"], "value": r["value"]} for r in agent.kv.list("")), key=lambda r: utf8(r["key"]))
        user = sorted((r["key"] for r in agent.kv.list("user:")), key=utf8)
        tools = []
        for t in sorted(agent.tools.get_recent(-(2**53 - 1)), key=lambda t: t.id):
            d = {"id": t.id, "name": t.name, "status": t.status}
            for k in ("parameters", "result", "error"):
                if getattr(t, k) is not None:
                    d[k] = getattr(t, k)
            tools.append(d)
    json.dump({"files": files, "kv": kv, "kv_prefix_user": user, "tools": tools}, sys.stdout, ensure_ascii=False, sort_keys=True, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "dump"):
        sys.exit(__doc__)
    (write if sys.argv[1] == "write" else dump)(sys.argv[2])
