"""Cross-language: what the Go engine's CLI writes, Python reads byte for
byte, and the other way round (same database file, closed in between)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import agentfs


def cli(engine: str, *args: str, input: bytes | None = None, cwd: Path | None = None) -> bytes:
    r = subprocess.run([engine, *args], input=input, capture_output=True, timeout=120, cwd=cwd)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


PAYLOADS = {
    "/empty": b"",
    "/text/hello.txt": "héllo, wörld ✓\n".encode(),
    "/bin/every-byte": bytes(range(256)) * 17,
    "/bin/chunks-4097": os.urandom(4097),
    "/bin/large": os.urandom(3 * 1024 * 1024 + 5),
    "/ünïcode/名前.txt": b"name test",
}


def test_cli_writes_python_reads(engine: str, tmp_path: Path) -> None:
    cli(engine, "init", "go-agent", cwd=tmp_path)
    for path, data in PAYLOADS.items():
        cli(engine, "fs", "go-agent", "mkdir", "-p", os.path.dirname(path), cwd=tmp_path)
        cli(engine, "fs", "go-agent", "write", path, input=data, cwd=tmp_path)
    cli(engine, "kv", "go-agent", "set", "cfg", json.dumps({"a": [1, 2, {"b": None}], "s": "ü"}), cwd=tmp_path)
    with agentfs.AgentFS.open(id="go-agent", cwd=tmp_path, create=False) as a:
        for path, data in PAYLOADS.items():
            assert a.fs.read_bytes(path) == data, path
            assert a.fs.stat(path).size == len(data)
        assert a.kv.get("cfg") == {"a": [1, 2, {"b": None}], "s": "ü"}


def test_python_writes_cli_reads(engine: str, tmp_path: Path) -> None:
    db = str(tmp_path / "py.db")
    with agentfs.AgentFS.open(path=db) as a:
        for path, data in PAYLOADS.items():
            a.fs.write_file(path, data)
        with a.fs.open("/handle.bin", "w") as f:  # written through a handle, in pieces
            for i in range(5):
                f.pwrite(bytes([i]) * 5000, i * 5000)
        a.kv.set("cfg", {"n": 1.5, "t": True})
        a.tools.record("search", 1700000000, 1700000003, {"q": "x"}, {"hits": 1})
    for path, data in PAYLOADS.items():
        assert cli(engine, "fs", db, "cat", path) == data, path
    assert cli(engine, "fs", db, "cat", "/handle.bin") == b"".join(bytes([i]) * 5000 for i in range(5))
    assert json.loads(cli(engine, "kv", db, "get", "cfg")) == {"n": 1.5, "t": True}
    rows = cli(engine, "query", db, "SELECT name, status, duration_ms FROM tool_calls")
    assert b"search" in rows and b"success" in rows and b"3000" in rows
    cli(engine, "fsck", db)  # exits non-zero on any inconsistency
