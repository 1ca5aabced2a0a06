"""The ready-made agent tools as OpenAI Agents SDK function tools
(`agents.FunctionTool`), for `agents.Agent(tools=...)`. Needs the
openai-agents package: `pip install agentfs[openai-agents]`.

    from agents import Agent, Runner
    from agentfs import AgentFS
    from agentfs.openai_agents import openai_agents_tools

    fs_agent = AgentFS.open(id="researcher")
    agent = Agent(name="researcher", instructions="...", tools=openai_agents_tools(fs_agent))
    result = await Runner.run(agent, "question")

Each call runs against the agent and is recorded in its tool-call log; the
tool's output is the result as JSON, and a failure (EINVAL, ENOENT, ...)
is returned as "<tool> failed: ..." so the model can correct itself. The
schemas have optional properties, so they are not strict. The calls are
made on the sync AgentFS from the event loop: each is short (one engine
round trip, or one sandbox script).
"""

from __future__ import annotations

import json
from typing import Any

from agents import FunctionTool

from ._sync import AgentFS
from .agent_tools import AgentTool, agent_tools

__all__ = ["openai_agents_tools"]


def openai_agents_tools(agent: AgentFS, **options: Any) -> list[FunctionTool]:
    """The agent tools as FunctionTools; options are agent_tools' (only,
    read_only, limits, allow, deny, no_log)."""
    return [_tool(t) for t in agent_tools(agent, **options)]


def _tool(t: AgentTool) -> FunctionTool:
    async def invoke(_ctx: Any, args_json: str) -> str:
        try:
            args = json.loads(args_json or "{}")
        except json.JSONDecodeError as e:
            return f"{t.name} failed: EINVAL: the arguments are not JSON: {e}"
        try:
            return json.dumps(t(args), ensure_ascii=False)
        except OSError as e:
            return f"{t.name} failed: {e}"

    return FunctionTool(
        name=t.name,
        description=t.description,
        params_json_schema=t.input_schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
