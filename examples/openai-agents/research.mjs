// A research assistant with the OpenAI Agents SDK (@openai/agents) that
// saves its notes and sources in an AgentFS agent, through the ready-made
// tools as FunctionTools (agentfs-sdk/openai-agents). The model comes from
// a scripted ModelProvider: it reads the conversation (the tool results)
// and returns the function calls a real model would, so the Agents SDK's
// runner, the tools and the database run for real with no network. Drop
// `modelProvider` (and set OPENAI_API_KEY) to use OpenAI's models.
//
//   node research.mjs [DB]      (default .agentfs/research.db)

import { Agent, Runner, Usage, setTracingDisabled } from "@openai/agents";
import { AgentFS } from "agentfs-sdk";
import { openaiAgentsTools } from "agentfs-sdk/openai-agents";

setTracingDisabled(true); // no trace export: nothing leaves this machine

const SOURCES = [
  { title: "AgentFS specification", url: "https://github.com/tursodatabase/agentfs/blob/main/SPEC.md" },
  { title: "SQLite WAL mode", url: "https://sqlite.org/wal.html" },
];

/** The output of the tool calls so far (parsed JSON when it is). */
function toolResults(input) {
  if (typeof input === "string") return [];
  return input
    .filter((i) => i.type === "function_call_result")
    .map((i) => {
      const text = typeof i.output === "string" ? i.output : (i.output?.text ?? "");
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    });
}

class ScriptedModel {
  async getResponse(request) {
    const seen = toolResults(request.input);
    const step = seen.length;
    const call = (name, args) => ({
      usage: new Usage(),
      output: [{ type: "function_call", callId: `call_${step}`, name, arguments: JSON.stringify(args), status: "completed" }],
    });
    switch (step) {
      case 0:
        return call("kv_get", { key: "research:topic" });
      case 1:
        return call("write_file", {
          path: "/research/sources.md",
          content: "# Sources\n\n" + SOURCES.map((s) => `- [${s.title}](${s.url})`).join("\n") + "\n",
        });
      case 2:
        return call("write_file", {
          path: "/research/notes.md",
          content:
            "# How does AgentFS store an agent's state?\n\n" +
            "- One SQLite file: files (inodes, chunks), a key-value store and a tool-call log.\n" +
            "- WAL mode lets readers run beside the one writer.\n",
        });
      case 3:
        return call("search", { pattern: "SQLite", path: "/research" });
      case 4:
        return call("kv_set", { key: "research:topic", value: { question: "How does AgentFS store state?", notes: "/research/notes.md", sources: SOURCES.length, mentions: seen[3].matches.length } });
      default:
        return {
          usage: new Usage(),
          output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Saved notes to /research/notes.md and 2 sources to /research/sources.md." }] }],
        };
    }
  }

  async *getStreamedResponse() {
    throw new Error("the scripted model does not stream");
  }
}

const db = process.argv[2] ?? ".agentfs/research.db";
const fsAgent = await AgentFS.open({ path: db });
try {
  const assistant = new Agent({
    name: "research assistant",
    instructions: "Research the question; save notes and sources as Markdown under /research; keep a summary in kv research:topic.",
    tools: openaiAgentsTools(fsAgent),
  });
  const runner = new Runner({ modelProvider: { getModel: () => new ScriptedModel() }, tracingDisabled: true });
  const result = await runner.run(assistant, "How does AgentFS store an agent's state? Keep notes and sources.");
  console.log("answer:", result.finalOutput);
  console.log("summary:", JSON.stringify(await fsAgent.kv.get("research:topic")));
  console.log("timeline:");
  for (const c of (await fsAgent.tools.getRecent(0)).reverse()) console.log(`  #${c.id} ${c.name} ${c.status}`);
} finally {
  await fsAgent.close();
}
