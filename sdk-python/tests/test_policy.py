"""The sandbox policy and bindings through this SDK, sync and asyncio: the
shared conformance cases of spec/policy/cases.json (stdio and a real
`agentfs serve http`) and spec/bindings/cases.json (stdio: the engine
calls back)."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

import agentfs
from agentfs import aio

SPEC = Path(__file__).resolve().parents[2] / "spec"
POLICY = json.loads((SPEC / "policy" / "cases.json").read_text())
BINDINGS = json.loads((SPEC / "bindings" / "cases.json").read_text())["cases"]


def policy_kwargs(c: dict[str, Any]) -> dict[str, Any]:
    """The SDK's keyword arguments of a case's policy (ExecRequest names)."""
    p = dict(c.get("policy", {}))
    if "huge" in c:
        h = c["huge"]
        p[h["field"]] = [f"{h['prefix']}{i}" for i in range(h["count"])]
    out: dict[str, Any] = {}
    for k, v in p.items():
        if k in ("readable", "writable", "allow", "deny", "env", "limits", "default_deny", "limit_values"):
            out[k] = v
        elif k == "net":
            out["net"] = [
                agentfs.NetRule(r["prefix"], r.get("methods", ()), r.get("headers"), r.get("allow_private", False)) for r in v
            ]
        else:
            raise AssertionError(f"{c['name']}: policy field {k}: add it to the harness")
    return out


def contains(got: Any, want: Any) -> bool:
    """got has every key of want (recursively); numbers compare by value."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(contains(got.get(k), w) for k, w in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(contains(g, w) for g, w in zip(got, want))
    if isinstance(want, bool) or not isinstance(want, (int, float)):
        return bool(got == want)
    return str(got) == str(want)


def as_json(p: Any) -> dict[str, Any]:
    return MessageToDict(p, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def check_case(c: dict[str, Any], exec_: Any, policy: Any) -> None:
    kw = policy_kwargs(c)
    if "error" in c:
        with pytest.raises(OSError) as ei:
            exec_(c["script"], **kw)
        assert ei.value.errno == getattr(errno, c["error"]), c["name"]
        assert "invalid sandbox policy" in str(ei.value), (c["name"], str(ei.value))
        with pytest.raises(OSError) as ei:
            policy(**kw)
        assert ei.value.errno == getattr(errno, c["error"]), c["name"]
        assert exec_(c["after"]).stdout.decode() == c["after_stdout"], c["name"]
    elif "effective" in c:
        js = as_json(policy(**kw))
        assert contains(js, c["effective"]), (c["name"], js)
        for s in c.get("absent_text", []):
            assert s not in json.dumps(js), c["name"]
    else:
        r = exec_(c["script"], **kw)
        e = c["expect"]
        assert r.exit_code == e["exit_code"], (c["name"], r)
        if "stdout" in e:
            assert r.stdout.decode() == e["stdout"], (c["name"], r)
        assert e.get("stderr_contains", "") in r.stderr.decode(), (c["name"], r)


def test_policy_cases(agent: agentfs.AgentFS) -> None:
    assert agent.exec(POLICY["setup"]).exit_code == 0
    for c in POLICY["cases"]:
        check_case(c, agent.exec, agent.policy)


async def test_policy_cases_async(open_kwargs: dict[str, Any]) -> None:
    async with await aio.AgentFS.open(**open_kwargs) as a:
        assert (await a.exec(POLICY["setup"])).exit_code == 0
        loop_cases = [c for c in POLICY["cases"] if "huge" not in c]
        for c in loop_cases:
            kw = policy_kwargs(c)
            if "error" in c:
                with pytest.raises(OSError) as ei:
                    await a.exec(c["script"], **kw)
                assert ei.value.errno == getattr(errno, c["error"]), c["name"]
                with pytest.raises(OSError):
                    await a.policy(**kw)
            elif "effective" in c:
                assert contains(as_json(await a.policy(**kw)), c["effective"]), c["name"]
            else:
                r = await a.exec(c["script"], **kw)
                assert r.exit_code == c["expect"]["exit_code"], (c["name"], r)


def _fail(args: dict[str, Any]) -> Any:
    raise RuntimeError(args["message"])


FNS: dict[str, Any] = {
    "echo": lambda args: args,
    "fail": _fail,
    "sum": lambda args: {"sum": args["a"] + args["b"]},
    "null": lambda args: None,
}


def make_binding(b: dict[str, Any]) -> Any:
    base = FNS[b["fn"]]

    def fn(args: dict[str, Any]) -> Any:
        return base(args)

    fn.__doc__ = b.get("description", "")
    if "schema" in b:
        fn.schema = b["schema"]  # type: ignore[attr-defined]
    return fn


@pytest.mark.parametrize("c", BINDINGS, ids=[c["name"] for c in BINDINGS])
def test_binding_cases(tmp_path: Path, c: dict[str, Any]) -> None:
    with agentfs.AgentFS.open(path=str(tmp_path / "a.db")) as a:
        r = a.exec(c["script"], bindings={b["name"]: make_binding(b) for b in c["bindings"]}, **policy_kwargs(c))
        e = c["expect"]
        assert (r.exit_code, r.stdout.decode()) == (e["exit_code"], e["stdout"]), r
        assert e["stderr_contains"] in r.stderr.decode(), r
