// agentfs-sdk/openai-agents: the ready-made agent tools as OpenAI Agents
// SDK function tools (`tool()` of @openai/agents with the JSON Schemas of
// spec/tools/agent-tools.json). `@openai/agents` is an optional peer
// dependency: only this entry point imports it.
//
//   import { openaiAgentsTools } from "agentfs-sdk/openai-agents";
//   const agent = new Agent({ name: "researcher", tools: openaiAgentsTools(fsAgent) });

import { tool, type FunctionTool } from "@openai/agents";
import { agentTools, type AgentFS, type AgentToolsOptions } from "./index.js";

/**
 * The agent tools as FunctionTools. Their schemas have optional
 * properties, so they are not "strict" (OpenAI's strict mode wants every
 * property required). A failure reaches the model as the tool's output
 * (the Agents SDK's default error handler), and is in the tool-call log.
 */
export function openaiAgentsTools(agent: AgentFS, options?: AgentToolsOptions): FunctionTool<any, any, any>[] {
  return agentTools(agent, options).map((t) =>
    tool({
      name: t.name,
      description: t.description,
      parameters: t.inputSchema as any,
      strict: false,
      execute: async (input: any) => t.execute(typeof input === "string" ? JSON.parse(input) : input),
    }),
  );
}
