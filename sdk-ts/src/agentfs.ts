// AgentFS.open: an agent (one database) through the engine, over stdio (a
// child `agentfs serve --stdio`, the default) or HTTP (`agentfs serve
// http`), with agentfs-sdk 0.6.4's API: agent.fs, agent.kv, agent.tools,
// close().

import { resolve } from "node:path";
import { AgentServiceClient, SandboxServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import type { InfoResponse } from "./gen/agentfs/v1/agent_pb.js";
import { chooseEngine, type EngineMode } from "./engine.js";
import { kindError } from "./errors.js";
import { Filesystem } from "./fs.js";
import { HttpTransport } from "./http.js";
import { KvStore } from "./kv.js";
import { StdioTransport } from "./stdio.js";
import { Sandbox, type ExecOptions, type ExecResult } from "./sandbox.js";
import { ToolCalls } from "./tools.js";
import type { Transport } from "./transport.js";

export interface AgentFSOptions {
  /**
   * Agent id. Over stdio: the database .agentfs/ID.db under the working
   * directory (unless path is given). Over HTTP: the agent on the server.
   */
  id?: string;
  /** Database file (stdio). With neither id nor path: a temporary database, deleted on close. */
  path?: string;
  /** Path of the agentfs binary (default: AGENTFS_BIN, the bundled engine, then PATH); implies transport "process". */
  engine?: string;
  /**
   * Where the engine runs (local databases): "inprocess" loads it into this
   * process as a Node addon (the default when the package bundles one and
   * no engine binary is named: calls cost microseconds); "process" starts
   * it as a child process (`agentfs serve --stdio`), which isolates it from
   * this process. Default: AGENTFS_TRANSPORT, then as described.
   */
  transport?: EngineMode;
  /** Working directory of the engine (default: this process's). */
  cwd?: string;
  /** Fail with ENOENT instead of creating a missing database. */
  noCreate?: boolean;
  readOnly?: boolean;
  /** Chunk size of a new database (default 4096). */
  chunkSize?: number;
  /** "normal" (default) or "full" (fsync each commit). */
  durability?: "normal" | "full";
  /** Base URL of `agentfs serve http`: selects the HTTP transport. */
  url?: string;
  /** Bearer token for the HTTP server. */
  token?: string;
}

export class AgentFS {
  readonly fs: Filesystem;
  readonly kv: KvStore;
  readonly tools: ToolCalls;
  private readonly sandbox: Sandbox;
  /** Generated clients of the services without an idiomatic wrapper. */
  readonly rpc: { agent: AgentServiceClient; sandbox: SandboxServiceClient };

  protected constructor(
    /** The transport (StdioTransport or HttpTransport). */
    readonly transport: Transport,
    /** The engine's description of the database when it was opened. */
    readonly info: InfoResponse | undefined,
  ) {
    this.fs = new Filesystem(transport);
    this.kv = new KvStore(transport);
    this.tools = new ToolCalls(transport);
    this.sandbox = new Sandbox(transport);
    this.rpc = { agent: new AgentServiceClient(transport), sandbox: new SandboxServiceClient(transport) };
  }

  /**
   * Opens an agent. `AgentFS.open({ id })`, `AgentFS.open({ path })`,
   * `AgentFS.open()` (a temporary database) or, over HTTP,
   * `AgentFS.open({ id, url, token })`.
   */
  static async open(options: AgentFSOptions = {}): Promise<AgentFS> {
    if (options.url) return AgentFS.openHttp(options);
    const t = await StdioTransport.start({
      ...chooseEngine(options.transport, options.engine),
      cwd: options.cwd,
      open: {
        // A path wins over an id, as in agentfs-sdk; relative paths are
        // resolved here so they mean the same as for this process.
        id: options.path ? "" : (options.id ?? ""),
        path: options.path ? resolve(options.cwd ?? process.cwd(), options.path) : "",
        noCreate: options.noCreate ?? false,
        readOnly: options.readOnly ?? false,
        chunkSize: BigInt(options.chunkSize ?? 0),
        durability: options.durability ?? "",
        // Where an id resolves: the engine's working directory when it is
        // a child process, this directory when it runs in this process.
        dir: options.cwd ? resolve(options.cwd) : "",
      },
    });
    return new AgentFS(t, t.info);
  }

  private static async openHttp(options: AgentFSOptions): Promise<AgentFS> {
    if (!options.id) throw kindError("INVALID_ARGUMENT", "AgentFS.open({ url }) needs the agent id");
    const t = new HttpTransport({ url: options.url!, token: options.token, agent: options.id });
    let info: InfoResponse | undefined;
    if (options.noCreate) {
      info = await new AgentServiceClient(t).info({});
    } else {
      // CreateAgent is a server-wide call: no Agentfs-Agent header.
      const server = new AgentServiceClient(new HttpTransport({ url: options.url!, token: options.token }));
      info = (await server.createAgent({ id: options.id, existOk: true, chunkSize: BigInt(options.chunkSize ?? 0) })).info;
    }
    return new AgentFS(t, info);
  }

  /**
   * Runs a shell script in the engine's in-process sandbox over this
   * agent's files (no host process starts). `bindings` are functions of
   * this process the script runs as commands (`name --flag value`; stdio
   * only): `agent.exec("lookup --id 7 | jq .name", { bindings: { lookup: (a) => db.get(a.id) } })`.
   */
  exec(script: string, options?: ExecOptions): Promise<ExecResult> {
    return this.sandbox.exec(script, options);
  }

  /** Closes the agent: over stdio the engine checkpoints the database and exits. */
  async close(): Promise<void> {
    await this.transport.close();
  }
}
