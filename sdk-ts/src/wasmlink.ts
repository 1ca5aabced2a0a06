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
  /** call through the shared buffers (engines before it lack it): the answer's length in resp, or the answer. */
  callIn?(handle: number, methodLength: number, payloadLength: number): number | Uint8Array;
  buffers?(req: Uint8Array, resp: Uint8Array): void;
  version: string;
}

// The shared buffers of callIn: a call's method and payload go in req,
// a short answer comes back in resp, so the call crosses into Go with
// numbers only (each JavaScript object Go receives or makes costs it a
// reference with a finalizer). Larger requests take call.
const REQ_MIN = 4 << 10;
const REQ_MAX = 64 << 10;
const RESP = 64 << 10;

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
  const buf = asView;
  return {
    version: x.version,
    start: (onData) => x.start((chunk, end) => onData(chunk ? buf(chunk) : null, end)),
    write: (h, b) => x.write(h, b),
    end: (h) => x.end(h),
    call: sharedCall(x) ?? ((h, m, p) => buf(x.call(h, m, p))),
    submit: (h, id, m, head, data) => x.submit(h, id, m, head, data),
  };
}

/** The addon's call through callIn and its shared buffers, when the engine has them. */
function sharedCall(x: CoreExports): ((h: number, m: Uint8Array, p: Uint8Array) => Buffer) | undefined {
  // Called unbound: a method call would hand Go its receiver as one more
  // referenced object.
  const callIn = x.callIn;
  const setBuffers = x.buffers;
  if (typeof callIn !== "function" || typeof setBuffers !== "function") return undefined;
  let req = new Uint8Array(REQ_MIN);
  const resp = new Uint8Array(RESP);
  setBuffers(req, resp);
  return (h, m, p) => {
    const n = m.byteLength + p.byteLength;
    if (n > REQ_MAX) return asView(x.call(h, m, p));
    if (n > req.byteLength) {
      let size = req.byteLength * 2;
      while (size < n) size *= 2;
      req = new Uint8Array(size);
      setBuffers(req, resp);
    }
    req.set(m, 0);
    req.set(p, m.byteLength);
    const r = callIn(h, m.byteLength, p.byteLength);
    // A copy: resp is the next call's too.
    return typeof r === "number" ? Buffer.from(resp.subarray(0, r)) : asView(r);
  };
}

function asView(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** The Error of an {error, code} answer of the engine. */
export function engineError(r: { error: string; code: string }): Error {
  return Object.assign(kindError(r.code === "ENOENT" ? "NOT_FOUND" : "INTERNAL", r.error), { code: r.code });
}
