// AgentFS.open: an agent (one database) through the engine, over stdio (a
// child `agentfs serve --stdio`, the default) or HTTP (`agentfs serve
// http`), with agentfs-sdk 0.6.4's API: agent.fs, agent.kv, agent.tools,
// close().

import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { AgentServiceClient, SandboxServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import type { InfoResponse } from "./gen/agentfs/v1/agent_pb.js";
import { chooseEngine, type EngineMode } from "./engine.js";
import { kindError } from "./errors.js";
import { Filesystem } from "./fs.js";
import { HttpTransport } from "./http.js";
import { KvStore } from "./kv.js";
import { StdioTransport } from "./stdio.js";
import { Sessions, type Session, type SessionOptions } from "./session.js";
import { Sandbox, type EffectivePolicy, type ExecOptions, type ExecResult, type Process, type Shell, type SpawnOptions } from "./sandbox.js";
import type { ProcessInfo } from "./gen/agentfs/v1/process_pb.js";
import { ToolCalls } from "./tools.js";
import type { Transport } from "./transport.js";
import { loadWasm, type WasmEngine } from "./wasm.js";
import { mountSandbox, type MountSandboxOptions, type SandboxMount } from "./mount.js";
import { fs, randomUUID } from "./nodelazy.js";

export interface AgentFSOptions {
  /**
   * Agent id. Over stdio: the database .agentfs/ID.db under the working
   * directory (unless path is given). Over HTTP: the agent on the server.
   */
  id?: string;
  /** Database file (stdio). With neither id nor path: a temporary database, deleted on close. */
  path?: string;
  /** Path of the agentfs binary (default: AGENTFS_BIN, the engine package @agentfs-sdk/<platform>, then PATH); implies transport "process". */
  engine?: string;
  /**
   * Where the engine runs (local databases): "inprocess" loads it into this
   * process as a Node addon (the default when the engine package has one,
   * linux-x64, and no engine binary is named: calls cost microseconds);
   * "process" starts it as a child process (`agentfs serve --stdio`), which
   * isolates it from this process; "wasm" runs the WebAssembly engine in
   * this process (any platform; the default, said once on stderr, when no
   * native engine is installed). Default: AGENTFS_TRANSPORT, then as described.
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
  /** Path of agentfs.wasm (transport "wasm"; default AGENTFS_WASM, then the bundled one). */
  wasm?: string;
  /**
   * Transport "wasm": the bytes of an AgentFS database file to start from
   * (instead of reading path); save them back with exportDatabase().
   */
  data?: Uint8Array;
  /**
   * Encryption at rest (README, "Encryption at rest"): the key as hex or
   * bytes (16 or 32 bytes, as the cipher needs). It reaches the engine in
   * the handshake only, never its arguments or environment. Every
   * transport encrypts (wasm too: the file it saves is encrypted as the
   * CLI's, and opens there with the same key).
   */
  encryptionKey?: string | Uint8Array;
  /**
   * The same as Turso's agentfs-sdk (after 0.6.4) spells it: a hex key
   * and a cipher. encryptionKey/cipher win when both are given.
   */
  encryption?: { hexKey: string; cipher: string };
  /** Cipher of a new encrypted database (default aegis256; an existing file names its own). */
  cipher?: "aes128gcm" | "aes256gcm" | "aegis128l" | "aegis128x2" | "aegis128x4" | "aegis256" | "aegis256x2" | "aegis256x4";
  /**
   * Sync remote (docs/SYNC.md): a database that does not exist yet is
   * bootstrapped from this URL (`agentfs serve sync`, or Turso's sync
   * protocol); an existing one must be synced with it already. Then
   * pull(), push(), sync() and stats() reach it.
   */
  syncRemoteUrl?: string;
  /** Bearer token of the sync remote (default: the engine's TURSO_DB_AUTH_TOKEN). */
  syncToken?: string;
  /**
   * Partial sync (docs/SYNC.md; `agentfs init --sync-partial-*`): a
   * database bootstrapped from syncRemoteUrl receives only the first this
   * many bytes of the remote; the pages it lacks are fetched when read.
   * Used only when the database is bootstrapped.
   */
  syncPartialBootstrapLength?: number;
  /** Partial sync: bootstrap only the pages the server reads to run this SQL query (instead of a length). */
  syncPartialBootstrapQuery?: string;
  /** Partial sync: absent pages are fetched in aligned segments of this many bytes (default 131072). */
  syncPartialSegmentSize?: number;
  /** Partial sync: with a fetched interior b-tree page, also fetch the pages it points to. */
  syncPartialPrefetch?: boolean;
}

/** What a pull did. */
export interface SyncPullResult {
  /** The remote's revision the agent is now at (opaque). */
  revision: string;
  /** The remote had changes since the last pull. */
  changed: boolean;
  /** Rows of the remote applied here. */
  applied: number;
  /** Rows of the remote not applied: this side changed the same thing (its version wins). */
  kept: number;
}

/** What a push did. */
export interface SyncPushResult {
  /** Rows sent (0: nothing to push). */
  rows: number;
  revision: string;
}

/** The sync state, with the field names of Turso's sync statistics. */
export interface SyncStats {
  cdcOperations: number;
  mainWalSize: number;
  revertWalSize: number;
  /** Unix seconds; null when it never happened. */
  lastPullUnixTime: number | null;
  lastPushUnixTime: number | null;
  revision: string;
  networkSentBytes: number;
  networkReceivedBytes: number;
  remoteUrl: string;
}

/** The key as bytes: hex text (as the CLI's --key) or bytes. */
function keyBytes(key: string | Uint8Array | undefined): Uint8Array {
  if (key === undefined) return new Uint8Array();
  if (typeof key !== "string") return Uint8Array.from(key);
  const hex = key.trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(hex)) {
    // Never repeat the key: only its length.
    throw kindError("INVALID_ARGUMENT", `encryptionKey is not hexadecimal (${hex.length} characters): give 32 or 64 hex digits, or the key's bytes`);
  }
  return Uint8Array.from(Buffer.from(hex, "hex"));
}

/** The handshake's encryption and sync fields of options. */
function openExtras(options: AgentFSOptions) {
  return {
    encryptionKey: keyBytes(options.encryptionKey ?? options.encryption?.hexKey),
    cipher: options.cipher ?? options.encryption?.cipher ?? "",
    syncRemoteUrl: options.syncRemoteUrl ?? "",
    syncToken: options.syncToken ?? "",
    syncPartialBootstrapLength: BigInt(options.syncPartialBootstrapLength ?? 0),
    syncPartialBootstrapQuery: options.syncPartialBootstrapQuery ?? "",
    syncPartialSegmentSize: BigInt(options.syncPartialSegmentSize ?? 0),
    syncPartialPrefetch: options.syncPartialPrefetch ?? false,
  };
}

function pullResult(r: { revision: string; changed: boolean; applied: bigint; kept: bigint } | undefined): SyncPullResult {
  return { revision: r?.revision ?? "", changed: r?.changed ?? false, applied: Number(r?.applied ?? 0n), kept: Number(r?.kept ?? 0n) };
}

/** Where a database of the WASM engine comes from and goes back to. */
interface WasmDatabase {
  engine: WasmEngine;
  /** The engine's name for it. */
  name: string;
  /** The file it is saved to at close (path or id), if any. */
  file?: string;
  readOnly: boolean;
}

export class AgentFS {
  readonly fs: Filesystem;
  readonly kv: KvStore;
  readonly tools: ToolCalls;
  private readonly sandbox: Sandbox;
  /** Agent sessions stored in this agent (see openSession). */
  readonly sessions: Sessions;
  /** Generated clients of the services without an idiomatic wrapper. */
  readonly rpc: { agent: AgentServiceClient; sandbox: SandboxServiceClient };

  protected constructor(
    /** The transport (StdioTransport or HttpTransport). */
    readonly transport: Transport,
    /** The engine's description of the database when it was opened. */
    readonly info: InfoResponse | undefined,
    private readonly wasmDb?: WasmDatabase,
  ) {
    this.fs = new Filesystem(transport, Number(info?.chunkSize || 4096));
    this.kv = new KvStore(transport);
    this.tools = new ToolCalls(transport);
    this.sandbox = new Sandbox(transport);
    this.sessions = new Sessions(transport);
    this.rpc = { agent: new AgentServiceClient(transport), sandbox: new SandboxServiceClient(transport) };
  }

  /**
   * Opens an agent. `AgentFS.open({ id })`, `AgentFS.open({ path })`,
   * `AgentFS.open()` (a temporary database) or, over HTTP,
   * `AgentFS.open({ id, url, token })`.
   */
  static async open(options: AgentFSOptions = {}): Promise<AgentFS> {
    if (options.url) return AgentFS.openHttp(options);
    // Also the WebAssembly engine when this platform has no native one.
    const { addon, engine } = chooseEngine(options.transport, options.engine);
    if (!addon && !engine) return AgentFS.openWasm(options);
    const t = await StdioTransport.start({
      addon,
      engine,
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
        ...openExtras(options),
      },
    });
    const agent = new AgentFS(t, t.info);
    const x = openExtras(options);
    if (x.encryptionKey.length > 0) agent.mountEnv = { AGENTFS_KEY: Buffer.from(x.encryptionKey).toString("hex"), AGENTFS_CIPHER: x.cipher };
    return agent;
  }

  /**
   * An agent over a transport the caller made: a StdioTransport started
   * with options of its own, an HttpTransport with its own token or
   * headers, or any Transport. agentfs-sdk 0.6.4's openWith takes a Turso
   * database object instead; here the engine owns the database, and the
   * transport is the handle to it (see README, "Differences").
   */
  static async openWith(transport: Transport): Promise<AgentFS> {
    const info = await new AgentServiceClient(transport).info({});
    return new AgentFS(transport, info);
  }

  private static async openHttp(options: AgentFSOptions): Promise<AgentFS> {
    if (!options.id) throw kindError("INVALID_ARGUMENT", "AgentFS.open({ url }) needs the agent id");
    if (options.syncPartialBootstrapLength || options.syncPartialBootstrapQuery || options.syncPartialSegmentSize || options.syncPartialPrefetch) {
      throw kindError("INVALID_ARGUMENT", "AgentFS.open: syncPartial* options are for a local database bootstrapped from syncRemoteUrl, not an HTTP agent");
    }
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
   * The WASM engine keeps the database in memory. With a path or an id,
   * the file's bytes (with the committed transactions of its -wal) are
   * read at open and written back (replacing the file at once, the -wal
   * and -shm removed) at close, unless readOnly; with neither, the
   * database is temporary, or starts from `data`.
   */
  private static async openWasm(options: AgentFSOptions): Promise<AgentFS> {
    const engine = await loadWasm(options.wasm);
    const cwd = options.cwd ?? process.cwd();
    const file = options.path ? resolve(cwd, options.path) : options.id ? resolve(cwd, ".agentfs", `${options.id}.db`) : undefined;
    const name = file ?? `/memory/${randomUUID()}.db`;
    if (options.data) {
      engine.load(name, Uint8Array.from(options.data));
    } else if (file && fs().existsSync(file)) {
      // Committed transactions may still be in the -wal file only (another
      // engine has the file open, or closed it without a checkpoint).
      const wal = fs().existsSync(`${file}-wal`) ? await readFile(`${file}-wal`) : undefined;
      engine.load(name, await readFile(file), wal?.length ? wal : undefined);
    }
    let t: StdioTransport;
    try {
      t = await StdioTransport.start({
        addon: engine,
        open: {
          path: name,
          noCreate: options.noCreate ?? false,
          readOnly: options.readOnly ?? false,
          chunkSize: BigInt(options.chunkSize ?? 0),
          // A key encrypts the in-memory database (the file saved at
          // close is encrypted as the native engine's); the WASM engine
          // refuses a sync remote (ENOTSUP).
          ...openExtras(options),
        },
      });
    } catch (e) {
      engine.drop(name);
      throw e;
    }
    return new AgentFS(t, t.info, { engine, name, file, readOnly: options.readOnly ?? false });
  }

  /**
   * The bytes of the database file: what the native engine, the other SDKs
   * and agentfs-sdk 0.6.4 open. Transport "wasm" only; the other
   * transports work on the file itself (agent.info.path).
   */
  async exportDatabase(): Promise<Uint8Array> {
    if (!this.wasmDb) {
      throw kindError("FAILED_PRECONDITION", "exportDatabase: only the wasm transport keeps the database in memory; read the database file (copy it after close, or use `agentfs snapshot`)");
    }
    return this.wasmDb.engine.save(this.wasmDb.name);
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

  /**
   * The effective policy of these exec options, with every default filled
   * in (agentfs.v1.EffectivePolicy, as `agentfs sh --print-policy` prints
   * it): what a script may read, write, run and reach. Nothing runs; a
   * policy exec would refuse rejects the same way (EINVAL).
   */
  policy(options?: Omit<ExecOptions, "signal" | "stdin">): Promise<EffectivePolicy> {
    return this.sandbox.policy(options);
  }

  /**
   * Brings the sync remote's changes into the agent; rows both sides
   * changed keep this side's version (docs/SYNC.md, "Conflicts"). The
   * agent must have been opened with syncRemoteUrl or created with
   * `agentfs init ID --sync-remote-url URL` (else FAILED_PRECONDITION).
   */
  async pull(): Promise<SyncPullResult> {
    return pullResult(await this.rpc.agent.syncPull({}));
  }

  /** Sends the agent's changes to the sync remote (after merging the remote's). */
  async push(): Promise<SyncPushResult> {
    const r = await this.rpc.agent.syncPush({});
    return { rows: Number(r.rows), revision: r.revision };
  }

  /** Pulls, then pushes. */
  async sync(): Promise<{ pull: SyncPullResult; push: SyncPushResult }> {
    const r = await this.rpc.agent.sync({});
    return { pull: pullResult(r.pull), push: { rows: Number(r.push?.rows ?? 0n), revision: r.push?.revision ?? "" } };
  }

  /** The sync state (as `agentfs sync ID stats` prints it). */
  async stats(): Promise<SyncStats> {
    const r = await this.rpc.agent.syncStats({});
    return {
      cdcOperations: Number(r.cdcOperations),
      mainWalSize: Number(r.mainWalSize),
      revertWalSize: Number(r.revertWalSize),
      lastPullUnixTime: r.lastPullUnixTime ? Number(r.lastPullUnixTime) : null,
      lastPushUnixTime: r.lastPushUnixTime ? Number(r.lastPushUnixTime) : null,
      revision: r.revision,
      networkSentBytes: Number(r.networkSentBytes),
      networkReceivedBytes: Number(r.networkReceivedBytes),
      remoteUrl: r.remoteUrl,
    };
  }

  /**
   * Starts a script as a process and resolves with its handle: stream its
   * output (`for await (const c of proc)`), `write()` its stdin,
   * `kill(signal)`, `wait()` for the exit code. Over stdio the process
   * ends with this connection; over HTTP with its lease.
   */
  spawn(script: string, options?: SpawnOptions): Promise<Process> {
    return this.sandbox.spawn(script, options);
  }

  /**
   * Opens a persistent shell: `const sh = await agent.shell();
   * await sh.run("cd /x; export A=1"); (await sh.run("pwd; echo $A")).stdout`.
   */
  shell(options?: Omit<ExecOptions, "signal" | "stdin">): Promise<Shell> {
    return this.sandbox.shell(options);
  }

  /** The running processes (and the ended ones whose exit is not read yet). */
  processes(): Promise<ProcessInfo[]> {
    return this.sandbox.processes();
  }

  /**
   * Opens (resumes or creates) an agent session: a conversation with a
   * model whose tool calls run on this agent inside the engine.
   * `for await (const ev of session.prompt("...")) ...` streams its
   * events. See docs/SESSIONS.md.
   */
  openSession(options?: SessionOptions): Promise<Session> {
    return this.sessions.open(options);
  }

  /** The environment of a mount server (the encryption key of the database, if any). */
  private mountEnv: Record<string, string> = {};
  private readonly mounts = new Set<SandboxMount>();

  /**
   * Mounts the agent's filesystem on a host directory (FUSE), so that real
   * Linux programs (git, compilers, tar) run over the agent's files: the
   * escape hatch from the in-process sandbox, as agentOS's mountSandbox.
   * The mount is served by the engine's CLI (`agentfs mount`) on the same
   * database file; after unmount() (or close()) everything the programs
   * wrote is in the agent. While it is mounted, write through the mount:
   * the kernel caches what it read for a few seconds, so changes made
   * meanwhile through agent.fs may show in the mount late. Needs a local
   * agent (not HTTP or the WebAssembly engine) and Linux with /dev/fuse.
   */
  async mountSandbox(opts: MountSandboxOptions = {}): Promise<SandboxMount> {
    if (!(this.transport instanceof StdioTransport) || this.wasmDb || !this.info?.path) {
      throw kindError("UNIMPLEMENTED", "mountSandbox: needs an agent whose database is a file of this machine (not HTTP, not the WebAssembly engine); for a server's agent, run `agentfs mount` on the server");
    }
    const m = await mountSandbox(this.info.path, opts, this.mountEnv);
    const tracked: SandboxMount = {
      path: m.path,
      unmount: async () => {
        await m.unmount();
        this.mounts.delete(tracked);
      },
    };
    this.mounts.add(tracked);
    return tracked;
  }

  /** Kills a process of processes() by pid (default SIGKILL). */
  async kill(pid: number, signal = 9): Promise<void> {
    await this.sandbox.procs.killProcess({ pid: BigInt(pid), signal });
  }

  /**
   * Closes the agent: over stdio the engine checkpoints the database and
   * exits; the WASM engine writes a database opened from a file back to it.
   */
  async close(): Promise<void> {
    // Mounts end before the engine closes the database.
    const errs: unknown[] = [];
    for (const m of [...this.mounts]) await m.unmount().catch((e) => errs.push(e));
    await this.transport.close();
    if (errs.length > 0) throw errs[0];
    const w = this.wasmDb;
    if (!w) return;
    try {
      if (w.file && !w.readOnly) {
        const bytes = w.engine.save(w.name);
        await mkdir(dirname(w.file), { recursive: true });
        const tmp = join(dirname(w.file), `.${randomUUID()}.tmp`);
        // On disk before it replaces the file: a crash leaves the old file
        // or the new one, never a short one. A failure leaves the old one.
        const fh = await open(tmp, "w");
        try {
          await fh.writeFile(bytes);
          await fh.sync();
        } catch (e) {
          await fh.close();
          await rm(tmp, { force: true });
          throw e;
        }
        await fh.close();
        await rename(tmp, w.file);
        // The old log and its index describe the file that was replaced:
        // SQLite would apply them to the new one.
        await rm(`${w.file}-wal`, { force: true });
        await rm(`${w.file}-shm`, { force: true });
      }
    } finally {
      w.engine.drop(w.name);
    }
  }
}
