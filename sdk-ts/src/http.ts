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

  async close(): Promise<void> {
    this.closed = true;
  }
}

function httpError(status: number, body: Uint8Array, procedure: string): AgentFSError {
  let parsed: { code?: string; message?: string; details?: { type?: string; value?: string }[] } | undefined;
  try {
    parsed = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    parsed = undefined;
  }
  for (const d of parsed?.details ?? []) {
    if (d.type === "agentfs.v1.Error" && d.value) return fromProto(fromBinary(ErrorSchema, Buffer.from(d.value, "base64")));
  }
  const kind = (parsed?.code && kinds[parsed.code]) || (status === 401 || status === 403 ? "PERMISSION_DENIED" : status === 404 ? "NOT_FOUND" : "INTERNAL");
  const msg = parsed?.message || Buffer.from(body).toString("utf8").slice(0, 200) || `HTTP ${status}`;
  const err = kindError(kind, `${procedure}: ${msg} (HTTP ${status})`);
  return err;
}
