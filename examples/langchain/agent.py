"""A data analyst agent with LangChain (create_agent, on LangGraph) whose
tools are an AgentFS agent (agentfs.langchain). It aggregates orders with
awk in the agent's sandbox, saves a CSV report and a kv summary; then
pandas reads the report straight out of the agent through agentfs://
(fsspec).

The chat model is scripted: it emits the tool calls a real model would and
reads each tool result before the next step, so LangChain's agent loop,
the tools and the database run for real with no network. Replace
ScriptedChatModel() with a real one (ChatOpenAI(model="gpt-5"), ...) to
drive it with a model.

    python agent.py [DB]       (default .agentfs/analyst.db)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

import pandas as pd
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agentfs import AgentFS
from agentfs.langchain import langchain_tools

ORDERS = """region,product,amount
north,widget,120
south,widget,80
north,gadget,200
east,widget,50
south,gadget,40
east,gadget,150
north,widget,30
"""


class ScriptedChatModel(BaseChatModel):
    """Decides each step from the conversation so far, as a model would."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        # A real model gets the tool schemas here; the script knows them.
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.next_step(messages))])

    def next_step(self, messages: list[BaseMessage]) -> AIMessage:
        results = [m for m in messages if isinstance(m, ToolMessage)]
        step = len(results)

        def call(name: str, args: dict[str, Any]) -> AIMessage:
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{step}", "type": "tool_call"}])

        if step == 0:
            return call("list", {"path": "/data"})
        if step == 1:
            return call(
                "bash",
                {
                    "command": "awk -F, 'NR > 1 { s[$1] += $3 } END { for (r in s) print r \",\" s[r] }' orders.csv | sort -t, -k2 -nr",
                    "cwd": "/data",
                },
            )
        if step == 2:
            out = json.loads(results[-1].content)
            if out["exit_code"] != 0:
                return AIMessage(content=f"The aggregation failed: {out['stderr']}")
            # The model turns the tool's output into the report.
            return call("write_file", {"path": "/reports/revenue_by_region.csv", "content": "region,revenue\n" + out["stdout"]})
        if step == 3:
            bash = json.loads(results[1].content)
            top = bash["stdout"].splitlines()[0].split(",")
            return call("kv_set", {"key": "report:revenue", "value": {"path": "/reports/revenue_by_region.csv", "top_region": top[0], "top_revenue": int(top[1])}})
        return AIMessage(content="Saved /reports/revenue_by_region.csv; the top region is in kv report:revenue.")


def main(db: str) -> None:
    with AgentFS.open(path=db) as agent_fs:
        agent_fs.fs.write_file("/data/orders.csv", ORDERS)
        graph = create_agent(
            ScriptedChatModel(),
            langchain_tools(agent_fs),
            system_prompt="You are a data analyst. Work on the files in /data and save reports under /reports.",
        )
        state = graph.invoke({"messages": [{"role": "user", "content": "Total revenue per region, as a CSV report."}]})
        print("answer:", state["messages"][-1].content)
        print("summary:", agent_fs.kv.get("report:revenue"))
        print("\ntimeline (oldest first):")
        for c in reversed(agent_fs.tools.get_recent(0)):
            print(f"  #{c.id} {c.name:<10} {c.status:<7} {json.dumps(c.parameters)[:90]}")

    # pandas reads the agent's output through fsspec (agentfs:// URLs).
    df = pd.read_csv("agentfs://analyst/reports/revenue_by_region.csv", storage_options={"path": db})
    print("\nreport read by pandas:\n" + df.to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".agentfs/analyst.db")
