// The engine as WebAssembly in a browser (a page, a dedicated or shared
// worker): the same Go program (wasm/) and the same addon interface as
// ../wasm.ts under Node, loaded with fetch instead of node:fs.

import { kindError } from "../errors.js";
import type { WasmEngine } from "../wasm.js";
import { engineError, linkCore, runGo, type CoreExports, type GoRuntime } from "../wasmlink.js";

export type { WasmEngine } from "../wasm.js";

/** What agentfs.wasm puts on globalThis.__agentfsWasm (wasm/main_js.go). */
interface WasmExports extends CoreExports {
  load(path: string, bytes: Uint8Array, wal?: Uint8Array): undefined | { error: string; code: string };
  save(path: string): Uint8Array | { error: string; code: string };
  drop(path: string): void;
  attachFiles(path: string, db: SyncAccessHandle, journal: SyncAccessHandle): void;
  detachFiles(path: string): void;
  rollback(db: Uint8Array, journal: Uint8Array, key?: Uint8Array, cipher?: string): Uint8Array | { error: string; code: string };
}

/** The parts of a FileSystemSyncAccessHandle (OPFS, dedicated workers) the engine uses. */
export interface SyncAccessHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

/** The engine in a browser: the Node engine's interface plus databases written in place through OPFS handles. */
export interface BrowserEngine extends WasmEngine {
  /** The database called path is these files (its rollback journal in the second), read and written in place. */
  attachFiles(path: string, db: SyncAccessHandle, journal: SyncAccessHandle): void;
  /** Forgets path's files (once its agents are closed). */
  detachFiles(path: string): void;
  /** The database's bytes with its hot rollback journal played back (a writer died mid-commit); an encrypted one needs its key. */
  rollback(db: Uint8Array, journal: Uint8Array, key?: Uint8Array, cipher?: string): Uint8Array;
}

/**
 * The URL of agentfs.wasm beside this bundle (the package's
 * wasm/agentfs.wasm); Go's wasm_exec.js must lie beside it.
 */
export function bundledWasm(): string {
  return new URL("../wasm/agentfs.wasm", import.meta.url).href;
}

const engines = new Map<string, Promise<BrowserEngine>>();

/**
 * loadWasm instantiates the engine at url (default: the bundled one), once
 * per url and page or worker. Go's wasm_exec.js is loaded from beside it
 * unless the page already defined globalThis.Go.
 */
export function loadWasm(url?: string | URL): Promise<BrowserEngine> {
  // Relative URLs resolve against the page (or the worker's script).
  const base = (globalThis as unknown as { location?: { href: string } }).location?.href;
  const u = new URL(url ?? bundledWasm(), base).href;
  let e = engines.get(u);
  if (!e) {
    e = instantiate(u);
    engines.set(u, e);
    e.catch(() => engines.delete(u));
  }
  return e;
}

async function instantiate(url: string): Promise<BrowserEngine> {
  const g = globalThis as unknown as { Go?: new () => GoRuntime; __agentfsWasm?: WasmExports; WebAssembly: WebAssemblyApi };
  if (!g.Go) {
    const exec = new URL("wasm_exec.js", url).href;
    try {
      await import(/* @vite-ignore */ exec);
    } catch (e) {
      throw kindError("NOT_FOUND", `cannot load Go's wasm_exec.js from ${exec} (it must lie beside agentfs.wasm): ${(e as Error).message}`);
    }
    if (!g.Go) throw kindError("UNAVAILABLE", `${exec} did not define Go`);
  }
  let res: FetchResponse;
  try {
    res = await (globalThis as unknown as { fetch(url: string): Promise<FetchResponse> }).fetch(url);
  } catch (e) {
    throw kindError("NOT_FOUND", `cannot fetch the agentfs WASM engine at ${url}: ${(e as Error).message}; pass { wasm: "/path/to/agentfs.wasm" }`);
  }
  if (!res.ok) throw kindError("NOT_FOUND", `cannot fetch the agentfs WASM engine at ${url}: HTTP ${res.status}; pass { wasm: "/path/to/agentfs.wasm" }`);
  const go = new g.Go();
  // Streaming compiles while the bytes arrive; it needs the server to say
  // application/wasm, so other servers get the plain path.
  const { instance } = (res.headers.get("content-type") ?? "").startsWith("application/wasm")
    ? await g.WebAssembly.instantiateStreaming(res, go.importObject)
    : await g.WebAssembly.instantiate(new Uint8Array(await res.arrayBuffer()), go.importObject);
  const x = runGo<WasmExports>(go, instance);
  if (!x) throw kindError("UNAVAILABLE", `${url} is not the agentfs WASM engine (it set no globalThis.__agentfsWasm)`);
  return {
    ...linkCore(x),
    // A page's event loop never exits: nothing to hold.
    ref: () => {},
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
    attachFiles: (p, db, journal) => x.attachFiles(p, db, journal),
    detachFiles: (p) => x.detachFiles(p),
    rollback: (db, journal, key, cipher) => {
      const r = key?.length ? x.rollback(db, journal, key, cipher ?? "") : x.rollback(db, journal);
      if (r instanceof Uint8Array) return r;
      throw engineError(r);
    },
  };
}

/** The parts of fetch and WebAssembly used here (this project's TypeScript libs have no DOM). */
interface FetchResponse {
  ok: boolean;
  status: number;
  headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
}
interface WebAssemblyApi {
  instantiate(code: Uint8Array, imports: object): Promise<{ instance: object }>;
  instantiateStreaming(res: FetchResponse, imports: object): Promise<{ instance: object }>;
}
