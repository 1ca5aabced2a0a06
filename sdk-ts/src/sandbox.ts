// agent.exec: shell scripts run by the engine's in-process sandbox (75
// POSIX utilities over the agent's files; no host process starts). Bindings
// are host functions the script runs as commands: the engine calls back
// into this process (HostService.CallBinding) over the same stdio
// connection while the script runs.

import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { SandboxServiceProcedures } from "./gen/agentfs/v1/clients_agentfs.js";
import { ProcessServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import { StartProcessRequestSchema, StreamProcessRequestSchema, StreamProcessResponseSchema, type ProcessInfo, type StreamProcessResponse } from "./gen/agentfs/v1/process_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { CallBindingRequestSchema, CallBindingResponseSchema, ExecRequestSchema, ExecResponseSchema, PolicyRequestSchema, PolicyResponseSchema, type EffectivePolicy } from "./gen/agentfs/v1/sandbox_pb.js";
import { kindError } from "./errors.js";
import { encode, type Transport } from "./transport.js";

/** A host function a script runs as a command: `name --flag value`. */
export interface Binding {
  description?: string;
  /** JSON schema of the arguments (an object with properties). */
  schema?: object;
  /** Called with the parsed arguments; the result is printed as JSON. A throw makes the command fail. */
  fn(args: any): unknown | Promise<unknown>;
}

export interface ExecOptions {
  /** Working directory in the agent filesystem (default "/"). */
  dir?: string;
  stdin?: string | Uint8Array;
  env?: Record<string, string>;
  /** Host functions the script may call, by command name (stdio only). */
  bindings?: Record<string, Binding | ((args: any) => unknown | Promise<unknown>)>;
  /** Limits profile: "normal" (default), "hardened" or "none". */
  limits?: "normal" | "hardened" | "none";
  /** Commands that may run (default: all, unless defaultDeny) and that may not (builtins included). */
  allow?: string[];
  deny?: string[];
  /**
   * Path prefixes of the agent filesystem the script may read and write
   * (writable ones are readable too). Absent: everything, unless
   * defaultDeny; `readable` alone makes nothing writable.
   */
  readable?: string[];
  writable?: string[];
  /** Allow-lists only: nothing is readable, writable or runnable (but the shell's builtins) unless listed. */
  defaultDeny?: boolean;
  /** Network rules: curl reaches only these URL prefixes (none: no network). */
  net?: NetRule[];
  /** Single limits replacing the profile's (0 or absent: the profile's); the server's ceiling applies. */
  limitValues?: LimitValues;
  /** Aborting stops the script in the engine and rejects with an AbortError. */
  signal?: AbortSignal;
  /** Skip the engine's "exec" record in the tool-call log (the caller records the call itself). */
  noAudit?: boolean;
}

/** Lets curl reach URLs under `prefix`; `headers` are added at the boundary (secrets stay in this process). */
export interface NetRule {
  /** An http:// or https:// URL prefix, e.g. "https://api.example.com/v1/". */
  prefix: string;
  /** Allowed methods (default: all). */
  methods?: string[];
  headers?: Record<string, string>;
  /** Let the prefix reach loopback, private and link-local addresses. */
  allowPrivate?: boolean;
}

/** Limits of one script (agentfs.v1.SandboxLimits). */
export interface LimitValues {
  maxCommands?: number; maxSteps?: number; maxCallDepth?: number; wallTimeMs?: number;
  maxOutputBytes?: number; maxStreamBytes?: number; maxFsWriteBytes?: number; maxResponseBytes?: number;
  netTimeoutMs?: number; maxMemoryBytes?: number; maxBackground?: number;
}

/** The effective policy (agentfs.v1.EffectivePolicy): what `agentfs sh --print-policy` prints, in every SDK's policy(). */
export type { EffectivePolicy };

/** The policy fields of an ExecRequest, from the options: one mapping for exec, spawn, shell and policy. */
function policyFields(opts: Omit<ExecOptions, "signal" | "stdin">) {
  const lv = opts.limitValues;
  return {
    env: opts.env ?? {}, limits: opts.limits ?? "",
    allow: opts.allow ?? [], deny: opts.deny ?? [],
    readable: opts.readable ?? [], writable: opts.writable ?? [],
    restrictPaths: opts.readable !== undefined && opts.writable !== undefined,
    defaultDeny: opts.defaultDeny ?? false,
    net: (opts.net ?? []).map((r) => ({ prefix: r.prefix, methods: r.methods ?? [], headers: r.headers ?? {}, allowPrivate: r.allowPrivate ?? false })),
    limitValues: lv === undefined ? undefined : Object.fromEntries(Object.entries(lv).map(([k, v]) => [k, BigInt(v ?? 0)])),
    noAudit: opts.noAudit ?? false,
  };
}

function bindingSpecsOf(specs: { name: string; binding: Binding }[]) {
  return specs.map(({ name, binding }) => ({ name, description: binding.description ?? "", schemaJson: binding.schema ? JSON.stringify(binding.schema) : "" }));
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Set when a limit stopped the script. */
  limit?: string;
}

/** Transports that can answer the engine's calls (stdio). */
export interface HostServing {
  serve(procedure: string, handler: ((payload: Uint8Array) => Promise<Uint8Array>) | undefined): void;
}

const CALL_BINDING = "/agentfs.v1.HostService/CallBinding";

export interface SpawnOptions extends Omit<ExecOptions, "signal" | "stdin"> {
  /** The first bytes of stdin. */
  stdin?: string | Uint8Array;
  /** Keep stdin open after `stdin` for `write()` until `closeStdin()` (default: EOF after `stdin`). */
  keepStdinOpen?: boolean;
  /** Kill the process (SIGKILL) after this many milliseconds. */
  timeoutMs?: number;
  /** HTTP: no lease (the process outlives this client until it ends or is killed). */
  detach?: boolean;
  /** HTTP: kill the process when this client neither reads nor writes it for this long (default 30000). */
  leaseMs?: number;
  /** Aborting kills the process (SIGKILL). */
  signal?: AbortSignal;
}

/** A piece of a process's output, in the order the script wrote it. */
export interface OutputChunk {
  stream: "stdout" | "stderr";
  data: Uint8Array;
}

export interface ProcessResult extends ExecResult {
  /** The signal of kill() that stopped the process (0: none). */
  signal: number;
}

const STREAM_PROCESS = "/agentfs.v1.ProcessService/StreamProcess";

type ReadResult = { chunks: OutputChunk[]; done: boolean };

function toChunks(cs: { stream: number; data: Uint8Array }[]): OutputChunk[] {
  return cs.map((c) => ({ stream: c.stream === 2 ? "stderr" as const : "stdout" as const, data: c.data }));
}

/**
 * OutputFeed holds what a StreamProcess stream delivered and Process.read
 * has not taken yet: output chunks, then the exit (or the stream's error).
 */
class OutputFeed {
  /** Bytes queued past which push() asks its transport to stop reading. */
  static readonly highWater = 64 * 1024;
  private queue: OutputChunk[] = [];
  private queued = 0;
  private end?: { exit: StreamProcessResponse } | { error: Error };
  private wake?: () => void;
  private drained?: () => void;

  /**
   * push queues a message. Past highWater it returns a promise that
   * resolves once read() took the queue: a transport that awaits it (HTTP)
   * stops reading the stream, so the engine's bounded buffer fills and the
   * script waits, as a pipe makes a writer wait. Transports that multiplex
   * one connection (stdio) cannot stop and ignore it.
   */
  push(m: StreamProcessResponse): Promise<void> | void {
    const chunks = toChunks(m.chunks);
    this.queue.push(...chunks);
    for (const c of chunks) this.queued += c.data.byteLength;
    if (m.exited) this.end = { exit: m };
    this.wake?.();
    if (this.queued >= OutputFeed.highWater && !this.end) return new Promise<void>((r) => (this.drained = r));
  }

  fail(error: Error): void {
    if (!this.end) this.end = { error };
    this.wake?.();
  }

  /** The chunks queued (waiting for some), and the exit once all were taken. */
  async next(): Promise<{ chunks: OutputChunk[]; exit?: StreamProcessResponse }> {
    while (this.queue.length === 0 && !this.end) await new Promise<void>((r) => (this.wake = r));
    this.wake = undefined;
    const chunks = this.queue;
    this.queue = [];
    this.queued = 0;
    this.drained?.();
    this.drained = undefined;
    if (this.end && "error" in this.end) {
      if (chunks.length > 0) return { chunks };
      throw this.end.error;
    }
    return { chunks, exit: this.end?.exit };
  }
}

/**
 * A script running in the engine (`agent.spawn`): its output streams as it
 * comes (`for await (const chunk of proc)`), its stdin is written while it
 * runs, and `wait()` resolves with the exit code and the output not yet
 * iterated. The process table is the engine's (ProcessService).
 */
export class Process implements AsyncIterable<OutputChunk> {
  private result?: ProcessResult;
  private reading?: Promise<{ chunks: OutputChunk[]; done: boolean }>;
  private readonly release: () => void;

  /**
   * feed is the process's server stream (StreamProcess) when the
   * transport streams; without one, read() long-polls ReadProcess.
   */
  constructor(private readonly rpc: ProcessServiceClient, readonly pid: number, release: () => void, signal?: AbortSignal, private readonly feed?: OutputFeed) {
    let released = false;
    this.release = () => { if (!released) { released = true; release(); } };
    signal?.addEventListener("abort", () => { this.kill(9).catch(() => {}); }, { once: true });
  }

  /** The next output (waits up to 30 s for some); done when the process ended and all was read. */
  async read(): Promise<{ chunks: OutputChunk[]; done: boolean }> {
    if (this.result) return { chunks: [], done: true };
    // One read in flight at a time keeps the chunks in order.
    while (this.reading) await this.reading.catch(() => {});
    this.reading = this.readOnce();
    try { return await this.reading; } finally { this.reading = undefined; }
  }

  private async readOnce(): Promise<ReadResult> {
    let chunks: OutputChunk[], r: { exited: boolean; exitCode: number; signal: number; limit: string };
    if (this.feed) {
      const n = await this.feed.next();
      chunks = n.chunks;
      r = n.exit ?? { exited: false, exitCode: 0, signal: 0, limit: "" };
    } else {
      const m = await this.rpc.readProcess({ pid: BigInt(this.pid), waitMs: 30000 });
      chunks = toChunks(m.chunks);
      r = m;
    }
    if (r.exited) {
      this.result = { exitCode: r.exitCode, signal: r.signal, stdout: "", stderr: "" };
      if (r.limit) this.result.limit = r.limit;
      this.release();
    }
    return { chunks, done: r.exited };
  }

  async *[Symbol.asyncIterator](): AsyncIterator<OutputChunk> {
    for (;;) {
      const { chunks, done } = await this.read();
      yield* chunks;
      if (done) return;
    }
  }

  /** Writes to the script's stdin (it must have been spawned with keepStdinOpen). */
  async write(data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await this.rpc.writeProcess({ pid: BigInt(this.pid), data: bytes });
  }

  /** The script reads end of file after what was written. */
  async closeStdin(): Promise<void> {
    await this.rpc.writeProcess({ pid: BigInt(this.pid), closeStdin: true });
  }

  /** Sends a POSIX signal (default SIGKILL, 9): the script stops and exits with 128+signal. */
  async kill(signal = 9): Promise<void> {
    if (this.result) return;
    try {
      await this.rpc.killProcess({ pid: BigInt(this.pid), signal });
    } catch (e) {
      // A streamed process that ended was reaped by its stream: the exit
      // is on its way to read(), there is nothing left to kill.
      if (this.feed && (e as { kind?: string }).kind === "NOT_FOUND") return;
      throw e;
    }
  }

  /** Waits for the end; stdout and stderr hold the output not iterated before. */
  async wait(): Promise<ProcessResult> {
    const dec = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    let stdout = "", stderr = "";
    for await (const c of this) {
      if (c.stream === "stdout") stdout += dec.stdout.decode(c.data, { stream: true });
      else stderr += dec.stderr.decode(c.data, { stream: true });
    }
    const r = this.result!;
    return { ...r, stdout: stdout + dec.stdout.decode(), stderr: stderr + dec.stderr.decode() };
  }
}

/**
 * A persistent shell in the engine (`agent.shell()`): working directory,
 * variables, functions and options survive between its scripts, as in
 * `agentfs sh`. Scripts run one at a time.
 */
export class Shell {
  constructor(private readonly sandbox: Sandbox, readonly id: bigint) {}

  /** Runs a script in the shell and resolves with its exit code and output. */
  async run(script: string, opts: { stdin?: string | Uint8Array; env?: Record<string, string>; signal?: AbortSignal } = {}): Promise<ProcessResult> {
    return (await this.spawn(script, opts)).wait();
  }

  /** Starts a script in the shell as a process. */
  spawn(script: string, opts: Pick<SpawnOptions, "stdin" | "env" | "keepStdinOpen" | "timeoutMs" | "signal"> = {}): Promise<Process> {
    return this.sandbox.spawn(script, opts, this.id);
  }

  /** Kills the shell's running scripts and forgets its state. */
  async close(): Promise<void> {
    await this.sandbox.procs.closeShell({ shellId: this.id });
  }
}

export class Sandbox {
  /** Bindings of the scripts running now, by name. */
  private readonly bindings = new Map<string, { fn: Binding["fn"]; users: number }>();
  readonly procs: ProcessServiceClient;

  constructor(private readonly transport: Transport) {
    this.procs = new ProcessServiceClient(transport);
  }

  /** Starts a script as a process (see Process). */
  async spawn(script: string, opts: SpawnOptions = {}, shellId = 0n): Promise<Process> {
    const specs = this.bindingSpecs(opts.bindings);
    for (const { name, binding } of specs) this.register(name, binding.fn);
    const release = () => { for (const { name } of specs) this.unregister(name); };
    try {
      const stdin = typeof opts.stdin === "string" ? new TextEncoder().encode(opts.stdin) : (opts.stdin ?? new Uint8Array(0));
      const start: MessageInitShape<typeof StartProcessRequestSchema> = {
        exec: { ...policyFields(opts), script, dir: opts.dir ?? "", stdin, bindings: bindingSpecsOf(specs) },
        shellId, keepStdinOpen: opts.keepStdinOpen ?? false, timeoutMs: opts.timeoutMs ?? 0,
        detach: opts.detach ?? false, leaseMs: opts.leaseMs ?? 0,
      };
      // A detached process must outlive this client, which a stream's
      // process does not (the engine kills it when the stream ends).
      if (this.transport.stream && !opts.detach) return await this.streamSpawn(start, release, opts.signal);
      const r = await this.procs.startProcess(start);
      return new Process(this.procs, Number(r.pid), release, opts.signal);
    } catch (e) {
      release();
      throw e;
    }
  }

  /**
   * streamSpawn starts the process with StreamProcess: its output comes as
   * the script writes it, with no read calls, and the first message's pid
   * makes the Process. The stream is not given the AbortSignal: an abort
   * kills the process (KillProcess), and the stream then brings its exit.
   */
  private streamSpawn(start: MessageInitShape<typeof StartProcessRequestSchema>, release: () => void, signal?: AbortSignal): Promise<Process> {
    const feed = new OutputFeed();
    return new Promise<Process>((resolve, reject) => {
      let pid = 0;
      const req = encode(StreamProcessRequestSchema, { target: { case: "start", value: start } });
      this.transport.stream!(STREAM_PROCESS, req, (bytes) => {
        const m = fromBinary(StreamProcessResponseSchema, bytes);
        if (pid === 0) {
          pid = Number(m.pid);
          resolve(new Process(this.procs, pid, release, signal, feed));
        }
        return feed.push(m);
      }).then(
        () => feed.fail(kindError("INTERNAL", "the process stream ended without the exit status")),
        (e: Error) => (pid === 0 ? reject(e) : feed.fail(e)),
      );
    });
  }

  /** Opens a persistent shell with this policy (dir, env, limits, allow/deny, bindings). */
  async shell(opts: Omit<ExecOptions, "signal" | "stdin"> = {}): Promise<Shell> {
    const specs = this.bindingSpecs(opts.bindings);
    // A shell's bindings stay registered while this client lives.
    for (const { name, binding } of specs) this.register(name, binding.fn);
    const r = await this.procs.openShell({
      exec: { ...policyFields(opts), dir: opts.dir ?? "", bindings: bindingSpecsOf(specs) },
    });
    return new Shell(this, r.shellId);
  }

  /** The processes of this connection (stdio) or agent (HTTP). */
  async processes(): Promise<ProcessInfo[]> {
    return (await this.procs.listProcesses({})).processes;
  }

  private bindingSpecs(bindings: ExecOptions["bindings"]): { name: string; binding: Binding }[] {
    const specs = Object.entries(bindings ?? {}).map(([name, b]) => ({ name, binding: typeof b === "function" ? { fn: b } : b }));
    const host = this.transport as Partial<HostServing>;
    if (specs.length > 0 && typeof host.serve !== "function") {
      throw kindError("FAILED_PRECONDITION", "exec: bindings need the stdio transport (the HTTP server cannot call this process)");
    }
    return specs;
  }

  /**
   * The effective policy of these options, every default filled in;
   * nothing runs. A policy exec would refuse is refused the same way
   * (EINVAL). Bindings are listed by name (no transport needed).
   */
  async policy(opts: Omit<ExecOptions, "signal" | "stdin"> = {}): Promise<EffectivePolicy> {
    const specs = Object.entries(opts.bindings ?? {}).map(([name, b]) => ({ name, binding: typeof b === "function" ? { fn: b } : b }));
    const r = await this.transport.unaryParts(SandboxServiceProcedures.policy, [encode(PolicyRequestSchema, {
      exec: { ...policyFields(opts), dir: opts.dir ?? "", bindings: bindingSpecsOf(specs) },
    })], PolicyResponseSchema);
    if (!r.policy) throw kindError("INTERNAL", "policy: the engine returned no policy");
    return r.policy;
  }

  /** Runs a script and resolves with its exit code and output. */
  async exec(script: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const specs = Object.entries(opts.bindings ?? {}).map(([name, b]) => {
      const binding: Binding = typeof b === "function" ? { fn: b } : b;
      return { name, binding };
    });
    const host = this.transport as Partial<HostServing>;
    if (specs.length > 0 && typeof host.serve !== "function") {
      throw kindError("FAILED_PRECONDITION", "exec: bindings need the stdio transport (the HTTP server cannot call this process)");
    }
    for (const { name, binding } of specs) this.register(name, binding.fn);
    try {
      const stdin = typeof opts.stdin === "string" ? new TextEncoder().encode(opts.stdin) : (opts.stdin ?? new Uint8Array(0));
      const r = await this.transport.unaryParts(SandboxServiceProcedures.exec, [encode(ExecRequestSchema, {
        ...policyFields(opts), script, dir: opts.dir ?? "", stdin, bindings: bindingSpecsOf(specs),
      })], ExecResponseSchema, opts.signal);
      const dec = new TextDecoder();
      const out: ExecResult = { exitCode: r.exitCode, stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
      if (r.limit) out.limit = r.limit;
      return out;
    } finally {
      for (const { name } of specs) this.unregister(name);
    }
  }

  private register(name: string, fn: Binding["fn"]): void {
    const cur = this.bindings.get(name);
    // Concurrent scripts share a name's latest function.
    this.bindings.set(name, { fn, users: (cur?.users ?? 0) + 1 });
    if (this.bindings.size === 1 && (cur?.users ?? 0) === 0) {
      (this.transport as unknown as HostServing).serve(CALL_BINDING, (p) => this.callBinding(p));
    }
  }

  private unregister(name: string): void {
    const cur = this.bindings.get(name);
    if (!cur) return;
    if (cur.users > 1) cur.users--;
    else this.bindings.delete(name);
    if (this.bindings.size === 0) (this.transport as unknown as HostServing).serve(CALL_BINDING, undefined);
  }

  private async callBinding(payload: Uint8Array): Promise<Uint8Array> {
    const req = fromBinary(CallBindingRequestSchema, payload);
    const b = this.bindings.get(req.name);
    let resultJson = "";
    let error = "";
    if (!b) {
      error = `no binding named ${req.name} is registered`;
    } else {
      try {
        const v = await b.fn(req.argsJson ? JSON.parse(req.argsJson) : {});
        resultJson = v === undefined ? "" : JSON.stringify(v);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
    }
    return toBinary(CallBindingResponseSchema, create(CallBindingResponseSchema, { resultJson, error }));
  }
}
