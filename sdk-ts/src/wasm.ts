// The engine as WebAssembly (the Go module wasm/, built into agentfs.wasm
// with Go's wasm_exec.js beside it): for hosts where the native engine
// cannot run. It speaks the same protocol as the Node addon through the
// same LocalLink, so every call behaves as with the other transports.
// Its databases live in memory: they are loaded from and saved to the
// bytes of an AgentFS database file.

import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { kindError } from "./errors.js";
import type { Addon } from "./link.js";
import { engineError, linkCore, runGo, type CoreExports, type GoRuntime as GoRun } from "./wasmlink.js";

/** What agentfs.wasm puts on globalThis.__agentfsWasm (wasm/main_js.go). */
interface WasmExports extends CoreExports {
  load(path: string, bytes: Uint8Array, wal?: Uint8Array): undefined | { error: string; code: string };
  save(path: string): Uint8Array | { error: string; code: string };
  drop(path: string): void;
  version: string;
}

/** The loaded WASM engine: the addon interface plus its databases' bytes. */
export interface WasmEngine extends Addon {
  /**
   * Makes bytes (an AgentFS database file) the database called path, with
   * the committed transactions of wal (the bytes of its -wal file) applied.
   */
  load(path: string, bytes: Uint8Array, wal?: Uint8Array): void;
  /** The bytes of the database called path. */
  save(path: string): Uint8Array;
  /** Forgets the database called path. */
  drop(path: string): void;
  readonly version: string;
}

/** The path of the WASM engine bundled in this package (wasm/agentfs.wasm). */
export function bundledWasm(): string {
  return fileURLToPath(new URL("../wasm/agentfs.wasm", import.meta.url));
}

const engines = new Map<string, Promise<WasmEngine>>();

/**
 * loadWasm instantiates the WASM engine at path (default: AGENTFS_WASM,
 * then the bundled one), once per path and process. Go's wasm_exec.js must
 * lie beside it.
 */
export function loadWasm(path?: string): Promise<WasmEngine> {
  const p = path || process.env.AGENTFS_WASM || bundledWasm();
  let e = engines.get(p);
  if (!e) {
    e = instantiate(p);
    engines.set(p, e);
    e.catch(() => engines.delete(p));
  }
  return e;
}

async function instantiate(path: string): Promise<WasmEngine> {
  let code: Buffer;
  try {
    code = await readFile(path);
  } catch (e) {
    throw kindError(
      "NOT_FOUND",
      `agentfs WASM engine not found at ${path}: ${(e as Error).message}; build it with \`go tool task build\` (bin/agentfs.wasm) and set AGENTFS_WASM or pass { wasm: "/path/to/agentfs.wasm" }`,
    );
  }
  const g = globalThis as unknown as { Go?: new () => GoRuntime; __agentfsWasm?: WasmExports };
  if (!g.Go) await import(pathToFileURL(join(dirname(path), "wasm_exec.js")).href);
  if (!g.Go) throw kindError("UNAVAILABLE", `${join(dirname(path), "wasm_exec.js")} did not define Go`);
  const go = new g.Go();
  unrefTimers(go);
  const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
  const { instance } = await wasm.instantiate(code, go.importObject);
  const x = runGo<WasmExports>(go, instance);
  if (!x) throw kindError("UNAVAILABLE", `${path} is not the agentfs WASM engine (it set no globalThis.__agentfsWasm)`);
  return {
    ...linkCore(x),
    ref: (h, on) => {
      // While a call waits, the engine must be able to run (its timers
      // are unref'd): hold the event loop as the addon's ref does.
      if (on) refs.add(h);
      else refs.delete(h);
      if (refs.size > 0 && !holder) holder = setInterval(() => {}, 1 << 30);
      if (refs.size === 0 && holder) {
        clearInterval(holder);
        holder = undefined;
      }
    },
    load: (p, b, w) => {
      const r = w ? x.load(p, b, w) : x.load(p, b);
      if (r) throw engineError(r);
    },
    save: (p) => {
      const r = x.save(p);
      if (r instanceof Uint8Array) return r;
      throw engineError(r);
    },
    drop: (p) => x.drop(p),
  };
}

const refs = new Set<number>();
let holder: ReturnType<typeof setInterval> | undefined;

/**
 * unrefTimers makes the Go program's timers (wasm_exec.js schedules them
 * with setTimeout) never keep Node alive on their own, as the threads of
 * the addon do not: otherwise an idle engine's runtime timers hold the
 * process for seconds after the program is done. Calls in flight hold it
 * through ref().
 */
function unrefTimers(go: GoRuntime): void {
  const imports = go.importObject.gojs;
  const schedule = imports["runtime.scheduleTimeoutEvent"];
  if (!schedule || !go._scheduledTimeouts) return;
  imports["runtime.scheduleTimeoutEvent"] = (sp: number) => {
    schedule(sp);
    const t = go._scheduledTimeouts!.get(go._nextCallbackTimeoutID! - 1) as { unref?: () => void } | undefined;
    t?.unref?.();
  };
}

/** The part of Go's wasm_exec.js runtime used here. */
interface GoRuntime extends GoRun {
  importObject: { gojs: Record<string, (sp: number) => void> };
  _scheduledTimeouts?: Map<number, unknown>;
  _nextCallbackTimeoutID?: number;
}

/** The part of the WebAssembly global used here (not in this project's TypeScript libs). */
interface WebAssemblyApi {
  instantiate(code: Uint8Array, imports: object): Promise<{ instance: object }>;
}
