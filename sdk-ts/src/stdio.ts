// The stdio transport: the stdio protocol (spec/PROTOCOL.md) over a link
// to the engine, either a child process (`agentfs serve --stdio`, frames
// over its stdin/stdout) or the engine loaded in this process as an addon
// (frames through memory, and short calls answered synchronously). Many
// calls may be in flight; answers are matched by id. When the engine dies
// every pending call is rejected at once with the reason (for a child, the
// last lines of its stderr). The link is unref'd while no call is pending,
// so an idle agent never keeps Node alive.

import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { ErrorKind } from "./gen/agentfs/v1/errors_pb.js";
import type { InfoResponse } from "./gen/agentfs/v1/agent_pb.js";
import { FrameSchema, type OpenOptionsSchema } from "./gen/agentfs/v1/protocol_pb.js";
import { AgentFSError, abortError, fromProto, kindError } from "./errors.js";
import { encode, type Transport } from "./transport.js";
import { ChildLink, LocalLink, type Addon, type Link } from "./link.js";
import { callFrame, decodeFrame, decodeResult, decodeResultBody, decodeWelcome, encodeFrame, FrameReader, helloFrame, partsLength, PROTOCOL_VERSION, shutdownFrame } from "./wire.js";

const CLIENT = "agentfs-sdk-ts/0.7.0";
const HELLO_ID = 1;
// Calls answered synchronously by an in-process engine: the services whose
// calls are short, with requests up to this size. Sandbox scripts (which
// may call back into this thread's bindings) and agent-wide operations
// (snapshots, queries; Info excepted) always go through frames.
const SYNC_MAX_REQUEST = 1 << 20;
const SYNC_SERVICES = ["/agentfs.v1.FilesystemService/", "/agentfs.v1.KvService/", "/agentfs.v1.ToolsService/", "/agentfs.v1.AgentService/Info"];

interface Pending {
  resolve(payload: Uint8Array): void;
  reject(err: Error): void;
}

export interface StdioOptions {
  /** Path of the agentfs binary (already resolved): the engine runs as a child process. */
  engine?: string;
  /** Path of the engine addon (agentfs.node), or the loaded WASM engine: the engine runs in this process. */
  addon?: string | Addon;
  open: MessageInitShape<typeof OpenOptionsSchema>;
  /** Working directory of the engine (ids resolve to .agentfs/ID.db in it). */
  cwd?: string;
  /** Extra environment for the engine. */
  env?: NodeJS.ProcessEnv;
}

export class StdioTransport implements Transport {
  private readonly link: Link;
  private readonly pending = new Map<number, Pending>();
  /** Server-streaming calls in flight: their message frames' receivers. */
  private readonly streams = new Map<number, (payload: Uint8Array) => void>();
  /** Buffers an in-process engine reads in place, by call id, until its answer. */
  private readonly inPlace = new Map<number, Uint8Array>();
  private readonly methods = new Map<string, Buffer>();
  /** What this process serves to the engine (HostService), by procedure. */
  private readonly served = new Map<string, (payload: Uint8Array) => Promise<Uint8Array>>();
  private nextId = HELLO_ID + 1;
  private referenced = true;
  /** Calls in flight that may call back into this process (sandbox scripts). */
  private callbacksPossible = 0;
  private failure: AgentFSError | undefined;
  private exited: Promise<void>;
  private closing: Promise<void> | undefined;
  /** The engine's description of the open database (from the handshake). */
  info: InfoResponse | undefined;
  engineVersion = "";

  private constructor(opts: StdioOptions) {
    const reader = new FrameReader((f) => this.onFrame(f));
    let exited!: () => void;
    this.exited = new Promise((resolve) => (exited = resolve));
    const events = {
      onData: (chunk: Buffer) => {
        try {
          reader.push(chunk);
        } catch (e) {
          this.fail(kindError("INTERNAL", `protocol error from the agentfs engine: ${(e as Error).message}`));
          this.link.kill("SIGKILL");
        }
      },
      onExit: (err: AgentFSError) => {
        this.fail(err);
        exited();
      },
    };
    if (opts.addon) this.link = new LocalLink(opts.addon, events);
    else if (opts.engine) this.link = new ChildLink(opts.engine, events, opts.cwd, opts.env);
    else throw kindError("INVALID_ARGUMENT", "StdioTransport needs an engine binary or an addon");
  }

  /** start spawns the engine and completes the handshake. */
  static async start(opts: StdioOptions): Promise<StdioTransport> {
    const t = new StdioTransport(opts);
    // By hand (wire.ts), as the welcome is read: no descriptor is built
    // before the first call needs one.
    const hello =
      helloFrame(HELLO_ID, CLIENT, opts.open) ??
      toBinary(
        FrameSchema,
        create(FrameSchema, {
          id: BigInt(HELLO_ID),
          body: { case: "hello", value: { protocolVersion: PROTOCOL_VERSION, client: CLIENT, open: opts.open } },
        }),
      );
    const welcome = new Promise<Uint8Array>((resolve, reject) => t.pending.set(HELLO_ID, { resolve, reject }));
    t.ref();
    // An engine in this process opens a local database on this thread,
    // as it answers short calls: no hand-off to its goroutine and back
    // (about 2 ms of a cold start on a busy machine). A sync remote's
    // bootstrap is a download, which must not hold up this thread.
    const answer = opts.open.syncRemoteUrl ? undefined : t.link.hello?.(hello);
    if (!answer) {
      t.link.write([encodeFrame(hello)]);
    } else {
      try {
        t.onFrame(answer);
      } catch (e) {
        t.fail(kindError("INTERNAL", `protocol error from the agentfs engine: ${(e as Error).message}`));
      }
    }
    try {
      await welcome;
    } catch (e) {
      t.link.kill("SIGKILL");
      throw e;
    } finally {
      t.idle();
    }
    return t;
  }

  unary<I extends DescMessage, O extends DescMessage>(procedure: string, input: I, request: MessageInitShape<I>, output: O): Promise<MessageShape<O>> {
    return this.unaryParts(procedure, [encode(input, request)], output);
  }

  unaryParts<O extends DescMessage>(procedure: string, payload: readonly Uint8Array[], output: O, signal?: AbortSignal): Promise<MessageShape<O>> {
    return this.call(procedure, payload, signal).then((bytes) => fromBinary(output, bytes));
  }

  /**
   * stream sends a server-streaming call: the engine's Frame.message
   * frames of its id go to onMessage as they arrive, and its Result ends
   * the stream (spec/PROTOCOL.md, Server streams).
   */
  stream(procedure: string, payload: Uint8Array, onMessage: (payload: Uint8Array) => void, signal?: AbortSignal): Promise<void> {
    return this.call(procedure, [payload], signal, onMessage).then(() => undefined);
  }

  /** call sends one Call frame and resolves with the response payload. */
  call(procedure: string, payload: readonly Uint8Array[], signal?: AbortSignal, onMessage?: (payload: Uint8Array) => void): Promise<Uint8Array> {
    if (this.failure) return Promise.reject(this.failure);
    if (signal?.aborted) return Promise.reject(abortError(signal));
    if (this.closing) return Promise.reject(kindError("UNAVAILABLE", "the agent is closed"));
    let method = this.methods.get(procedure);
    if (!method) {
      method = Buffer.from(procedure);
      this.methods.set(procedure, method);
    }
    if (this.link.callSync && !signal && !onMessage && this.callbacksPossible === 0 && SYNC_SERVICES.some((s) => procedure.startsWith(s))) {
      const n = partsLength(payload);
      if (n <= SYNC_MAX_REQUEST) return this.callSync(method, payload.length === 1 ? payload[0] : Buffer.concat(payload, n));
    }
    const id = this.nextId++;
    if (this.nextId > 0x7fffffff) this.nextId = HELLO_ID + 1;
    let bufs: Uint8Array[] = [];
    if (!this.link.submit) {
      try {
        bufs = callFrame(id, method, payload);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const callback = procedure.startsWith("/agentfs.v1.SandboxService/");
    if (callback) this.callbacksPossible++;
    let p = new Promise<Uint8Array>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (callback) p = p.finally(() => this.callbacksPossible--);
    if (onMessage) {
      this.streams.set(id, onMessage);
      p = p.finally(() => this.streams.delete(id));
    }
    if (this.pending.size === 1) this.ref();
    if (this.link.submit) {
      // In process: no frame; data read in place stays referenced until
      // the answer arrives, even if the caller stops waiting for it.
      const inPlace = this.link.submit(id, method, payload);
      if (inPlace) this.inPlace.set(id, inPlace);
    } else {
      this.link.write(bufs);
    }
    if (!signal) return p;
    // Aborted: stop waiting at once and ask the engine to cancel the call
    // (spec/PROTOCOL.md, Cancellation); its late answer is dropped.
    const onAbort = () => {
      const w = this.pending.get(id);
      if (!w) return;
      this.pending.delete(id);
      this.sendFrame({ id: BigInt(id), body: { case: "cancel", value: {} } });
      if (this.pending.size === 0) this.idle();
      w.reject(abortError(signal));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    return p.finally(() => signal.removeEventListener("abort", onAbort));
  }

  /**
   * ping sends a Ping frame and resolves when the engine's Pong arrives:
   * the round trip of the transport alone (the engine answers it without
   * dispatching a call).
   */
  ping(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const p = new Promise<Uint8Array>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    if (this.pending.size === 1) this.ref();
    this.sendFrame({ id: BigInt(id), body: { case: "ping", value: {} } });
    return p.then(() => undefined);
  }

  /** callSync runs a call on this thread (in-process engine only). */
  private callSync(method: Uint8Array, payload: Uint8Array): Promise<Uint8Array> {
    let r;
    try {
      r = decodeResultBody(0, this.link.callSync!(method, payload));
    } catch (e) {
      return Promise.reject(e);
    }
    if (!r) return Promise.reject(kindError("INTERNAL", "protocol error from the agentfs engine: a result that does not decode"));
    if (r.error) return Promise.reject(fromProto(r.error));
    return Promise.resolve(r.payload ?? new Uint8Array(0));
  }

  private onFrame(frame: Buffer): void {
    const r = decodeResult(frame);
    if (r) {
      this.inPlace.delete(r.id);
      const p = this.pending.get(r.id);
      if (!p) return; // an answer to a call we stopped waiting for
      this.pending.delete(r.id);
      if (this.pending.size === 0) this.idle();
      if (r.error) p.reject(fromProto(r.error));
      else p.resolve(r.payload ?? new Uint8Array(0));
      return;
    }
    const w = decodeWelcome(frame);
    if (w) {
      this.welcome(w.id, w.info, w.engineVersion);
      return;
    }
    const f = decodeFrame(frame);
    const id = Number(f.id);
    switch (f.body.case) {
      case "welcome":
        this.welcome(id, f.body.value.info, f.body.value.engineVersion);
        return;
      case "call": {
        // The engine calls this process: a sandbox script runs a binding.
        const method = f.body.value.method;
        const handler = this.served.get(method);
        if (!handler) {
          this.sendFrame({
            id: f.id,
            body: { case: "result", value: { error: { kind: ErrorKind.UNIMPLEMENTED, message: `this process serves no ${method}` } } },
          });
          return;
        }
        handler(f.body.value.payload).then(
          (payload) => this.sendFrame({ id: f.id, body: { case: "result", value: { payload } } }),
          (e: unknown) =>
            this.sendFrame({
              id: f.id,
              body: { case: "result", value: { error: { kind: ErrorKind.INTERNAL, message: `${method}: ${e instanceof Error ? e.message : String(e)}` } } },
            }),
        );
        return;
      }
      case "message":
        // One message of a server stream, before the stream's Result.
        this.streams.get(id)?.(f.body.value.payload);
        return;
      case "ping":
        this.sendFrame({ id: f.id, body: { case: "pong", value: {} } });
        return;
      case "pong": {
        const p = this.pending.get(id);
        if (p) {
          this.pending.delete(id);
          if (this.pending.size === 0) this.idle();
          p.resolve(new Uint8Array(0));
        }
        return;
      }
      default:
        return;
    }
  }

  private welcome(id: number, info: InfoResponse | undefined, engineVersion: string): void {
    this.info = info;
    this.engineVersion = engineVersion;
    const p = this.pending.get(id);
    if (p) {
      this.pending.delete(id);
      p.resolve(new Uint8Array(0));
    }
  }

  private sendFrame(init: MessageInitShape<typeof FrameSchema>): void {
    this.link.write([encodeFrame(toBinary(FrameSchema, create(FrameSchema, init)))]);
  }

  // While calls are pending the link keeps Node alive; when none are, an
  // idle engine must not.
  private ref(): void {
    if (this.referenced) return;
    this.referenced = true;
    this.link.keepAlive(true);
  }

  private idle(): void {
    if (!this.referenced || this.pending.size > 0) return;
    this.referenced = false;
    this.link.keepAlive(false);
  }

  private fail(err: AgentFSError): void {
    if (!this.failure) this.failure = err;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(this.failure);
  }

  /**
   * close asks the engine to finish the calls in flight, close the database
   * and exit, and waits for it (killing it after timeoutMs).
   */
  close(timeoutMs = 10000): Promise<void> {
    if (!this.closing) this.closing = this.shutdown(timeoutMs);
    return this.closing;
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    if (!this.failure) {
      const id = this.nextId++;
      const done = new Promise<Uint8Array>((resolve, reject) => this.pending.set(id, { resolve, reject }));
      this.ref();
      this.link.write([encodeFrame(shutdownFrame(id))]);
      this.link.end();
      const timer = setTimeout(() => this.link.kill("SIGKILL"), timeoutMs);
      try {
        await Promise.race([done, this.exited]);
      } catch {
        // The engine exited before answering: the exit handler reported it.
      }
      await this.exited;
      clearTimeout(timer);
    } else {
      this.link.end();
      await this.exited;
    }
    this.failure = kindError("UNAVAILABLE", "the agent is closed");
  }

  /**
   * serve answers the engine's calls of a procedure with handler (undefined
   * stops serving it): sandbox bindings use HostService/CallBinding.
   */
  serve(procedure: string, handler: ((payload: Uint8Array) => Promise<Uint8Array>) | undefined): void {
    if (handler) this.served.set(procedure, handler);
    else this.served.delete(procedure);
  }

  /** kill stops the engine at once (tests use it to simulate a crash). */
  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.link.kill(signal);
  }

  /** The engine's process id (undefined when the engine runs in this process). */
  get pid(): number | undefined {
    return this.link.pid;
  }

  /** Whether the engine runs inside this process (the addon) rather than as a child. */
  get inProcess(): boolean {
    return this.link.callSync !== undefined;
  }
}
