// agent.tools: the tool-call log, as agentfs-sdk's ToolCalls (same method
// names, same object shapes: snake_case fields, times in Unix seconds).

import { ToolsServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import { ToolStatus, type ToolCall as ProtoToolCall } from "./gen/agentfs/v1/tools_pb.js";
import type { Transport } from "./transport.js";

export interface ToolCall {
  id: number;
  name: string;
  parameters?: any;
  result?: any;
  error?: string;
  status: "pending" | "success" | "error";
  started_at: number;
  completed_at?: number;
  duration_ms?: number;
}

export interface ToolCallStats {
  name: string;
  total_calls: number;
  successful: number;
  failed: number;
  avg_duration_ms: number;
}

const statusNames: Record<number, ToolCall["status"]> = {
  [ToolStatus.PENDING]: "pending",
  [ToolStatus.SUCCESS]: "success",
  [ToolStatus.ERROR]: "error",
};

function json(v: unknown): string | undefined {
  return v === undefined ? undefined : JSON.stringify(v);
}

function toToolCall(c: ProtoToolCall): ToolCall {
  const out: ToolCall = {
    id: Number(c.id),
    name: c.name,
    parameters: c.parametersJson !== undefined ? JSON.parse(c.parametersJson) : undefined,
    result: c.resultJson !== undefined ? JSON.parse(c.resultJson) : undefined,
    error: c.error,
    status: statusNames[c.status] ?? "pending",
    started_at: Number(c.startedAt),
    completed_at: c.completedAt !== undefined ? Number(c.completedAt) : undefined,
    duration_ms: c.durationMs !== undefined ? Number(c.durationMs) : undefined,
  };
  return out;
}

export class ToolCalls {
  /** The generated client (filters by status and time, ascending order). */
  readonly client: ToolsServiceClient;

  constructor(transport: Transport) {
    this.client = new ToolsServiceClient(transport);
  }

  /** Records a pending call started now; returns its id. */
  async start(name: string, parameters?: any): Promise<number> {
    const r = await this.client.toolStart({ name, parametersJson: json(parameters) });
    return Number(r.id);
  }

  /** Marks a pending call successful. */
  async success(id: number, result?: any): Promise<void> {
    await this.client.toolSuccess({ id: BigInt(id), resultJson: json(result) });
  }

  /** Marks a pending call failed. */
  async error(id: number, error: string): Promise<void> {
    await this.client.toolFail({ id: BigInt(id), error: String(error) });
  }

  /** Records a finished call (times in Unix seconds); returns its id. */
  async record(name: string, started_at: number, completed_at: number, parameters?: any, result?: any, error?: string): Promise<number> {
    const r = await this.client.toolRecord({
      name,
      startedAt: BigInt(Math.floor(started_at)),
      completedAt: BigInt(Math.floor(completed_at)),
      parametersJson: json(parameters),
      resultJson: json(result),
      error: error ? String(error) : undefined,
    });
    return Number(r.id);
  }

  /** The call with this id, or undefined. */
  async get(id: number): Promise<ToolCall | undefined> {
    const r = await this.client.toolGet({ id: BigInt(id) });
    return r.found && r.call ? toToolCall(r.call) : undefined;
  }

  /** Calls of one tool, newest first. */
  async getByName(name: string, limit?: number): Promise<ToolCall[]> {
    const r = await this.client.toolList({ name, limit: BigInt(limit ?? 0) });
    return r.calls.map(toToolCall);
  }

  /** Calls started after since (Unix seconds, exclusive), newest first. */
  async getRecent(since: number, limit?: number): Promise<ToolCall[]> {
    const r = await this.client.toolList({ since: BigInt(Math.floor(since) + 1), limit: BigInt(limit ?? 0) });
    return r.calls.map(toToolCall);
  }

  /**
   * Per-tool statistics over finished calls (pending ones are not
   * counted), most called first, as agentfs-sdk.
   */
  async getStats(): Promise<ToolCallStats[]> {
    const r = await this.client.toolStats({});
    return r.stats
      .map((s) => ({
        name: s.name,
        total_calls: Number(s.totalCalls - s.pending),
        successful: Number(s.successful),
        failed: Number(s.failed),
        avg_duration_ms: s.avgDurationMs,
      }))
      .filter((s) => s.total_calls > 0)
      .sort((a, b) => b.total_calls - a.total_calls || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
