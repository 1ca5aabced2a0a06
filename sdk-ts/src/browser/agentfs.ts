// AgentFS.open in a browser (a page or a worker): the engine runs as
// WebAssembly in this page or worker, and the database lives in the Origin
// Private File System, so it survives a reload and a browser restart. In a
// dedicated worker SQLite reads and writes the OPFS file in place through
// synchronous access handles (only the pages a call changes are written,
// with a rollback journal beside the file: see core/store/pagefile_js.go).
// A page has no synchronous handles: there the database is in the
// engine's memory and the whole file is saved after every call that may
// change it. The API is the Node one: agent.fs, agent.kv, agent.tools,
// exec, exportDatabase, close.

import { fromBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { AgentServiceClient, SandboxServiceClient } from "../gen/agentfs/v1/clients_agentfs.js";
import type { InfoResponse } from "../gen/agentfs/v1/agent_pb.js";
import { kindError } from "../errors.js";
import { Filesystem } from "../fs.js";
import { HttpTransport } from "../http.js";
import { KvStore } from "../kv.js";
import { Sandbox, type ExecOptions, type ExecResult } from "../sandbox.js";
import { StdioTransport } from "../stdio.js";
import { ToolCalls } from "../tools.js";
import { encode, type Transport } from "../transport.js";
import { lockAgent, openSyncFiles, readOpfs, removeOpfs, syncHandles, writeOpfs, type SyncFiles } from "./opfs.js";
import { loadWasm, type BrowserEngine } from "./wasm.js";

export interface AgentFSOptions {
  /** Agent id: the database is the OPFS file .agentfs/ID.db of this origin (unless path is given). */
  id?: string;
  /** OPFS path of the database file (e.g. "agents/a.db"). With neither id nor path: a temporary database. */
  path?: string;
  /** Fail with ENOENT instead of creating a missing database. */
  noCreate?: boolean;
  /** Never write back; other read-only opens of the same agent may run at once. */
  readOnly?: boolean;
  /** Chunk size of a new database (default 4096). */
  chunkSize?: number;
  /** URL of agentfs.wasm (default: wasm/agentfs.wasm of this package, beside dist/). */
  wasm?: string | URL;
  /** The bytes of an AgentFS database file to start from; with id or path they replace what OPFS holds (saved at open). */
  data?: Uint8Array;
  /**
   * When another tab or worker of this origin has the agent open: "fail"
   * (default) rejects with EBUSY, "wait" waits until it is closed there.
   */
  lock?: "fail" | "wait";
  /** Base URL of `agentfs serve http`: selects the HTTP transport (no WebAssembly, no OPFS). */
  url?: string;
  /** Bearer token for the HTTP server. */
  token?: string;
  /**
   * Encryption at rest: the key as hex or bytes (16 or 32 bytes, as the
   * cipher needs). The database in OPFS (and its rollback journal) and the
   * bytes of exportDatabase() are then encrypted in the format of the CLI's
   * --key/--cipher (Turso's), and open there with the same key.
   */
  encryptionKey?: string | Uint8Array;
  /** Cipher of a new encrypted database (default aegis256, or aegis128l for a 16-byte key; an existing file names its own). */
  cipher?: "aes128gcm" | "aes256gcm" | "aegis128l" | "aegis128x2" | "aegis128x4" | "aegis256" | "aegis256x2" | "aegis256x4";
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
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

// Calls that never change the database: every other call is followed by a
// save to OPFS before it resolves.
const READ_ONLY = new Set(
  [
    "FilesystemService/Access", "FilesystemService/Fstat", "FilesystemService/GetXattr", "FilesystemService/ListXattr",
    "FilesystemService/Lstat", "FilesystemService/Pread", "FilesystemService/ReadFile", "FilesystemService/Readdir",
    "FilesystemService/ReaddirPlus", "FilesystemService/Readlink", "FilesystemService/Stat", "FilesystemService/Statfs",
    "FilesystemService/Walk", "KvService/KvGet", "KvService/KvList", "ToolsService/ToolGet", "ToolsService/ToolList",
    "ToolsService/ToolStats", "AgentService/Info", "AgentService/ListSnapshots", "AgentService/Diff", "AgentService/Fsck",
    "AgentService/Query",
  ].map((m) => `/agentfs.v1.${m}`),
);

/**
 * The stdio transport of the WebAssembly engine, with each changing call
 * saved to OPFS before its promise resolves: a resolved write is on disk.
 * Saves of calls that finish together are joined into one.
 */
class PersistingTransport implements Transport {
  private saved: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(
    readonly inner: StdioTransport,
    private readonly save: () => Promise<void>,
  ) {}

  unary<I extends DescMessage, O extends DescMessage>(procedure: string, input: I, request: MessageInitShape<I>, output: O): Promise<MessageShape<O>> {
    return this.unaryParts(procedure, [encode(input, request)], output);
  }

  unaryParts<O extends DescMessage>(procedure: string, payload: readonly Uint8Array[], output: O, signal?: AbortSignal): Promise<MessageShape<O>> {
    return this.call(procedure, payload, signal).then((bytes) => fromBinary(output, bytes));
  }

  async call(procedure: string, payload: readonly Uint8Array[], signal?: AbortSignal): Promise<Uint8Array> {
    if (READ_ONLY.has(procedure)) return this.inner.call(procedure, payload, signal);
    let r: Uint8Array;
    try {
      r = await this.inner.call(procedure, payload, signal);
    } catch (e) {
      // Also after a failure: a sandbox script that failed half-way has
      // changed what it changed. The call's error is the one to report.
      await this.persist().catch(() => {});
      throw e;
    }
    await this.persist();
    return r;
  }

  /** A save that starts after every call finished so far. */
  persist(): Promise<void> {
    if (this.queued) return this.queued;
    const q = this.saved.then(() => {
      this.queued = undefined;
      return this.save();
    });
    this.queued = q;
    this.saved = q.catch(() => {});
    return q;
  }

  /** Sandbox bindings: functions of this page a script runs as commands. */
  serve(procedure: string, handler: ((payload: Uint8Array) => Promise<Uint8Array>) | undefined): void {
    this.inner.serve(procedure, handler);
  }

  get inProcess(): boolean {
    return true;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Where a browser agent's database is kept. */
interface WasmDatabase {
  engine: BrowserEngine;
  name: string;
  /** The OPFS file it is saved to (whole, from the engine's memory), if any. */
  file?: string;
  /** The OPFS handles it is written through in place (in a dedicated worker), if any. */
  files?: SyncFiles;
  readOnly: boolean;
  release: () => void;
}

let temporaries = 0;

export class AgentFS {
  readonly fs: Filesystem;
  readonly kv: KvStore;
  readonly tools: ToolCalls;
  private readonly sandbox: Sandbox;
  readonly rpc: { agent: AgentServiceClient; sandbox: SandboxServiceClient };
  private closed: Promise<void> | undefined;

  protected constructor(
    readonly transport: Transport,
    readonly info: InfoResponse | undefined,
    private readonly wasmDb?: WasmDatabase,
  ) {
    this.fs = new Filesystem(transport, Number(info?.chunkSize || 4096));
    this.kv = new KvStore(transport);
    this.tools = new ToolCalls(transport);
    this.sandbox = new Sandbox(transport);
    this.rpc = { agent: new AgentServiceClient(transport), sandbox: new SandboxServiceClient(transport) };
  }

  /**
   * Opens an agent: `AgentFS.open({ id })` (kept in OPFS as .agentfs/ID.db),
   * `AgentFS.open({ path })` (an OPFS path), `AgentFS.open()` (temporary,
   * in memory), `AgentFS.open({ data })` (from a database file's bytes), or
   * over HTTP `AgentFS.open({ id, url, token })`.
   */
  static async open(options: AgentFSOptions = {}): Promise<AgentFS> {
    if (options.url) return AgentFS.openHttp(options);
    const file = options.path ? options.path.replace(/^\/+/, "") : options.id ? `.agentfs/${options.id}.db` : undefined;
    if (options.id !== undefined && !options.path && (options.id === "" || /[/\\]|^\.\.?$/.test(options.id))) {
      throw kindError("INVALID_ARGUMENT", `agent id ${JSON.stringify(options.id)}: use letters, digits, "-", "_" or "." (no "/")`);
    }
    const readOnly = options.readOnly ?? false;
    const release = file ? await lockAgent(file, readOnly, options.lock === "wait") : () => {};
    let engine: BrowserEngine | undefined;
    let files: SyncFiles | undefined;
    let fresh = false; // the OPFS files were made by this open
    const name = `/browser/${file ?? `memory-${++temporaries}-${Date.now()}`}`;
    try {
      engine = await loadWasm(options.wasm);
      const key = keyBytes(options.encryptionKey);
      const cipher = options.cipher ?? "";
      const open = { path: name, noCreate: options.noCreate ?? false, readOnly, chunkSize: BigInt(options.chunkSize ?? 0), encryptionKey: key, cipher };
      if (file && !readOnly && syncHandles()) {
        // In place: SQLite opens the OPFS file itself (a hot journal left
        // by a worker that died mid-commit is rolled back right here).
        files = await openSyncFiles(file);
        fresh = files.db.getSize() === 0 && files.journal.getSize() === 0;
        if (options.data) {
          files.journal.truncate(0);
          files.journal.flush();
          files.db.truncate(0);
          files.db.write(options.data, { at: 0 });
          files.db.flush();
        }
        engine.attachFiles(name, files.db, files.journal);
        const t = await StdioTransport.start({ addon: engine, open });
        return new AgentFS(t, t.info, { engine, name, files, readOnly, release });
      }
      let bytes = options.data ? Uint8Array.from(options.data) : file ? await readOpfs(file) : undefined;
      // A worker writing in place died mid-commit: its journal holds the
      // pages to put back (a page reads files whole, so it plays the
      // journal back itself before it uses or saves the bytes).
      const journal = file && !options.data ? await readOpfs(`${file}-journal`) : undefined;
      if (bytes && journal) bytes = engine.rollback(bytes, journal, key, cipher);
      if (bytes) engine.load(name, bytes);
      const t = await StdioTransport.start({ addon: engine, open });
      const e = engine;
      const save = file && !readOnly ? () => writeOpfs(file, e.save(name)) : async () => {};
      const transport = new PersistingTransport(t, save);
      // A new database (or one from data, or rolled back) is on disk from
      // the start, and then a journal (which belonged to the old file) is
      // no more.
      if (file && !readOnly && (!bytes || options.data || journal)) await transport.persist();
      if (file && !readOnly) await removeOpfs(`${file}-journal`);
      return new AgentFS(transport, t.info, { engine, name, file, readOnly, release });
    } catch (e) {
      if (files) {
        engine?.detachFiles(name);
        files.close();
        // A failed open (noCreate of a missing agent) leaves no empty files behind.
        if (fresh && file) await Promise.all([removeOpfs(file), removeOpfs(`${file}-journal`)]).catch(() => {});
      }
      engine?.drop(name);
      release();
      throw e;
    }
  }

  /**
   * An agent over a transport the caller made (an HttpTransport with its
   * own token, a StdioTransport over a loaded engine), as under Node. Its
   * database is not saved to OPFS: that is open({ id })'s job.
   */
  static async openWith(transport: Transport): Promise<AgentFS> {
    const info = await new AgentServiceClient(transport).info({});
    return new AgentFS(transport, info);
  }

  private static async openHttp(options: AgentFSOptions): Promise<AgentFS> {
    if (!options.id) throw kindError("INVALID_ARGUMENT", "AgentFS.open({ url }) needs the agent id");
    const t = new HttpTransport({ url: options.url!, token: options.token, agent: options.id });
    let info: InfoResponse | undefined;
    if (options.noCreate) {
      info = await new AgentServiceClient(t).info({});
    } else {
      const server = new AgentServiceClient(new HttpTransport({ url: options.url!, token: options.token }));
      info = (await server.createAgent({ id: options.id, existOk: true, chunkSize: BigInt(options.chunkSize ?? 0) })).info;
    }
    return new AgentFS(t, info);
  }

  /** The bytes of the database file: what the CLI, the other SDKs and agentfs-sdk 0.6.4 open. */
  async exportDatabase(): Promise<Uint8Array> {
    if (!this.wasmDb) throw kindError("FAILED_PRECONDITION", "exportDatabase: an agent over HTTP lives on the server; use `agentfs snapshot` there");
    if (this.closed) throw kindError("UNAVAILABLE", "exportDatabase: the agent is closed");
    return this.wasmDb.engine.save(this.wasmDb.name);
  }

  /** Runs a shell script in the engine's in-process sandbox over this agent's files. */
  exec(script: string, options?: ExecOptions): Promise<ExecResult> {
    return this.sandbox.exec(script, options);
  }

  /** Closes the agent: its last state is in OPFS, its memory freed and its lock released. */
  close(): Promise<void> {
    this.closed ??= this.doClose();
    return this.closed;
  }

  private async doClose(): Promise<void> {
    const w = this.wasmDb;
    try {
      await this.transport.close();
      if (w?.file && !w.readOnly) await (this.transport as PersistingTransport).persist();
    } finally {
      if (w) {
        if (w.files) {
          w.engine.detachFiles(w.name);
          w.files.close();
        }
        w.engine.drop(w.name);
        w.release();
      }
    }
  }
}
