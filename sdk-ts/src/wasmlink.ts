// How every host links the engine's WebAssembly build (wasm/main_js.go)
// to the addon interface LocalLink speaks: Node (wasm.ts), browsers
// (browser/wasm.ts) and Workers (cloudflare/engine.ts) load the module
// each their own way, then start Go and adapt its exports here. No Node
// imports: the browser and Workers bundles include this file.

import { kindError } from "./errors.js";
import type { Addon } from "./locallink.js";

/** The protocol exports every build puts on globalThis.__agentfsWasm. */
export interface CoreExports {
  start(onData: (chunk: Uint8Array | null, endMessage?: string) => void): number;
  write(handle: number, bytes: Uint8Array): void;
  end(handle: number): void;
  call(handle: number, method: Uint8Array, payload: Uint8Array): Uint8Array;
  submit(handle: number, id: number, method: Uint8Array, head: Uint8Array, data?: Uint8Array): void;
  version: string;
}

/** The part of Go's wasm_exec.js runtime used here. */
export interface GoRuntime {
  importObject: object;
  run(instance: object): Promise<void>;
}

/**
 * runGo runs the Go program of instance until it waits for calls and
 * returns what it exported on globalThis.__agentfsWasm (undefined when the
 * module is not the engine).
 */
export function runGo<X>(go: GoRuntime, instance: object): X | undefined {
  const g = globalThis as unknown as { __agentfsWasm?: X };
  g.__agentfsWasm = undefined;
  void go.run(instance);
  return g.__agentfsWasm;
}

/** linkCore adapts the protocol exports to the addon interface (Buffers out); the host adds ref. */
export function linkCore(x: CoreExports): Omit<Addon, "ref"> & { readonly version: string } {
  const buf = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
  return {
    version: x.version,
    start: (onData) => x.start((chunk, end) => onData(chunk ? buf(chunk) : null, end)),
    write: (h, b) => x.write(h, b),
    end: (h) => x.end(h),
    call: (h, m, p) => buf(x.call(h, m, p)),
    submit: (h, id, m, head, data) => x.submit(h, id, m, head, data),
  };
}

/** The Error of an {error, code} answer of the engine. */
export function engineError(r: { error: string; code: string }): Error {
  return Object.assign(kindError(r.code === "ENOENT" ? "NOT_FOUND" : "INTERNAL", r.error), { code: r.code });
}
