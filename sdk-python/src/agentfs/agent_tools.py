"""Ready-made agent tools: read_file, write_file, edit_file, list, search,
bash, kv_get, kv_set over an AgentFS.

Names, descriptions and JSON Schemas come from spec/tools/agent-tools.json
(generated into agentfs.v1.agent_tools); the behaviour is the one
spec/tools/README.md describes and spec/tools/cases.json checks in every
SDK. Each call is recorded in the agent's tool-call log under the tool's
name, with its arguments and result.

    from agentfs import AgentFS
    from agentfs.agent_tools import agent_tools

    with AgentFS.open(id="coder") as agent:
        tools = {t.name: t for t in agent_tools(agent)}
        tools["write_file"]({"path": "/hello.py", "content": "print(1)"})

Framework adapters: agentfs.langchain (LangChain StructuredTool) and
agentfs.openai_agents (OpenAI Agents FunctionTool).
"""

from __future__ import annotations

import errno
import os
import shlex
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ._sync import AgentFS
from .v1.agent_tools import AGENT_TOOL_SPECS, AgentToolName

__all__ = ["AGENT_TOOL_SPECS", "AgentTool", "AgentToolName", "agent_tools", "call_agent_tool"]

# The longest string kept in the tool-call log per field (bash output).
LOG_STRING_MAX = 4096


@dataclass(frozen=True)
class AgentTool:
    """One tool, framework-neutral: what the adapters turn into their tool
    type. Calling it validates the input, runs the tool and records the
    call; failures raise OSError with errno set (EINVAL, ENOENT, ...)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    writes: bool
    _call: Callable[[dict[str, Any]], dict[str, Any]] = field(repr=False)

    def __call__(self, input: dict[str, Any]) -> dict[str, Any]:
        return self._call(input)


def agent_tools(
    agent: AgentFS,
    *,
    only: list[str] | None = None,
    read_only: bool = False,
    limits: str = "",
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    no_log: bool = False,
) -> list[AgentTool]:
    """The ready-made tools over an agent. only selects tools by name;
    read_only leaves out those that change the agent; limits, allow and
    deny apply to the sandbox of bash and search; no_log skips the
    tool-call log."""
    out = []
    for spec in AGENT_TOOL_SPECS:
        if (only is not None and spec["name"] not in only) or (read_only and spec["writes"]):
            continue

        def call(input: dict[str, Any], _name: str = spec["name"]) -> dict[str, Any]:
            return call_agent_tool(
                agent, _name, input, limits=limits, allow=allow, deny=deny, no_log=no_log
            )

        out.append(AgentTool(spec["name"], spec["description"], spec["input_schema"], spec["writes"], call))
    return out


def call_agent_tool(
    agent: AgentFS,
    name: str,
    input: dict[str, Any],
    *,
    limits: str = "",
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    no_log: bool = False,
) -> dict[str, Any]:
    """Runs one tool by name (validated against its schema) and records the
    call in the tool-call log."""
    spec = next((s for s in AGENT_TOOL_SPECS if s["name"] == name), None)
    if spec is None:
        names = ", ".join(s["name"] for s in AGENT_TOOL_SPECS)
        raise OSError(errno.EINVAL, f"unknown tool {name!r} (tools: {names})")
    started = time.time()
    result: dict[str, Any] | None = None
    error: str | None = None
    try:
        args = _validate(spec, input)
        result = _RUN[name](agent, args, _Sandbox(limits, allow, deny))
        if name == "bash" and result["exit_code"] != 0:
            # The log marks a failing script, as the engine's exec record does.
            error = f"exit status {result['exit_code']}" + (f": {result['limit']}" if result.get("limit") else "")
        return result
    except Exception as e:
        error = _message(e)
        result = None
        raise
    finally:
        if not no_log:
            logged = _for_log(_log_result(name, result)) if result is not None else None
            agent.tools.record(name, int(started), int(time.time()), _for_log(input), logged, error)


@dataclass(frozen=True)
class _Sandbox:
    limits: str
    allow: list[str] | None
    deny: list[str] | None


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.errno is not None:
        code = errno.errorcode.get(e.errno, str(e.errno))
        return f"{code}: {e.strerror or e}" + (f" '{e.filename}'" if e.filename else "")
    return str(e)


def _invalid(message: str) -> OSError:
    return OSError(errno.EINVAL, message)


def _validate(spec: dict[str, Any], input: Any) -> dict[str, Any]:
    """Checks input against the tool's schema and fills in the defaults."""
    name = spec["name"]
    if not isinstance(input, dict):
        raise _invalid(f"{name}: the input must be a JSON object")
    props: dict[str, Any] = spec["input_schema"]["properties"]
    out: dict[str, Any] = {}
    for k, v in input.items():
        p = props.get(k)
        if p is None:
            raise _invalid(f"{name}: unknown argument {k!r} (arguments: {', '.join(props)})")
        t = p.get("type")
        ok = (
            t is None
            or (t == "string" and isinstance(v, str))
            or (t == "boolean" and isinstance(v, bool))
            or (t == "integer" and isinstance(v, int) and not isinstance(v, bool))
            or (t == "number" and isinstance(v, (int, float)) and not isinstance(v, bool))
        )
        if not ok:
            raise _invalid(f"{name}: argument {k} must be {'an integer' if t == 'integer' else 'a ' + str(t)}")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            lo, hi = p.get("minimum"), p.get("maximum")
            if (lo is not None and v < lo) or (hi is not None and v > hi):
                raise _invalid(f"{name}: argument {k} must be between {lo} and {hi}")
        out[k] = v
    for r in spec["input_schema"].get("required", []):
        if r not in out:
            raise _invalid(f"{name}: missing argument {r}")
    for k, p in props.items():
        if k not in out and "default" in p:
            out[k] = p["default"]
    return out


def _agent_path(p: str) -> str:
    """Makes a path absolute in the agent's filesystem, as the MCP tools do."""
    if p == "":
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), p)
    return p if p.startswith("/") else "/" + p


def _type_name(mode: int) -> str:
    import stat

    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def _read_file(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    path = _agent_path(a["path"])
    data = agent.fs.read_bytes(path)
    return {"path": path, "content": data.decode("utf-8", errors="replace"), "size": len(data)}


def _write_file(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    path = _agent_path(a["path"])
    data = a["content"].encode("utf-8")
    agent.fs.write_file(path, data, create_parents=True)
    return {"path": path, "size": len(data)}


def _edit_file(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    path = _agent_path(a["path"])
    old, new = a["old_string"], a["new_string"]
    if old == "":
        raise _invalid(f"edit_file {path}: old_string is empty; use write_file to create or replace a file")
    if old == new:
        raise _invalid(f"edit_file {path}: old_string and new_string are the same; nothing would change")
    text = agent.fs.read_bytes(path).decode("utf-8", errors="replace")
    # str.count counts non-overlapping occurrences left to right, as the
    # other SDKs do.
    n = text.count(old)
    if n == 0:
        raise _invalid(f"edit_file {path}: old_string was not found; read the file and copy the exact text, whitespace included")
    if n > 1 and not a["replace_all"]:
        raise _invalid(
            f"edit_file {path}: old_string appears {n} times; include more surrounding lines to make it unique, or set replace_all"
        )
    agent.fs.write_file(path, text.replace(old, new) if a["replace_all"] else text.replace(old, new, 1))
    return {"path": path, "replacements": n if a["replace_all"] else 1}


def _list(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    path = _agent_path(a["path"])
    entries: list[dict[str, Any]] = [
        {"name": e.name, "type": _type_name(e.stats.mode), "size": e.stats.size} for e in agent.fs.readdir_plus(path)
    ]
    # Byte order of the UTF-8 names, as the other SDKs sort.
    entries.sort(key=lambda e: e["name"].encode("utf-8"))
    return {"path": path, "entries": entries}


def _search(agent: AgentFS, a: dict[str, Any], sb: _Sandbox) -> dict[str, Any]:
    path = _agent_path(a["path"])
    # The engine's grep does the matching, so every SDK matches alike. -Z
    # ends each file name with NUL: names may hold ':'.
    flags = "-rnHZE" + ("i" if a["ignore_case"] else "")
    include = f" --include={shlex.quote(a['glob'])}" if "glob" in a else ""
    script = (
        f"grep {flags}{include} -e {shlex.quote(a['pattern'])} -- {shlex.quote(path)} | head -n {a['max_results'] + 1}"
    )
    r = agent.exec(script, limits=sb.limits, allow=sb.allow, deny=sb.deny, no_audit=True)
    # With the pipe the status is head's; grep's complaints come on stderr.
    msg = r.stderr.decode("utf-8", errors="replace").strip()
    if msg:
        code = errno.ENOENT if "no such file" in msg.lower() else errno.EINVAL
        raise OSError(code, f"search: {msg}", path)
    matches = []
    for rec in r.stdout.decode("utf-8", errors="replace").split("\n"):
        nul = rec.find("\0")
        colon = rec.find(":", nul + 1)
        if rec == "" or nul < 0 or colon < 0:
            continue
        matches.append({"path": rec[:nul], "line": int(rec[nul + 1 : colon]), "text": rec[colon + 1 :]})
    truncated = len(matches) > a["max_results"]
    return {"pattern": a["pattern"], "path": path, "matches": matches[: a["max_results"]], "truncated": truncated}


def _bash(agent: AgentFS, a: dict[str, Any], sb: _Sandbox) -> dict[str, Any]:
    # Logged once, as "bash" with its output: the engine's own "exec"
    # record is skipped.
    r = agent.exec(a["command"], dir=_agent_path(a["cwd"]), limits=sb.limits, allow=sb.allow, deny=sb.deny, no_audit=True)
    out: dict[str, Any] = {
        "exit_code": r.exit_code,
        "stdout": r.stdout.decode("utf-8", errors="replace"),
        "stderr": r.stderr.decode("utf-8", errors="replace"),
    }
    if r.limit:
        out["limit"] = r.limit
    return out


_MISSING = object()


def _kv_get(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    v = agent.kv.get(a["key"], _MISSING)
    found = v is not _MISSING
    return {"key": a["key"], "found": found, "value": v if found else None}


def _kv_set(agent: AgentFS, a: dict[str, Any], _: _Sandbox) -> dict[str, Any]:
    agent.kv.set(a["key"], a["value"])
    return {"key": a["key"]}


_RUN: dict[str, Callable[[AgentFS, dict[str, Any], _Sandbox], dict[str, Any]]] = {
    "read_file": _read_file,
    "write_file": _write_file,
    "edit_file": _edit_file,
    "list": _list,
    "search": _search,
    "bash": _bash,
    "kv_get": _kv_get,
    "kv_set": _kv_set,
}


def _log_result(name: str, result: dict[str, Any] | None) -> Any:
    """What the log keeps of a result: a file read is in the file already."""
    if name == "read_file" and result is not None:
        return {"path": result["path"], "size": result["size"]}
    return result


def _for_log(v: Any) -> Any:
    """Cuts long strings so a large output does not bloat the log."""
    if isinstance(v, str):
        return v if len(v) <= LOG_STRING_MAX else v[:LOG_STRING_MAX] + f"…[{len(v) - LOG_STRING_MAX} more characters]"
    if isinstance(v, list):
        return [_for_log(x) for x in v]
    if isinstance(v, dict):
        return {k: _for_log(x) for k, x in v.items()}
    return v
