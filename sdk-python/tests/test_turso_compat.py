"""Cross-language with Turso's agentfs-sdk 0.6.4 (npm, in tests/compat):
what it writes, Python reads byte for byte; what Python writes, its dump
reads as tests/compat/expected-fixture.json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import agentfs

COMPAT = Path(__file__).resolve().parents[2] / "tests" / "compat"
OPS = json.loads((COMPAT / "fixture-ops.json").read_text("utf-8"))["ops"]


def _node() -> str:
    node = shutil.which("node")
    if node and (COMPAT / "node_modules" / "turso-agentfs").is_dir():
        return node
    if os.environ.get("AGENTFS_REQUIRE_COMPAT") == "1":
        pytest.fail("node or tests/compat/node_modules missing (go tool task compat-deps)")
    pytest.skip("node or tests/compat/node_modules missing (go tool task compat-deps)")


def content(op: dict[str, Any]) -> bytes:
    if isinstance(op.get("text"), str):
        return str(op["text"]).encode("utf-8")
    return bytes(i % 256 for i in range(op["pattern"]))


def replay(agent: agentfs.AgentFS) -> None:
    ids: dict[str, int] = {}
    for op in OPS:
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
            agent.tools.record(
                op["name"], op["startedAt"], op["completedAt"], op.get("parameters"), op.get("result"), op.get("error")
            )
        else:
            raise AssertionError(f"unknown fixture op {op}")


def test_python_reads_what_agentfs_sdk_wrote(engine: str, tmp_path: Path) -> None:
    node = _node()
    db = tmp_path / "turso.db"
    subprocess.run([node, str(COMPAT / "write-fixture.mjs"), str(db)], check=True, timeout=300)
    with agentfs.AgentFS.open(path=str(db), create=False) as a:
        kv: dict[str, Any] = {}
        files: dict[str, bytes] = {}  # the last write of each path wins
        for op in OPS:
            if op["op"] == "writeFile":
                files[op["path"]] = content(op)
            elif op["op"] == "symlink":
                assert a.fs.readlink(op["path"]) == op["target"]
                assert a.fs.lstat(op["path"]).is_symbolic_link()
            elif op["op"] == "mkdir":
                assert a.fs.stat(op["path"]).is_directory()
            elif op["op"] == "kvSet":
                kv[op["key"]] = op["value"]
        for path, data in files.items():
            assert a.fs.read_bytes(path) == data, path
        for k, v in kv.items():
            assert a.kv.get(k) == v, k
        compute = a.tools.get_by_name("compute")
        assert {(c.started_at, c.status, c.error) for c in compute} == {
            (1700000000, "success", None),
            (1700000010, "error", "TypeError: a is not a number"),
        }
        fetch = a.tools.get_by_name("fetch")[0]
        assert fetch.status == "success" and fetch.result["status"] == 200


def test_agentfs_sdk_reads_what_python_wrote(engine: str, tmp_path: Path) -> None:
    node = _node()
    db = tmp_path / "py.db"
    with agentfs.AgentFS.open(path=str(db)) as a:
        replay(a)
    # dump.mjs opens the database for writing (atime): dump a copy.
    copy = tmp_path / "copy.db"
    for suffix in ("", "-wal"):
        if Path(str(db) + suffix).exists():
            shutil.copy(str(db) + suffix, str(copy) + suffix)
    out = subprocess.run(
        [node, str(COMPAT / "dump.mjs"), str(copy)], check=True, capture_output=True, timeout=300
    ).stdout
    got = json.loads(out)
    want = json.loads((COMPAT / "expected-fixture.json").read_text("utf-8"))
    assert got["files"] == want["files"]
    assert got["kv"] == want["kv"] and got["kv_prefix_user"] == want["kv_prefix_user"]
    assert got["tools"] == want["tools"]
