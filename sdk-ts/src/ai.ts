// agentfs-sdk/ai: the ready-made agent tools as Vercel AI SDK tools
// (`tool()` with the JSON Schemas of spec/tools/agent-tools.json), for
// generateText / streamText / Agent. `ai` (v5 or v6) is an optional peer
// dependency: only this entry point imports it.
//
//   import { aiSdkTools } from "agentfs-sdk/ai";
//   const r = await generateText({ model, tools: aiSdkTools(agent), stopWhen: stepCountIs(10), prompt });

import { jsonSchema, tool, type Tool } from "ai";
import { agentTools, type AgentFS, type AgentToolName, type AgentToolsOptions } from "./index.js";

/**
 * The agent tools by name, ready for `generateText({ tools })`. Each call
 * runs against the agent and is recorded in its tool-call log; a failure
 * (EINVAL, ENOENT, ...) reaches the model as the tool's error.
 */
export function aiSdkTools(agent: AgentFS, options?: AgentToolsOptions): Partial<Record<AgentToolName, Tool>> {
  const out: Partial<Record<AgentToolName, Tool>> = {};
  for (const t of agentTools(agent, options)) {
    out[t.name] = tool({
      description: t.description,
      inputSchema: jsonSchema<any>(t.inputSchema as any),
      execute: (input: any) => t.execute(input),
    });
  }
  return out;
}
