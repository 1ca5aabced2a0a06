"""Conformance vectors (spec/vectors/*.json) through the idiomatic API, on
both transports, each on a fresh agent."""

from __future__ import annotations

import base64
import errno
import json
from pathlib import Path
from typing import Any

import pytest

import agentfs

VECTORS = sorted((Path(__file__).resolve().parents[2] / "spec" / "vectors").glob("*.json"))
_MISSING = object()


def _data(args: dict[str, Any]) -> bytes:
    if "data_b64" in args:
        return base64.b64decode(args["data_b64"])
    return str(args["data"]).encode("utf-8")


def run_op(a: agentfs.AgentFS, op: str, args: dict[str, Any]) -> dict[str, Any]:
    fs = a.fs
    if op == "writeFile":
        # errors.json expects ENOENT for a missing parent: the engine's
        # writeFile. write_file's default creates parents (as agentfs-sdk).
        fs.write_file(args["path"], _data(args), create_parents=False)
    elif op == "appendFile":
        fs.append_file(args["path"], _data(args))
    elif op == "readFile":
        data = fs.read_bytes(args["path"])
        try:
            return {"data": data.decode("utf-8"), "data_b64": base64.b64encode(data).decode()}
        except UnicodeDecodeError:
            return {"data_b64": base64.b64encode(data).decode()}
    elif op in ("stat", "lstat"):
        st = fs.stat(args["path"]) if op == "stat" else fs.lstat(args["path"])
        return {"size": st.size, "type": st.type, "perm": st.mode & 0o7777, "nlink": st.nlink}
    elif op == "mkdir":
        fs.mkdir(args["path"], recursive=bool(args.get("recursive")))
    elif op == "rmdir":
        fs.rmdir(args["path"])
    elif op == "unlink":
        fs.unlink(args["path"])
    elif op == "rm":
        fs.rm(args["path"], force=bool(args.get("force")), recursive=bool(args.get("recursive")))
    elif op == "rename":
        fs.rename(args["from"], args["to"])
    elif op == "copyFile":
        fs.copy_file(args["from"], args["to"])
    elif op == "symlink":
        fs.symlink(args["target"], args["path"])
    elif op == "readlink":
        return {"target": fs.readlink(args["path"])}
    elif op == "link":
        fs.link(args["from"], args["to"])
    elif op == "chmod":
        fs.chmod(args["path"], args["mode"])
    elif op == "truncate":
        fs.truncate(args["path"], args["size"])
    elif op == "access":
        fs.access(args["path"])
    elif op == "readdir":
        return {"names": fs.readdir(args["path"])}
    elif op == "exists":
        return {"value": fs.exists(args["path"])}
    elif op == "kvSet":
        a.kv.set(args["key"], args["value"])
    elif op == "kvGet":
        v = a.kv.get(args["key"], _MISSING)
        return {"missing": True} if v is _MISSING else {"value": v}
    elif op == "kvList":
        return {"keys": [e["key"] for e in a.kv.list(args["prefix"])]}
    elif op == "kvDelete":
        a.kv.delete(args["key"])
    elif op == "toolRecord":
        a.tools.record(
            args["name"],
            args["started_at"],
            args["completed_at"],
            args.get("parameters"),
            args.get("result"),
            args.get("error"),
        )
    elif op == "toolStats":
        stats = a.tools.get_stats()
        return {
            "stats": [
                {"name": s.name, "total_calls": s.total_calls, "successful": s.successful, "failed": s.failed}
                for s in stats
            ]
        }
    else:
        raise AssertionError(f"unknown vector op {op}")
    return {}


def test_vectors_exist() -> None:
    assert len(VECTORS) >= 10, "spec/vectors has no vectors"


@pytest.mark.parametrize("vector", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(vector: Path, open_kwargs: dict[str, object]) -> None:
    doc = json.loads(vector.read_text("utf-8"))
    with agentfs.AgentFS.open(**open_kwargs) as a:  # type: ignore[arg-type]
        for i, step in enumerate(doc["steps"]):
            op, args, expect = step["op"], step.get("args", {}), step.get("expect", {})
            where = f"{doc['name']} step {i} {op} {json.dumps(args)[:120]}"
            try:
                got = run_op(a, op, args)
            except OSError as e:
                code = errno.errorcode.get(e.errno or 0, "")
                assert expect.get("error") == code, f"{where}: raised {e!r}, want {expect}"
                assert getattr(e, "code", code) == code
                continue
            assert "error" not in expect, f"{where}: succeeded with {got}, want {expect['error']}"
            for k, want in expect.items():
                assert k in got, f"{where}: no field {k} in {got}"
                assert got[k] == want, f"{where}: {k} = {got[k]!r}, want {want!r}"
