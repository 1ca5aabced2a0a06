"""Cross-language with Turso's agentfs-sdk 0.6.4 (npm, in tests/compat):
what it writes, Python reads byte for byte; what Python writes, its dump
reads as tests/compat/expected-fixture.json."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from collections.abc import Callable
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


# The fixture's replay is shared with the cross-language test (tests/xlang).
_spec = importlib.util.spec_from_file_location("xlang_fixture", COMPAT.parent / "xlang" / "fixture.py")
assert _spec is not None and _spec.loader is not None
_fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixture)
content: Callable[[dict[str, Any]], bytes] = _fixture.content
replay: Callable[[agentfs.AgentFS], None] = _fixture.replay


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
