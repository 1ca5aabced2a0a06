// agent.exec: shell scripts run by the engine's in-process sandbox (75
// POSIX utilities over the agent's files; no host process starts). Bindings
// are host functions the script runs as commands: the engine calls back
// into this process (HostService.CallBinding) over the same stdio
// connection while the script runs.

import { fromBinary, toBinary, create } from "@bufbuild/protobuf";
import { SandboxServiceProcedures } from "./gen/agentfs/v1/clients_agentfs.js";
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

export class Sandbox {
  /** Bindings of the scripts running now, by name. */
  private readonly bindings = new Map<string, { fn: Binding["fn"]; users: number }>();

  constructor(private readonly transport: Transport) {}

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
