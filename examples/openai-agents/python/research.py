"""The research assistant of ../research.mjs in Python: the OpenAI Agents
SDK (openai-agents) with AgentFS's tools as FunctionTools
(agentfs.openai_agents), and a scripted model provider that reads the
function call outputs and returns the next call, as a model would. No
network: tracing is off. Drop run_config's model_provider (and set
OPENAI_API_KEY) to use OpenAI's models.

    python research.py [DB]      (default .agentfs/research.db)
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agents import Agent, Model, ModelProvider, ModelResponse, RunConfig, Runner, Usage, set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from agentfs import AgentFS
from agentfs.openai_agents import openai_agents_tools

set_tracing_disabled(True)

SOURCES = [
    ("AgentFS specification", "https://github.com/tursodatabase/agentfs/blob/main/SPEC.md"),
    ("SQLite WAL mode", "https://sqlite.org/wal.html"),
]


def tool_outputs(items: Any) -> list[Any]:
    """The function call outputs seen so far, parsed when JSON."""
    if isinstance(items, str):
        return []
    out = []
    for i in items:
        item = i if isinstance(i, dict) else i.model_dump()
        if item.get("type") == "function_call_output":
            try:
                out.append(json.loads(item["output"]))
            except (TypeError, ValueError):
                out.append(item["output"])
    return out


class ScriptedModel(Model):
    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        seen = tool_outputs(input)
        step = len(seen)

        def call(name: str, arguments: dict[str, Any]) -> ModelResponse:
            item = ResponseFunctionToolCall(
                type="function_call", id=f"fc_{step}", call_id=f"call_{step}", name=name,
                arguments=json.dumps(arguments), status="completed",
            )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        if step == 0:
            return call("write_file", {"path": "/research/sources.md", "content": "# Sources\n\n" + "".join(f"- [{t}]({u})\n" for t, u in SOURCES)})
        if step == 1:
            return call("write_file", {"path": "/research/notes.md", "content": "# Notes\n\n- One SQLite file holds files, kv and the tool-call log.\n"})
        if step == 2:
            return call("search", {"pattern": "SQLite", "path": "/research"})
        if step == 3:
            return call("kv_set", {"key": "research:topic", "value": {"sources": len(SOURCES), "mentions": len(seen[2]["matches"])}})
        text = ResponseOutputText(type="output_text", text="Saved notes and sources under /research.", annotations=[])
        msg = ResponseOutputMessage(type="message", id="msg_final", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[msg], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model does not stream")


class ScriptedProvider(ModelProvider):
    def get_model(self, model_name: str | None) -> Model:
        return ScriptedModel()


async def main(db: str) -> None:
    with AgentFS.open(path=db) as fs_agent:
        assistant = Agent(
            name="research assistant",
            instructions="Research the question; save notes and sources under /research; a summary in kv research:topic.",
            tools=openai_agents_tools(fs_agent),
        )
        result = await Runner.run(
            assistant,
            "How does AgentFS store an agent's state?",
            run_config=RunConfig(model_provider=ScriptedProvider(), tracing_disabled=True),
        )
        print("answer:", result.final_output)
        print("summary:", fs_agent.kv.get("research:topic"))
        for c in reversed(fs_agent.tools.get_recent(0)):
            print(f"  #{c.id} {c.name} {c.status}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else ".agentfs/research.db"))
