// The Workers build of the engine (agentfs-workers.wasm, `go tool task
// build-wasm-workers`), imported as a compiled WebAssembly module, as
// Workers import .wasm files (wrangler's CompiledWasm rule, workerd's
// `wasm` modules); Go's wasm_exec.js beside it defines globalThis.Go.

import { kindError } from "../errors.js";
import type { Addon } from "../locallink.js";
import type { SqlHost } from "./host.js";
// Resolved by the package build to ../wasm/ (scripts/build-bundles.mjs).
import "agentfs-workers-wasm/wasm_exec.js";
import bundled from "agentfs-workers-wasm/agentfs-workers.wasm";

/** What agentfs-workers.wasm puts on globalThis.__agentfsWasm (wasm/main_js.go, host_js.go). */
interface WorkersExports {
  start(onData: (chunk: Uint8Array | null, endMessage?: string) => void): number;
  write(handle: number, bytes: Uint8Array): void;
  end(handle: number): void;
  call(handle: number, method: Uint8Array, payload: Uint8Array): Uint8Array;
  submit(handle: number, id: number, method: Uint8Array, head: Uint8Array, data?: Uint8Array): void;
  attach(path: string, host: SqlHost): void;
  detach(path: string): void;
  version: string;
}

/** The loaded engine: the addon interface plus attach/detach of a storage. */
export interface WorkersEngine extends Addon {
  attach(path: string, host: SqlHost): void;
  detach(path: string): void;
  readonly version: string;
}

let engine: Promise<WorkersEngine> | undefined;

/** The engine of this isolate, instantiated at the first call. */
export function loadWorkersEngine(module?: object): Promise<WorkersEngine> {
  engine ??= instantiate(module ?? bundled);
  engine.catch(() => (engine = undefined));
  return engine;
}

async function instantiate(module: object): Promise<WorkersEngine> {
  const g = globalThis as unknown as { Go?: new () => GoRuntime; __agentfsWasm?: WorkersExports; WebAssembly: WebAssemblyApi };
  if (!g.Go) throw kindError("UNAVAILABLE", "Go's wasm_exec.js did not define globalThis.Go");
  const go = new g.Go();
  const instance = await g.WebAssembly.instantiate(module, go.importObject);
  g.__agentfsWasm = undefined;
  void go.run(instance); // runs main until it waits for calls
  const x = g.__agentfsWasm as WorkersExports | undefined;
  if (!x || typeof x.attach !== "function") {
    throw kindError("UNAVAILABLE", "the WebAssembly module is not the Workers build of the agentfs engine (agentfs-workers.wasm, built with -tags agentfs_workers)");
  }
  const buf = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  return {
    version: x.version,
    start: (onData) => x.start((chunk, end) => onData(chunk ? buf(chunk) : null, end)),
    write: (h, b) => x.write(h, b),
    end: (h) => x.end(h),
    call: (h, m, p) => buf(x.call(h, m, p)),
    submit: (h, id, m, head, data) => x.submit(h, id, m, head, data),
    // A Durable Object's event loop is the runtime's: nothing to hold.
    ref: () => {},
    attach: (p, h) => x.attach(p, h),
    detach: (p) => x.detach(p),
  };
}

interface GoRuntime {
  importObject: object;
  run(instance: object): Promise<void>;
}
interface WebAssemblyApi {
  // With a compiled Module, instantiate resolves with the Instance itself.
  instantiate(module: object, imports: object): Promise<object>;
}
