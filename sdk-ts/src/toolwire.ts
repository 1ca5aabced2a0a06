// The tool-call log's hot messages (spec/proto/agentfs/v1/tools.proto),
// encoded and decoded by hand, as wire.ts does for frames.
//
// Through protobuf-es, getRecent of 10,000 calls spent about three times
// longer turning the answer into objects than the engine spent reading
// them: a generic reflective decoder building one message per call, with
// every int64 a BigInt and every string a TextDecoder call, then a second
// pass building agentfs-sdk's objects. Here the answer is read once,
// straight into those objects, numbers as numbers; and tools.record, which
// is mostly the engine's commit, no longer pays for create() and
// toBinary() of its request. The messages are the generated ones, byte
// for byte: the engine and every other client read them with their own
// generated code, and the SDK's tests run the API on every transport.

import type { ToolCall } from "./tools.js";

// Wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

const STATUS: readonly (ToolCall["status"] | undefined)[] = [undefined, "pending", "success", "error"];

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Under Node, Buffer's utf8Slice decodes short strings several times
// faster than TextDecoder (the same replacement of invalid bytes); a
// browser's Buffer is a JavaScript polyfill, so there TextDecoder is used.
const nodeUtf8: ((this: Uint8Array, start: number, end: number) => string) | undefined =
  typeof process === "object" && process?.versions?.node && typeof Buffer === "function"
    ? (Buffer.prototype as unknown as { utf8Slice?: (this: Uint8Array, start: number, end: number) => string }).utf8Slice
    : undefined;

function utf8(b: Uint8Array, start: number, end: number): string {
  if (nodeUtf8) return nodeUtf8.call(b, start, end);
  return decoder.decode(b.subarray(start, end));
}

/** The UTF-8 length of s as TextEncoder writes it (a lone surrogate becomes U+FFFD). */
function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // the pair's two units become four bytes
      i++;
    } else n += 2;
  }
  return n;
}

function varintSize(n: number): number {
  if (n < 0) return 10;
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** A message under construction: fields are sized first, then written in order. */
class Writer {
  readonly buf: Uint8Array;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  /** An int64 field's value: a negative one is its 64-bit two's complement, ten bytes. */
  varint(n: number): void {
    const b = this.buf;
    if (n < 0) {
      let v = BigInt.asUintN(64, BigInt(n));
      while (v >= 0x80n) {
        b[this.pos++] = Number(v & 0x7fn) | 0x80;
        v >>= 7n;
      }
      b[this.pos++] = Number(v);
      return;
    }
    while (n >= 0x80) {
      b[this.pos++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    b[this.pos++] = n;
  }

  string(field: number, s: string, len: number): void {
    this.buf[this.pos++] = (field << 3) | LEN;
    this.varint(len);
    if (len === s.length) {
      // ASCII: one byte per unit, no encoder call.
      for (let i = 0; i < len; i++) this.buf[this.pos + i] = s.charCodeAt(i);
    } else {
      encoder.encodeInto(s, this.buf.subarray(this.pos, this.pos + len));
    }
    this.pos += len;
  }

  int(field: number, n: number): void {
    this.buf[this.pos++] = (field << 3) | VARINT;
    this.varint(n);
  }
}

const fieldSize = (n: number) => 1 + varintSize(n);
const stringSize = (len: number) => 1 + varintSize(len) + len;

/** An integer that fits int64 as a number (the API's times and ids are whole numbers). */
function int64(n: number, what: string): number {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be a whole number of at most 2^53, got ${n}`);
  return n;
}

/** agentfs.v1.ToolRecordRequest. */
export function encodeRecord(name: string, startedAt: number, completedAt: number, parameters?: string, result?: string, error?: string): Uint8Array {
  int64(startedAt, "started_at");
  int64(completedAt, "completed_at");
  const nl = utf8Length(name);
  const pl = parameters === undefined ? -1 : utf8Length(parameters);
  const rl = result === undefined ? -1 : utf8Length(result);
  const el = error === undefined ? -1 : utf8Length(error);
  let size = 0;
  if (nl > 0) size += stringSize(nl);
  if (startedAt !== 0) size += fieldSize(startedAt);
  if (completedAt !== 0) size += fieldSize(completedAt);
  if (pl >= 0) size += stringSize(pl);
  if (rl >= 0) size += stringSize(rl);
  if (el >= 0) size += stringSize(el);
  const w = new Writer(size);
  if (nl > 0) w.string(1, name, nl);
  if (startedAt !== 0) w.int(2, startedAt);
  if (completedAt !== 0) w.int(3, completedAt);
  if (pl >= 0) w.string(4, parameters!, pl);
  if (rl >= 0) w.string(5, result!, rl);
  if (el >= 0) w.string(6, error!, el);
  return w.buf;
}

/** agentfs.v1.ToolGetRequest. */
export function encodeGet(id: number): Uint8Array {
  int64(id, "id");
  const w = new Writer(id !== 0 ? fieldSize(id) : 0);
  if (id !== 0) w.int(1, id);
  return w.buf;
}

/** agentfs.v1.ToolListRequest (name, since, limit: what the API's listings filter on). */
export function encodeList(name: string, since: number, limit: number): Uint8Array {
  int64(since, "since");
  int64(limit, "limit");
  const nl = utf8Length(name);
  let size = 0;
  if (nl > 0) size += stringSize(nl);
  if (since !== 0) size += fieldSize(since);
  if (limit !== 0) size += fieldSize(limit);
  const w = new Writer(size);
  if (nl > 0) w.string(1, name, nl);
  if (since !== 0) w.int(3, since);
  if (limit !== 0) w.int(5, limit);
  return w.buf;
}

/** Reads messages: pos moves past what each call reads. */
class Reader {
  pos = 0;

  constructor(
    readonly buf: Uint8Array,
    readonly end = buf.length,
  ) {}

  /** A varint as an int64 number: ten-byte (negative) values are read exactly. */
  varint(): number {
    const b = this.buf;
    const start = this.pos;
    let n = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new RangeError("truncated message");
      const x = b[this.pos++];
      n += (x & 0x7f) * mul;
      if (x < 0x80) break;
      mul *= 128;
      if (mul > 2 ** 49) return this.bigVarint(start);
    }
    return n;
  }

  // Past 7 bytes a number loses precision: read the varint as a BigInt.
  private bigVarint(start: number): number {
    this.pos = start;
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end || shift > 63n) throw new RangeError("bad varint");
      const x = this.buf[this.pos++];
      v |= BigInt(x & 0x7f) << shift;
      if (x < 0x80) break;
      shift += 7n;
    }
    return Number(BigInt.asIntN(64, v));
  }

  /** The bounds of a length-delimited field's bytes. */
  bytes(): number {
    const len = this.varint();
    const start = this.pos;
    if (len < 0 || start + len > this.end) throw new RangeError("truncated message");
    this.pos = start + len;
    return start;
  }

  skip(wire: number): void {
    switch (wire) {
      case VARINT:
        this.varint();
        return;
      case I64:
        this.pos += 8;
        break;
      case LEN:
        this.bytes();
        return;
      case I32:
        this.pos += 4;
        break;
      default:
        throw new RangeError(`unsupported wire type ${wire}`);
    }
    if (this.pos > this.end) throw new RangeError("truncated message");
  }
}

/** One agentfs.v1.ToolCall in r's buffer up to end, as agentfs-sdk's object. */
function readCall(r: Reader, end: number): ToolCall {
  const b = r.buf;
  let id = 0;
  let name = "";
  let parameters: unknown;
  let result: unknown;
  let error: string | undefined;
  let status = 0;
  let startedAt = 0;
  let completedAt: number | undefined;
  let durationMs: number | undefined;
  while (r.pos < end) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === VARINT) {
      const v = r.varint();
      switch (field) {
        case 1: id = v; break;
        case 6: status = v; break;
        case 7: startedAt = v; break;
        case 8: completedAt = v; break;
        case 9: durationMs = v; break;
      }
    } else if (wire === LEN && field >= 2 && field <= 5) {
      const s = r.bytes();
      const text = utf8(b, s, r.pos);
      switch (field) {
        case 2: name = text; break;
        case 3: parameters = JSON.parse(text); break;
        case 4: result = JSON.parse(text); break;
        case 5: error = text; break;
      }
    } else {
      r.skip(wire);
    }
  }
  if (r.pos !== end) throw new RangeError("truncated message");
  // The shape of agentfs-sdk's rowToToolCall: every key, in its order.
  return {
    id,
    name,
    parameters,
    result,
    error,
    status: STATUS[status] ?? "pending",
    started_at: startedAt,
    completed_at: completedAt,
    duration_ms: durationMs,
  };
}

/** agentfs.v1.ToolListResponse: the calls. */
export function decodeList(buf: Uint8Array): ToolCall[] {
  const r = new Reader(buf);
  const out: ToolCall[] = [];
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | LEN)) {
      const s = r.bytes();
      const end = r.pos;
      r.pos = s;
      out.push(readCall(r, end));
    } else r.skip(tag & 7);
  }
  return out;
}

/** agentfs.v1.ToolGetResponse: the call, or undefined when not found. */
export function decodeGet(buf: Uint8Array): ToolCall | undefined {
  const r = new Reader(buf);
  let found = false;
  let call: ToolCall | undefined;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | VARINT)) found = r.varint() !== 0;
    else if (tag === ((2 << 3) | LEN)) {
      const s = r.bytes();
      const end = r.pos;
      r.pos = s;
      call = readCall(r, end);
    } else r.skip(tag & 7);
  }
  return found ? call : undefined;
}

/** The id (field 1) of a ToolRecordResponse or ToolStartResponse. */
export function decodeId(buf: Uint8Array): number {
  const r = new Reader(buf);
  let id = 0;
  while (r.pos < r.end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | VARINT)) id = r.varint();
    else r.skip(tag & 7);
  }
  return id;
}
