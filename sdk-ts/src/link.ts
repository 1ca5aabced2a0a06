// The byte links a StdioTransport speaks the stdio protocol over: the
// engine as a child process (`agentfs serve --stdio`, pipes), or the
// engine loaded into this process as a Node addon (agentfs.node), where
// the same frames travel through memory and short calls can also be
// answered synchronously.

import { spawn, type ChildProcessByStdio } from "node:child_process";
import { createRequire } from "node:module";
import type { Readable, Writable } from "node:stream";
import { kindError, type AgentFSError } from "./errors.js";

const STDERR_KEEP = 4096;

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
}

// File data of at least this size is read by an in-process engine where
// it lies (WriteFile and Pwrite); smaller requests are copied.
const IN_PLACE_MIN = 64 << 10;
const IN_PLACE_METHODS = new Set(["/agentfs.v1.FilesystemService/WriteFile", "/agentfs.v1.FilesystemService/Pwrite"]);

/** The engine as a child process, frames over its stdin and stdout. */
export class ChildLink implements Link {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private corked = false;
  private stderrTail = "";

  constructor(engine: string, events: LinkEvents, cwd?: string, env?: NodeJS.ProcessEnv) {
    this.child = spawn(engine, ["serve", "--stdio"], {
      stdio: ["pipe", "pipe", "pipe"],
      cwd,
      env: env ? { ...process.env, ...env } : process.env,
      windowsHide: true,
    });
    this.child.stdout.on("data", (chunk: Buffer) => events.onData(chunk));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_KEEP);
    });
    // A dead engine makes writes fail with EPIPE; the exit handler reports it.
    this.child.stdin.on("error", () => {});
    this.child.on("error", (e) => events.onExit(kindError("UNAVAILABLE", `cannot start the agentfs engine ${engine}: ${e.message}`)));
    this.child.on("close", (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const tail = this.stderrTail.trim();
      events.onExit(kindError("UNAVAILABLE", `the agentfs engine ${how}` + (tail ? `; its last output: ${tail}` : "")));
    });
  }

  // Frames written in the same tick go out together: the first write corks
  // the pipe and the uncork runs once the current code yields.
  write(bufs: readonly Uint8Array[]): void {
    const stdin = this.child.stdin;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    for (const b of bufs) stdin.write(b);
  }

  end(): void {
    this.child.stdin.end();
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.child.kill(signal);
  }

  keepAlive(on: boolean): void {
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as { ref?(): void; unref?(): void }[];
    for (const h of handles) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

/** What agentfs.node exports (core/cmd/agentfs-node), and the WASM engine (wasm.ts). */
export interface Addon {
  start(onData: (chunk: Buffer | null, endMessage?: string) => void): number;
  write(handle: number, bytes: Uint8Array): void;
  end(handle: number): void;
  call(handle: number, method: Uint8Array, payload: Uint8Array): Buffer;
  submit(handle: number, id: number, method: Uint8Array, head: Uint8Array, data?: Uint8Array): void;
  ref(handle: number, on: boolean): void;
}

const addons = new Map<string, Addon>();

function loadAddon(path: string): Addon {
  let a = addons.get(path);
  if (!a) {
    try {
      a = createRequire(import.meta.url)(path) as Addon;
    } catch (e) {
      throw kindError("UNAVAILABLE", `cannot load the agentfs engine addon ${path}: ${(e as Error).message} (use { transport: "process" } to run the engine as a child process)`);
    }
    addons.set(path, a);
  }
  return a;
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
    this.addon = typeof addon === "string" ? loadAddon(addon) : addon;
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
