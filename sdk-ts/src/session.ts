// Agent sessions (SessionService): a conversation with a model whose tool
// calls run on the agent inside the engine. See docs/SESSIONS.md.
import { SessionServiceClient } from "./gen/agentfs/v1/clients_agentfs.js";
import type { SessionInfo as SessionInfoPb, SessionEvent as SessionEventPb } from "./gen/agentfs/v1/session_pb.js";
import type { Transport } from "./transport.js";

/** Options of `agent.openSession`; empty ones come from the stored session, then the engine's environment. */
export interface SessionOptions {
  /** The session to resume or create (default: a new one). */
  id?: string;
  /** "openai" (Chat Completions) or "anthropic" (Messages). */
  provider?: "openai" | "anthropic";
  model?: string;
  /** Base URL and key of the model server (an HTTP server refuses them: its operator sets them). */
  baseUrl?: string;
  apiKey?: string;
  /** System prompt of a new session. */
  system?: string;
  /** Tools offered (default: all eight); readOnly leaves out the writing ones. */
  tools?: string[];
  readOnly?: boolean;
  /** Sandbox of the tools: limits profile, commands, path prefixes every tool may read and write. */
  limits?: "normal" | "hardened" | "none";
  allow?: string[];
  deny?: string[];
  readable?: string[];
  writable?: string[];
  /** Bounds (default: the engine's). */
  maxTurns?: number;
  maxTokens?: number;
  maxResponseBytes?: number;
  timeoutMs?: number;
}

/** One step of a prompt; the last is always "done". */
export interface SessionEvent {
  type: "text" | "tool_call" | "tool_result" | "error" | "done";
  text?: string;
  toolCallId?: string;
  toolName?: string;
  /** Parsed JSON. */
  arguments?: unknown;
  result?: unknown;
  isError?: boolean;
  error?: string;
  stopReason?: string;
  turn?: number;
  inputTokens?: number;
  outputTokens?: number;
}

export interface SessionInfo {
  id: string;
  provider: string;
  model: string;
  messages: number;
  created?: Date;
  updated?: Date;
}

function infoOf(i: SessionInfoPb | undefined): SessionInfo {
  const out: SessionInfo = { id: i?.sessionId ?? "", provider: i?.provider ?? "", model: i?.model ?? "", messages: i?.messages ?? 0 };
  if (i && i.createdUnixMs) {
    out.created = new Date(Number(i.createdUnixMs));
    out.updated = new Date(Number(i.updatedUnixMs));
  }
  return out;
}

function parse(s: string): unknown {
  try { return JSON.parse(s); } catch { return s; }
}

function eventOf(e: SessionEventPb): SessionEvent {
  const ev: SessionEvent = { type: e.type as SessionEvent["type"] };
  if (e.text) ev.text = e.text;
  if (e.toolCallId) ev.toolCallId = e.toolCallId;
  if (e.toolName) ev.toolName = e.toolName;
  if (e.argumentsJson) ev.arguments = parse(e.argumentsJson);
  if (e.resultJson) ev.result = parse(e.resultJson);
  if (e.isError) ev.isError = true;
  if (e.error) ev.error = e.error;
  if (e.stopReason) ev.stopReason = e.stopReason;
  if (e.turn) ev.turn = e.turn;
  if (e.inputTokens) ev.inputTokens = Number(e.inputTokens);
  if (e.outputTokens) ev.outputTokens = Number(e.outputTokens);
  return ev;
}

/** An open agent session (`agent.openSession`). */
export class Session {
  constructor(private readonly rpc: SessionServiceClient, readonly info: SessionInfo) {}

  get id(): string { return this.info.id; }

  /**
   * Sends a prompt; its events come as the engine produces them
   * (`for await (const ev of session.prompt("..."))`). A failed prompt
   * yields its "error" event, then "done". Leaving the loop early (or
   * the signal) cancels the prompt; completed turns stay in the history.
   */
  async *prompt(text: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<SessionEvent, void, undefined> {
    await this.rpc.prompt({ sessionId: this.id, text });
    const onAbort = () => { this.cancel().catch(() => {}); };
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    let finished = false;
    try {
      for (;;) {
        const r = await this.rpc.readSessionEvents({ sessionId: this.id, waitMs: 30000 });
        for (const e of r.events) {
          const ev = eventOf(e);
          if (ev.type === "done") finished = true;
          yield ev;
          if (finished) return;
        }
        if (r.idle) { finished = true; return; }
      }
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
      if (!finished) {
        // Stopped early: cancel and drain, so the next prompt can start.
        await this.cancel().catch(() => {});
        for (;;) {
          const r = await this.rpc.readSessionEvents({ sessionId: this.id, waitMs: 1000 }).catch(() => undefined);
          if (!r || r.idle) break;
        }
      }
    }
  }

  /** Sends a prompt and resolves with its whole text; rejects with the prompt's error. */
  async run(text: string): Promise<{ text: string; events: SessionEvent[] }> {
    const events: SessionEvent[] = [];
    let out = "";
    let failure: string | undefined;
    for await (const ev of this.prompt(text)) {
      events.push(ev);
      if (ev.type === "text") out += ev.text ?? "";
      if (ev.type === "error") failure = ev.error ?? "";
    }
    if (failure !== undefined) throw Object.assign(new Error(`prompt failed: ${failure}`), { events });
    return { text: out, events };
  }

  /** Stops the running prompt. */
  async cancel(): Promise<void> {
    await this.rpc.cancelPrompt({ sessionId: this.id });
  }

  /** Cancels a running prompt and forgets the open session; the conversation stays stored. */
  async close(): Promise<void> {
    await this.rpc.closeSession({ sessionId: this.id });
  }
}

/** The session methods of an agent. */
export class Sessions {
  readonly rpc: SessionServiceClient;
  constructor(transport: Transport) {
    this.rpc = new SessionServiceClient(transport);
  }

  async open(o: SessionOptions = {}): Promise<Session> {
    const r = await this.rpc.openSession({
      sessionId: o.id ?? "", provider: o.provider ?? "", model: o.model ?? "", baseUrl: o.baseUrl ?? "", apiKey: o.apiKey ?? "",
      system: o.system ?? "", tools: o.tools ?? [], readOnly: o.readOnly ?? false,
      policy: {
        limits: o.limits ?? "", allow: o.allow ?? [], deny: o.deny ?? [], readable: o.readable ?? [], writable: o.writable ?? [],
        restrictPaths: o.readable !== undefined || o.writable !== undefined,
      },
      maxTurns: o.maxTurns ?? 0, maxTokens: o.maxTokens ?? 0, maxResponseBytes: BigInt(o.maxResponseBytes ?? 0), timeoutMs: o.timeoutMs ?? 0,
    });
    return new Session(this.rpc, infoOf(r.session));
  }

  async list(): Promise<SessionInfo[]> {
    return (await this.rpc.listSessions({})).sessions.map(infoOf);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.rpc.deleteSession({ sessionId: id })).deleted;
  }
}
