// The Workers build of the engine (agentfs-workers.wasm, `go tool task
// build-wasm-workers`), imported as a compiled WebAssembly module, as
// Workers import .wasm files (wrangler's CompiledWasm rule, workerd's
// `wasm` modules); Go's wasm_exec.js beside it defines globalThis.Go.

import { kindError } from "../errors.js";
import type { Addon } from "../locallink.js";
import type { SqlHost } from "./host.js";
import { linkCore, runGo, type CoreExports, type GoRuntime } from "../wasmlink.js";
// Resolved by the package build to ../wasm/ (scripts/build-bundles.mjs).
import "agentfs-workers-wasm/wasm_exec.js";
import bundled from "agentfs-workers-wasm/agentfs-workers.wasm";

/** What agentfs-workers.wasm puts on globalThis.__agentfsWasm (wasm/main_js.go, host_js.go). */
interface WorkersExports extends CoreExports {
  attach(path: string, host: SqlHost): void;
  detach(path: string): void;
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
  const x = runGo<WorkersExports>(go, instance);
  if (!x || typeof x.attach !== "function") {
    throw kindError("UNAVAILABLE", "the WebAssembly module is not the Workers build of the agentfs engine (agentfs-workers.wasm, built with -tags agentfs_workers)");
  }
  return {
    ...linkCore(x),
    // A Durable Object's event loop is the runtime's: nothing to hold.
    ref: () => {},
    attach: (p, h) => x.attach(p, h),
    detach: (p) => x.detach(p),
  };
}
interface WebAssemblyApi {
  // With a compiled Module, instantiate resolves with the Instance itself.
  instantiate(module: object, imports: object): Promise<object>;
}
