// agent.tools: the tool-call log, as agentfs-sdk's ToolCalls (same method
// names, same object shapes: snake_case fields, times in Unix seconds).

import { ToolsServiceClient, ToolsServiceProcedures } from "./gen/agentfs/v1/clients_agentfs.js";
import type { Transport } from "./transport.js";
import { decodeGet, decodeId, decodeList, encodeGet, encodeList, encodeRecord } from "./toolwire.js";

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

function json(v: unknown): string | undefined {
  return v === undefined ? undefined : JSON.stringify(v);
}

export class ToolCalls {
  /** The generated client (filters by status and time, ascending order). */
  readonly client: ToolsServiceClient;

  // record, get and the listings encode and decode their messages
  // themselves (toolwire.ts); the rest go through the generated client.
  constructor(private readonly transport: Transport) {
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
    const req = encodeRecord(String(name), Math.floor(started_at), Math.floor(completed_at), json(parameters), json(result), error ? String(error) : undefined);
    return decodeId(await this.transport.call(ToolsServiceProcedures.toolRecord, [req]));
  }

  /** The call with this id, or undefined. */
  async get(id: number): Promise<ToolCall | undefined> {
    return decodeGet(await this.transport.call(ToolsServiceProcedures.toolGet, [encodeGet(Number(id))]));
  }

  /** Calls of one tool, newest first. */
  async getByName(name: string, limit?: number): Promise<ToolCall[]> {
    return decodeList(await this.transport.call(ToolsServiceProcedures.toolList, [encodeList(String(name ?? ""), 0, Number(limit ?? 0))]));
  }

  /** Calls started after since (Unix seconds, exclusive), newest first. */
  async getRecent(since: number, limit?: number): Promise<ToolCall[]> {
    return decodeList(await this.transport.call(ToolsServiceProcedures.toolList, [encodeList("", Math.floor(since) + 1, Number(limit ?? 0))]));
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
