"""The ready-made agent tools as LangChain tools (StructuredTool, a
BaseTool), for LangChain agents (`langchain.agents.create_agent`) and
LangGraph's ToolNode. Needs langchain-core: `pip install agentfs[langchain]`.

    from langchain.agents import create_agent
    from agentfs import AgentFS
    from agentfs.langchain import langchain_tools

    agent_fs = AgentFS.open(id="analyst")
    graph = create_agent(model, langchain_tools(agent_fs))

Each call runs against the agent and is recorded in its tool-call log. The
tool's content is the result as JSON; a failure (EINVAL, ENOENT, ...)
becomes a ToolException whose message the model reads as the tool's
output, so the agent can correct itself.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import StructuredTool, ToolException

from ._sync import AgentFS
from .agent_tools import AgentTool, agent_tools

__all__ = ["langchain_tools"]


def langchain_tools(agent: AgentFS, **options: Any) -> list[StructuredTool]:
    """The agent tools as StructuredTools; options are agent_tools' (only,
    read_only, limits, allow, deny, no_log)."""
    return [_tool(t) for t in agent_tools(agent, **options)]


def _tool(t: AgentTool) -> StructuredTool:
    def run(**kwargs: Any) -> str:
        try:
            return json.dumps(t(kwargs), ensure_ascii=False)
        except OSError as e:
            raise ToolException(f"{t.name} failed: {e}") from e

    # args_schema as a JSON Schema dict: the model sees the spec's schema
    # as it is, and the tool validates the input itself.
    return StructuredTool(
        name=t.name,
        description=t.description,
        args_schema=t.input_schema,
        func=run,
        handle_tool_error=True,
    )
