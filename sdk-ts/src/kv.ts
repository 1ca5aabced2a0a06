// agent.kv: JSON values under string keys, as agentfs-sdk's KvStore.

import { KvServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import type { Transport } from "./transport.js";

export class KvStore {
  /** The generated client (entries with timestamps, list limits). */
  readonly client: KvServiceClient;

  constructor(transport: Transport) {
    this.client = new KvServiceClient(transport);
  }

  /** Stores value (anything JSON.stringify accepts) under key. */
  async set(key: string, value: unknown): Promise<void> {
    const valueJson = JSON.stringify(value);
    if (valueJson === undefined) throw new TypeError(`kv.set(${JSON.stringify(key)}): value ${String(value)} is not JSON-serializable`);
    await this.client.kvSet({ key, valueJson });
  }

  /** The value under key, or undefined. */
  async get<T = any>(key: string): Promise<T | undefined> {
    const r = await this.client.kvGet({ key });
    return r.found ? (JSON.parse(r.valueJson) as T) : undefined;
  }

  /** Entries whose key starts with prefix, in key order. */
  async list(prefix: string): Promise<{ key: string; value: any }[]> {
    const r = await this.client.kvList({ prefix });
    return r.entries.map((e) => ({ key: e.key, value: JSON.parse(e.valueJson) }));
  }

  /** Removes key (no error when it does not exist). */
  async delete(key: string): Promise<void> {
    await this.client.kvDelete({ key });
  }
}
