// The HTTP transport: Connect's unary protocol with binary protobuf bodies
// against `agentfs serve http` (spec/PROTOCOL.md). Each call is one POST
// to BASE/agentfs.v1.Service/Method with the agent in the Agentfs-Agent
// header; errors come back as Connect's JSON error with the engine's
// agentfs.v1.Error as a detail.

import { fromBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { ErrorSchema } from "./gen/agentfs/v1/errors_pb.js";
import { AgentFSError, fromProto, abortError, kindError } from "./errors.js";
import { encode, type Transport } from "./transport.js";
import { partsLength } from "./wire.js";

export interface HttpOptions {
  /** Server base URL, e.g. "http://127.0.0.1:7777". */
  url: string;
  /** Bearer token (required unless the server listens on loopback). */
  token?: string;
  /** The agent id, sent as Agentfs-Agent (empty for server-wide calls). */
  agent?: string;
  /** Extra headers for every request. */
  headers?: Record<string, string>;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

// Connect error codes (https://connectrpc.com/docs/protocol#error-codes)
// to the engine's ErrorKind names.
const kinds: Record<string, string> = {
  canceled: "CANCELED",
  invalid_argument: "INVALID_ARGUMENT",
  not_found: "NOT_FOUND",
  already_exists: "ALREADY_EXISTS",
  permission_denied: "PERMISSION_DENIED",
  unauthenticated: "PERMISSION_DENIED",
  failed_precondition: "FAILED_PRECONDITION",
  resource_exhausted: "RESOURCE_EXHAUSTED",
  unimplemented: "UNIMPLEMENTED",
  unavailable: "UNAVAILABLE",
  deadline_exceeded: "UNAVAILABLE",
};

export class HttpTransport implements Transport {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: typeof fetch;
  private closed = false;
  /** The streams in flight: close() ends them (the server then kills their processes). */
  private readonly streams = new Set<AbortController>();

  constructor(opts: HttpOptions) {
    this.base = opts.url.replace(/\/+$/, "");
    this.headers = {
      "Content-Type": "application/proto",
      "Connect-Protocol-Version": "1",
      ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.agent ? { "Agentfs-Agent": opts.agent } : {}),
      ...opts.headers,
    };
    this.fetch = opts.fetch ?? globalThis.fetch;
  }

  unary<I extends DescMessage, O extends DescMessage>(procedure: string, input: I, request: MessageInitShape<I>, output: O): Promise<MessageShape<O>> {
    return this.unaryParts(procedure, [encode(input, request)], output);
  }

  async unaryParts<O extends DescMessage>(procedure: string, payload: readonly Uint8Array[], output: O, signal?: AbortSignal): Promise<MessageShape<O>> {
    return fromBinary(output, await this.call(procedure, payload, signal));
  }

  async call(procedure: string, payload: readonly Uint8Array[], signal?: AbortSignal): Promise<Uint8Array> {
    if (this.closed) throw kindError("UNAVAILABLE", "the agent is closed");
    if (signal?.aborted) throw abortError(signal);
    const body = payload.length === 1 ? payload[0] : Buffer.concat(payload as Uint8Array[], partsLength(payload));
    let res: Response;
    try {
      res = await this.fetch(this.base + procedure, { method: "POST", headers: this.headers, body, signal });
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      const cause = (e as { cause?: Error }).cause;
      throw kindError("UNAVAILABLE", `agentfs server ${this.base}: ${cause?.message ?? (e as Error).message}`);
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.ok) return bytes;
    throw httpError(res.status, bytes, procedure);
  }

  /**
   * stream calls a server-streaming method with Connect's streaming
   * protocol: the request is one envelope (a flags byte, a 4-byte
   * big-endian length, the message), the answer a series of envelopes read
   * as they arrive, the last one flagged end-of-stream (0x02) with a JSON
   * object that holds the error, if any. Aborting closes the request, and
   * the server ends the call (StreamProcess kills its process).
   */
  async stream(procedure: string, payload: Uint8Array, onMessage: (payload: Uint8Array) => Promise<void> | void, signal?: AbortSignal): Promise<void> {
    if (this.closed) throw kindError("UNAVAILABLE", "the agent is closed");
    if (signal?.aborted) throw abortError(signal);
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.streams.add(ac);
    try {
      await this.streamOn(procedure, payload, onMessage, ac.signal);
    } catch (e) {
      if (this.closed && ac.signal.aborted && !signal?.aborted) throw kindError("UNAVAILABLE", "the agent is closed");
      throw e;
    } finally {
      this.streams.delete(ac);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private async streamOn(procedure: string, payload: Uint8Array, onMessage: (payload: Uint8Array) => Promise<void> | void, signal: AbortSignal): Promise<void> {
    const body = Buffer.alloc(5 + payload.byteLength);
    body.writeUInt32BE(payload.byteLength, 1);
    body.set(payload, 5);
    let res: Response;
    try {
      res = await this.fetch(this.base + procedure, { method: "POST", headers: { ...this.headers, "Content-Type": "application/connect+proto" }, body, signal });
    } catch (e) {
      if (signal?.aborted) throw abortError(signal);
      const cause = (e as { cause?: Error }).cause;
      throw kindError("UNAVAILABLE", `agentfs server ${this.base}: ${cause?.message ?? (e as Error).message}`);
    }
    if (!res.ok || !res.body) throw httpError(res.status, new Uint8Array(await res.arrayBuffer()), procedure);
    const reader = res.body.getReader();
    let buf = Buffer.alloc(0);
    try {
      for (;;) {
        while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
          const flags = buf[0], n = buf.readUInt32BE(1);
          const msg = buf.subarray(5, 5 + n);
          buf = buf.subarray(5 + n);
          if (flags & 0x02) {
            const end = parseJSON(msg) as { error?: ConnectErrorJSON } | undefined;
            if (end?.error) throw errorFromJSON(end.error, res.status, msg, procedure);
            return;
          }
          // Compression (0x01) is never asked for: this client sends no
          // Connect-Accept-Encoding.
          if (flags & 0x01) throw kindError("INTERNAL", `${procedure}: a compressed stream message that was not asked for`);
          // A consumer that is behind makes this read wait: the socket
          // stops, and the engine's bounded output buffer then stops the
          // script (the engine holds at most 1 MiB unread per process).
          const wait = onMessage(new Uint8Array(msg));
          if (wait) await untilAborted(wait, signal);
        }
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (e) {
          if (signal?.aborted) throw abortError(signal);
          throw kindError("UNAVAILABLE", `agentfs server ${this.base}: ${procedure}: ${(e as Error).message}`);
        }
        if (chunk.done) throw kindError("UNAVAILABLE", `agentfs server ${this.base}: ${procedure}: the stream ended without its end message`);
        buf = buf.length === 0 ? Buffer.from(chunk.value) : Buffer.concat([buf, chunk.value]);
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const ac of this.streams) ac.abort();
  }
}

/** untilAborted waits for p, or throws once signal aborts (close() ends a paused stream too). */
function untilAborted(p: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<void>((done, fail) => {
    const onAbort = () => fail(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(() => { signal.removeEventListener("abort", onAbort); done(); });
  });
}

type ConnectErrorJSON = { code?: string; message?: string; details?: { type?: string; value?: string }[] };

function parseJSON(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    return undefined;
  }
}

function httpError(status: number, body: Uint8Array, procedure: string): AgentFSError {
  return errorFromJSON(parseJSON(body) as ConnectErrorJSON | undefined, status, body, procedure);
}

function errorFromJSON(parsed: ConnectErrorJSON | undefined, status: number, body: Uint8Array, procedure: string): AgentFSError {
  for (const d of parsed?.details ?? []) {
    if (d.type === "agentfs.v1.Error" && d.value) return fromProto(fromBinary(ErrorSchema, Buffer.from(d.value, "base64")));
  }
  const kind = (parsed?.code && kinds[parsed.code]) || (status === 401 || status === 403 ? "PERMISSION_DENIED" : status === 404 ? "NOT_FOUND" : "INTERNAL");
  const msg = parsed?.message || Buffer.from(body).toString("utf8").slice(0, 200) || `HTTP ${status}`;
  const err = kindError(kind, `${procedure}: ${msg} (HTTP ${status})`);
  return err;
}
