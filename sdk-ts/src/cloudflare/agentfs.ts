// agentfs-sdk/cloudflare: an agent inside a Cloudflare Durable Object,
// its database the object's own SQLite storage (ctx.storage.sql) in the
// AgentFS 0.4 tables, so it survives eviction and restarts and is what
// the object's other SQL sees. The engine is the Workers build of the Go
// engine (agentfs-workers.wasm: no SQLite inside, no `node` command),
// one instance per isolate, shared by the agents of its objects.
//
// As agentfs-sdk 0.6.4's: `AgentFS.create(ctx.storage)` is synchronous
// and the agent is a FileSystem (writeFile, readFile, readdir, stat, ...);
// beside that it has the Node API's agent.fs, agent.kv, agent.tools and
// exec (the in-process shell).

import { fromBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { AgentServiceClient, SandboxServiceClient } from "../gen/agentfs/v1/clients_agentfs.js";
import { kindError } from "../errors.js";
import { Filesystem } from "../fs.js";
import { KvStore } from "../kv.js";
import { Sandbox, type ExecOptions, type ExecResult } from "../sandbox.js";
import { StdioTransport } from "../stdio.js";
import { ToolCalls } from "../tools.js";
import { encode, type Transport } from "../transport.js";
import { loadWorkersEngine, type WorkersEngine } from "./engine.js";
import { sqlHost, type CloudflareStorage } from "./host.js";

export interface CreateOptions {
  /** Chunk size of a new database (default 4096); an existing database keeps its own. */
  chunkSize?: number;
  /** The compiled engine (a WebAssembly.Module of agentfs-workers.wasm), if not the package's. */
  wasm?: object;
}

/**
 * A transport that waits for the engine: create() is synchronous, as in
 * agentfs-sdk 0.6.4, and the engine's start is not. Calls made before it
 * is up wait for it; a failed start fails each of them.
 */
class PendingTransport implements Transport {
  private inner: StdioTransport | undefined;
  private readonly served: [string, ((payload: Uint8Array) => Promise<Uint8Array>) | undefined][] = [];

  constructor(readonly ready: Promise<StdioTransport>) {
    ready.then(
      (t) => {
        this.inner = t;
        for (const [p, h] of this.served.splice(0)) t.serve(p, h);
      },
      () => {},
    );
  }

  unary<I extends DescMessage, O extends DescMessage>(procedure: string, input: I, request: MessageInitShape<I>, output: O): Promise<MessageShape<O>> {
    return this.unaryParts(procedure, [encode(input, request)], output);
  }

  async unaryParts<O extends DescMessage>(procedure: string, payload: readonly Uint8Array[], output: O, signal?: AbortSignal): Promise<MessageShape<O>> {
    return fromBinary(output, await this.call(procedure, payload, signal));
  }

  call(procedure: string, payload: readonly Uint8Array[], signal?: AbortSignal): Promise<Uint8Array> {
    if (this.inner) return this.inner.call(procedure, payload, signal);
    return this.ready.then((t) => t.call(procedure, payload, signal));
  }

  /** Sandbox bindings: functions of this object a script runs as commands. */
  serve(procedure: string, handler: ((payload: Uint8Array) => Promise<Uint8Array>) | undefined): void {
    if (this.inner) this.inner.serve(procedure, handler);
    else this.served.push([procedure, handler]);
  }

  get inProcess(): boolean {
    return true;
  }

  async close(): Promise<void> {
    const t = await this.ready.catch(() => undefined);
    await t?.close();
  }
}

let agents = 0;

/**
 * An agent in a Durable Object's SQLite storage.
 *
 * ```ts
 * import { AgentFS } from "agentfs-sdk/cloudflare";
 * export class Agent extends DurableObject {
 *   fs = AgentFS.create(this.ctx.storage);
 *   async fetch() { await this.fs.writeFile("/hello.txt", "hi"); ... }
 * }
 * ```
 */
export class AgentFS {
  readonly fs: Filesystem;
  readonly kv: KvStore;
  readonly tools: ToolCalls;
  readonly rpc: { agent: AgentServiceClient; sandbox: SandboxServiceClient };
  private readonly sandbox: Sandbox;
  private closed: Promise<void> | undefined;

  private constructor(
    private readonly transport: PendingTransport,
    private readonly engine: Promise<WorkersEngine>,
    private readonly name: string,
    chunkSize: number,
  ) {
    this.fs = new Filesystem(transport, chunkSize);
    this.kv = new KvStore(transport);
    this.tools = new ToolCalls(transport);
    this.sandbox = new Sandbox(transport);
    this.rpc = { agent: new AgentServiceClient(transport), sandbox: new SandboxServiceClient(transport) };
  }

  /**
   * The agent of this Durable Object: its tables in storage.sql are made
   * at the first call if the storage has none (an object used before by
   * agentfs-sdk 0.6.4's integration keeps its files: same tables).
   */
  static create(storage: CloudflareStorage, options: CreateOptions = {}): AgentFS {
    if (!storage || typeof storage.transactionSync !== "function" || !storage.sql) {
      throw kindError("INVALID_ARGUMENT", "AgentFS.create(storage): pass the Durable Object's ctx.storage (a SQLite-backed class: new_sqlite_classes in wrangler.toml)");
    }
    const name = `/do/${++agents}`;
    const engine = loadWorkersEngine(options.wasm);
    const ready = engine.then((e) => {
      const host = sqlHost(storage);
      e.attach(name, host);
      // Calls that may write run inside the host's call transaction
      // (SqlHost.inCall); reads need none.
      const addon: WorkersEngine = { ...e, call: (h, m, p) => (mayWrite(m) ? host.inCall(() => e.call(h, m, p)) : e.call(h, m, p)) };
      return StdioTransport.start({ addon, open: { path: name, chunkSize: BigInt(options.chunkSize ?? 0) } }).catch((err) => {
        e.detach(name);
        throw err;
      });
    });
    return new AgentFS(new PendingTransport(ready), engine, name, chunkSizeOf(storage, options.chunkSize));
  }

  /** Bytes per stored chunk of file data. */
  getChunkSize(): number {
    return this.fs.getChunkSize();
  }

  /** Runs a shell script in the engine's in-process sandbox over this agent's files. */
  exec(script: string, options?: ExecOptions): Promise<ExecResult> {
    return this.sandbox.exec(script, options);
  }

  /** Stops this agent's engine connection (the data is already in storage). */
  close(): Promise<void> {
    this.closed ??= this.transport.close().finally(async () => {
      (await this.engine.catch(() => undefined))?.detach(this.name);
    });
    return this.closed;
  }

  // agentfs-sdk 0.6.4's cloudflare AgentFS is a FileSystem itself: the
  // same methods, here those of agent.fs.
  readonly stat: Filesystem["stat"] = (path) => this.fs.stat(path);
  readonly lstat: Filesystem["lstat"] = (path) => this.fs.lstat(path);
  readonly readFile: Filesystem["readFile"] = ((path: string, options?: Parameters<Filesystem["readFile"]>[1]) =>
    this.fs.readFile(path, options as never)) as Filesystem["readFile"];
  readonly writeFile: Filesystem["writeFile"] = (...a) => this.fs.writeFile(...a);
  readonly appendFile: Filesystem["appendFile"] = (...a) => this.fs.appendFile(...a);
  readonly readdir: Filesystem["readdir"] = (path) => this.fs.readdir(path);
  readonly readdirPlus: Filesystem["readdirPlus"] = (path) => this.fs.readdirPlus(path);
  readonly mkdir: Filesystem["mkdir"] = (...a) => this.fs.mkdir(...a);
  readonly rmdir: Filesystem["rmdir"] = (path) => this.fs.rmdir(path);
  readonly unlink: Filesystem["unlink"] = (path) => this.fs.unlink(path);
  readonly deleteFile: Filesystem["deleteFile"] = (path) => this.fs.deleteFile(path);
  readonly rm: Filesystem["rm"] = (...a) => this.fs.rm(...a);
  readonly rename: Filesystem["rename"] = (a, b) => this.fs.rename(a, b);
  readonly copyFile: Filesystem["copyFile"] = (a, b) => this.fs.copyFile(a, b);
  readonly symlink: Filesystem["symlink"] = (a, b) => this.fs.symlink(a, b);
  readonly readlink: Filesystem["readlink"] = (path) => this.fs.readlink(path);
  readonly access: Filesystem["access"] = (...a) => this.fs.access(...a);
  readonly exists: Filesystem["exists"] = (path) => this.fs.exists(path);
  readonly statfs: Filesystem["statfs"] = () => this.fs.statfs();
  readonly open: Filesystem["open"] = (...a) => this.fs.open(...a);
}

// Methods that only read (by name: ReadFile, Stat, Readdir, KvService/Get, ...).
const READS = /^(Read|Pread|Stat|Lstat|Fstat|Readdir|Readlink|Access|Exists|Statfs|Get|List|Info)/;
const mayWriteOf = new WeakMap<Uint8Array, boolean>();
const methodName = new TextDecoder();

/** Whether the call of method (the procedure's bytes, one array per procedure) may write. */
function mayWrite(method: Uint8Array): boolean {
  let w = mayWriteOf.get(method);
  if (w === undefined) {
    const name = methodName.decode(method);
    w = !READS.test(name.slice(name.lastIndexOf("/") + 1));
    mayWriteOf.set(method, w);
  }
  return w;
}

/** The chunk size of the database in storage, or of the one create() will make. */
function chunkSizeOf(storage: CloudflareStorage, asked?: number): number {
  try {
    const row = storage.sql.exec<{ value: string }>("SELECT value FROM fs_config WHERE key = 'chunk_size'").toArray()[0];
    if (row) return Number(row.value);
  } catch {
    // No fs_config yet: a new database.
  }
  return asked || 4096;
}
