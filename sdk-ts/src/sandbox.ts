// agent.exec: shell scripts run by the engine's in-process sandbox (75
// POSIX utilities over the agent's files; no host process starts). Bindings
// are host functions the script runs as commands: the engine calls back
// into this process (HostService.CallBinding) over the same stdio
// connection while the script runs.

import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { SandboxServiceProcedures } from "./gen/agentfs/v1/clients_agentfs.js";
import { ProcessServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import type { ProcessInfo } from "./gen/agentfs/v1/process_pb.js";
import { CallBindingRequestSchema, CallBindingResponseSchema, ExecRequestSchema, ExecResponseSchema } from "./gen/agentfs/v1/sandbox_pb.js";
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
  /** Commands that may run (default: all) and that may not. */
  allow?: string[];
  deny?: string[];
  /** Aborting stops the script in the engine and rejects with an AbortError. */
  signal?: AbortSignal;
  /** Skip the engine's "exec" record in the tool-call log (the caller records the call itself). */
  noAudit?: boolean;
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

  constructor(private readonly rpc: ProcessServiceClient, readonly pid: number, release: () => void, signal?: AbortSignal) {
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

  private async readOnce(): Promise<{ chunks: OutputChunk[]; done: boolean }> {
    const r = await this.rpc.readProcess({ pid: BigInt(this.pid), waitMs: 30000 });
    const chunks = r.chunks.map((c) => ({ stream: c.stream === 2 ? "stderr" as const : "stdout" as const, data: c.data }));
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
    await this.rpc.killProcess({ pid: BigInt(this.pid), signal });
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
      const r = await this.procs.startProcess({
        exec: {
          script, dir: opts.dir ?? "", stdin, env: opts.env ?? {}, limits: opts.limits ?? "",
          allow: opts.allow ?? [], deny: opts.deny ?? [], noAudit: opts.noAudit ?? false,
          bindings: specs.map(({ name, binding }) => ({ name, description: binding.description ?? "", schemaJson: binding.schema ? JSON.stringify(binding.schema) : "" })),
        },
        shellId, keepStdinOpen: opts.keepStdinOpen ?? false, timeoutMs: opts.timeoutMs ?? 0,
        detach: opts.detach ?? false, leaseMs: opts.leaseMs ?? 0,
      });
      return new Process(this.procs, Number(r.pid), release, opts.signal);
    } catch (e) {
      release();
      throw e;
    }
  }

  /** Opens a persistent shell with this policy (dir, env, limits, allow/deny, bindings). */
  async shell(opts: Omit<ExecOptions, "signal" | "stdin"> = {}): Promise<Shell> {
    const specs = this.bindingSpecs(opts.bindings);
    // A shell's bindings stay registered while this client lives.
    for (const { name, binding } of specs) this.register(name, binding.fn);
    const r = await this.procs.openShell({
      exec: {
        dir: opts.dir ?? "", env: opts.env ?? {}, limits: opts.limits ?? "", allow: opts.allow ?? [], deny: opts.deny ?? [],
        noAudit: opts.noAudit ?? false,
        bindings: specs.map(({ name, binding }) => ({ name, description: binding.description ?? "", schemaJson: binding.schema ? JSON.stringify(binding.schema) : "" })),
      },
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
        script,
        dir: opts.dir ?? "",
        stdin,
        env: opts.env ?? {},
        limits: opts.limits ?? "",
        allow: opts.allow ?? [],
        deny: opts.deny ?? [],
        noAudit: opts.noAudit ?? false,
        bindings: specs.map(({ name, binding }) => ({
          name,
          description: binding.description ?? "",
          schemaJson: binding.schema ? JSON.stringify(binding.schema) : "",
        })),
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
