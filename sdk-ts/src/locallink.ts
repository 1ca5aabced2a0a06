// The engine inside this process (the Node addon agentfs.node, or the
// engine as WebAssembly): the stdio protocol's frames travel through
// memory. Kept apart from the child-process link so that builds without
// processes (the browser bundle) carry no node:* import.

import { kindError, type AgentFSError } from "./errors.js";

export interface LinkEvents {
  /** Bytes from the engine (frames, possibly split or joined). */
  onData(chunk: Buffer): void;
  /** The engine is gone; err says why. */
  onExit(err: AgentFSError): void;
}

export interface Link {
  /** Sends bytes to the engine; writes made in one tick may leave together. */
  write(bufs: readonly Uint8Array[]): void;
  /** Tells the engine no more bytes will come (it finishes and exits). */
  end(): void;
  /** Stops the engine at once. */
  kill(signal?: NodeJS.Signals): void;
  /** Whether the link keeps Node's event loop alive. */
  keepAlive(on: boolean): void;
  /** The engine's process id (child process only). */
  readonly pid?: number;
  /**
   * callSync runs one call on this thread and returns the serialized
   * agentfs.v1.Result (in-process link only).
   */
  callSync?(method: Uint8Array, payload: Uint8Array): Uint8Array;
  /**
   * submit starts a call without a frame (in-process link only); its
   * answer arrives as a Result frame with this id. Returns the buffer the
   * engine reads in place, which must stay alive until that answer.
   */
  submit?(id: number, method: Uint8Array, payload: readonly Uint8Array[]): Uint8Array | undefined;
  /**
   * hello makes the handshake on this thread (in-process link only, when
   * the engine can): frame is the Hello without its length prefix, the
   * answer the engine's frame (Welcome, or the Result of a refusal), as
   * it would have arrived. Undefined when it cannot: send the Hello as a
   * frame instead.
   */
  hello?(frame: Uint8Array): Buffer | undefined;
}

// File data of at least this size is read by an in-process engine where
// it lies (WriteFile and Pwrite); smaller requests are copied.
const IN_PLACE_MIN = 64 << 10;
const IN_PLACE_METHODS = new Set(["/agentfs.v1.FilesystemService/WriteFile", "/agentfs.v1.FilesystemService/Pwrite"]);

/** What agentfs.node exports (core/cmd/agentfs-node), and the WASM engine (wasm.ts). */
export interface Addon {
  start(onData: (chunk: Buffer | null, endMessage?: string) => void): number;
  write(handle: number, bytes: Uint8Array): void;
  end(handle: number): void;
  call(handle: number, method: Uint8Array, payload: Uint8Array): Buffer;
  submit(handle: number, id: number, method: Uint8Array, head: Uint8Array, data?: Uint8Array): void;
  ref(handle: number, on: boolean): void;
  /** The handshake on this thread: the answer frame, or undefined when the engine has finished (the native addon only). */
  hello?(handle: number, frame: Uint8Array): Buffer | undefined;
}

/** How a LocalLink loads an addon named by path (set by link.ts under Node). */
let loader: ((path: string) => Addon) | undefined;

export function setAddonLoader(l: (path: string) => Addon): void {
  loader = l;
}

/**
 * The engine inside this process: the addon runs the stdio protocol over
 * memory (its output arrives through a thread-safe function), and callSync
 * answers a call on this thread without any frame.
 */
export class LocalLink implements Link {
  private readonly addon: Addon;
  private readonly handle: number;
  private ended = false;
  private gone = false;
  private stopped = false;

  constructor(addon: string | Addon, private readonly events: LinkEvents) {
    this.addon = typeof addon === "string" ? loadByPath(addon) : addon;
    this.handle = this.addon.start((chunk, endMessage) => {
      if (chunk) {
        events.onData(chunk);
        return;
      }
      this.gone = true;
      if (!this.stopped) events.onExit(kindError("UNAVAILABLE", endMessage ?? "the agentfs engine has finished"));
    });
  }

  write(bufs: readonly Uint8Array[]): void {
    if (this.ended) return;
    for (const b of bufs) this.addon.write(this.handle, b);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.addon.end(this.handle);
  }

  /**
   * An engine in this process cannot be killed: the link ends at once
   * (every pending call fails now, later answers are dropped) and the
   * engine finishes the calls it has started, then closes the database.
   */
  kill(): void {
    this.end();
    if (this.stopped) return;
    this.stopped = true;
    this.events.onExit(kindError("UNAVAILABLE", "the agentfs engine was stopped (it runs in this process: the calls it had started finish, their answers are dropped)"));
  }

  keepAlive(on: boolean): void {
    if (!this.gone) this.addon.ref(this.handle, on);
  }

  hello(frame: Uint8Array): Buffer | undefined {
    if (this.ended || !this.addon.hello) return undefined;
    return this.addon.hello(this.handle, frame);
  }

  callSync(method: Uint8Array, payload: Uint8Array): Uint8Array {
    return this.addon.call(this.handle, method, payload);
  }

  submit(id: number, method: Uint8Array, payload: readonly Uint8Array[]): Uint8Array | undefined {
    if (this.ended) return undefined;
    // WriteFile and Pwrite requests come as [request without data, data's tag and length, data].
    const data = payload.length === 3 ? payload[2] : undefined;
    if (data && data.byteLength >= IN_PLACE_MIN && IN_PLACE_METHODS.has(Buffer.from(method).toString())) {
      this.addon.submit(this.handle, id, method, payload[0], data);
      return data;
    }
    this.addon.submit(this.handle, id, method, payload.length === 1 ? payload[0] : Buffer.concat(payload));
    return undefined;
  }
}

function loadByPath(path: string): Addon {
  if (!loader) throw kindError("UNAVAILABLE", `cannot load the agentfs engine addon ${path}: this build has no native addons (pass the loaded WASM engine)`);
  return loader(path);
}
