// The stdio protocol's frames (spec/PROTOCOL.md): a 4-byte big-endian
// length, then one serialized agentfs.v1.Frame.
//
// The hot path (Call out, Result in) is encoded and decoded by hand rather
// than through protobuf-es: a Call frame is built as a small header plus the
// request payload's own buffers, so a 64 MiB WriteFile is never copied on
// the way to the pipe, and a Result's payload is a view into the received
// frame. So are the handshake (Hello out, Welcome in) and WriteFile's
// request: with them, opening an agent and writing its first file build
// no protobuf-es descriptor (they are built at first use, lazydesc.ts),
// which is most of the SDK's own cold start. Every other frame goes
// through the generated FrameSchema.

import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import type { InfoResponse } from "./gen/agentfs/v1/agent_pb.js";
import { ErrorSchema, type Error as ProtoError } from "./gen/agentfs/v1/errors_pb.js";
import { FrameSchema, type Frame, type OpenOptionsSchema } from "./gen/agentfs/v1/protocol_pb.js";

/** The largest frame either side accepts (PROTOCOL.md: MAX_FRAME). */
export const MAX_FRAME = 1 << 30;

/** The protocol version this SDK speaks. */
export const PROTOCOL_VERSION = 1;

const FRAME_ID = 0x08; // field 1, varint
const FRAME_WELCOME = 0x1a; // field 3, length-delimited
const FRAME_CALL = 0x22; // field 4, length-delimited
const FRAME_RESULT = 0x2a; // field 5, length-delimited
const CALL_METHOD = 0x0a; // field 1, length-delimited
const CALL_PAYLOAD = 0x12; // field 2, length-delimited
const RESULT_PAYLOAD = 0x0a; // field 1
const RESULT_ERROR = 0x12; // field 2

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function putVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  buf[pos++] = n;
  return pos;
}

/** Total length of a list of buffers. */
export function partsLength(parts: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  return n;
}

/**
 * callFrame returns the buffers of one Call frame: a header (length prefix,
 * id, method and the nested lengths) followed by the payload parts as they
 * are. Writing them in order to the pipe sends the frame.
 */
export function callFrame(id: number, method: Buffer, payload: readonly Uint8Array[]): Uint8Array[] {
  const payloadLen = partsLength(payload);
  const callLen = 1 + varintSize(method.length) + method.length + 1 + varintSize(payloadLen) + payloadLen;
  const frameLen = 1 + varintSize(id) + 1 + varintSize(callLen) + callLen;
  if (frameLen > MAX_FRAME) {
    throw new RangeError(`request of ${payloadLen} bytes exceeds the stdio frame limit (1 GiB): use open() and pwrite() for larger files`);
  }
  const headerLen = 4 + frameLen - payloadLen;
  // Small frames are sent as one buffer (one write syscall); large payloads
  // are sent as they are, after the header.
  const single = payloadLen <= 16384;
  const buf = Buffer.allocUnsafe(single ? 4 + frameLen : headerLen);
  buf.writeUInt32BE(frameLen, 0);
  let pos = 4;
  buf[pos++] = FRAME_ID;
  pos = putVarint(buf, pos, id);
  buf[pos++] = FRAME_CALL;
  pos = putVarint(buf, pos, callLen);
  buf[pos++] = CALL_METHOD;
  pos = putVarint(buf, pos, method.length);
  pos += method.copy(buf, pos);
  buf[pos++] = CALL_PAYLOAD;
  pos = putVarint(buf, pos, payloadLen);
  if (!single) return [buf, ...payload];
  for (const p of payload) {
    buf.set(p, pos);
    pos += p.byteLength;
  }
  return [buf];
}

/** encodeFrame serializes any frame with its length prefix (handshake, ping, shutdown). */
export function encodeFrame(bytes: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(4 + bytes.byteLength);
  buf.writeUInt32BE(bytes.byteLength, 0);
  buf.set(bytes, 4);
  return buf;
}

/** A received Result frame: the payload, or the error. */
export interface ResultFrame {
  id: number;
  payload?: Uint8Array;
  error?: ProtoError;
}

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let n = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new RangeError("truncated varint");
    const b = buf[pos++];
    n += (b & 0x7f) * mul;
    if (b < 0x80) return [n, pos];
    mul *= 128;
    if (mul > 2 ** 63) throw new RangeError("varint too long");
  }
}

/**
 * decodeResult reads a frame that is an id plus a Result, the shape of
 * nearly every frame the engine sends; it returns undefined for any other
 * frame (the caller then decodes it with decodeFrame).
 */
export function decodeResult(buf: Uint8Array): ResultFrame | undefined {
  let pos = 0;
  let id = 0;
  let result: Uint8Array | undefined;
  while (pos < buf.length) {
    const tag = buf[pos++];
    if (tag === FRAME_ID) {
      [id, pos] = readVarint(buf, pos);
    } else if (tag === FRAME_RESULT) {
      let len: number;
      [len, pos] = readVarint(buf, pos);
      result = buf.subarray(pos, pos + len);
      pos += len;
    } else {
      return undefined;
    }
  }
  if (result === undefined) return undefined;
  return decodeResultBody(id, result);
}

/** decodeResultBody reads a serialized agentfs.v1.Result (undefined if it is not one). */
export function decodeResultBody(id: number, result: Uint8Array): ResultFrame | undefined {
  const out: ResultFrame = { id };
  let pos = 0;
  while (pos < result.length) {
    const tag = result[pos++];
    let len: number;
    [len, pos] = readVarint(result, pos);
    if (tag === RESULT_PAYLOAD) out.payload = result.subarray(pos, pos + len);
    else if (tag === RESULT_ERROR) out.error = fromBinary(ErrorSchema, result.subarray(pos, pos + len));
    else return undefined;
    pos += len;
  }
  return out;
}

// ---- hand-written codecs of a few messages (see the top of the file) ----

const VARINT = 0;
const LEN = 2;

/** The proto3 scalar kinds the codecs below handle (implicit presence: zero values are not sent). */
type Kind = "string" | "bool" | "uint32" | "int64" | "bytes";

/**
 * A message's fields by property name: number and kind. The type demands
 * every field of the generated message, so a field added to the .proto
 * fails the build until its line is added here.
 */
type FieldTable<T> = { readonly [K in keyof Required<Omit<T, "$typeName" | "$unknown">>]: readonly [number, Kind] };

const OPEN_OPTIONS: FieldTable<MessageInitShape<typeof OpenOptionsSchema>> = {
  id: [1, "string"],
  path: [2, "string"],
  noCreate: [3, "bool"],
  readOnly: [4, "bool"],
  chunkSize: [5, "int64"],
  durability: [6, "string"],
  dir: [7, "string"],
  encryptionKey: [8, "bytes"],
  cipher: [9, "string"],
  syncRemoteUrl: [10, "string"],
  syncToken: [11, "string"],
  syncPartialBootstrapLength: [12, "int64"],
  syncPartialBootstrapQuery: [13, "string"],
  syncPartialSegmentSize: [14, "int64"],
  syncPartialPrefetch: [15, "bool"],
};

const INFO_RESPONSE: FieldTable<InfoResponse> = {
  id: [1, "string"],
  path: [2, "string"],
  schemaVersion: [3, "string"],
  chunkSize: [4, "int64"],
  pageSize: [5, "int64"],
  readOnly: [6, "bool"],
  overlayBase: [7, "string"],
  engineVersion: [8, "string"],
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * valid tells whether v is a value the codecs below encode exactly as
 * protobuf-es does (undefined: the field is unset). Anything else (a
 * number where a bigint belongs, an int64 out of range...) goes through
 * protobuf-es instead, which converts it or fails with its own error.
 */
function valid(kind: Kind, v: unknown): boolean {
  if (v === undefined) return true;
  switch (kind) {
    case "string":
      return typeof v === "string";
    case "bool":
      return typeof v === "boolean";
    case "bytes":
      return v instanceof Uint8Array;
    case "uint32":
      return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;
    case "int64":
      return typeof v === "bigint" && v >= INT64_MIN && v <= INT64_MAX;
  }
}

/** Appends protobuf fields to a list of byte arrays. */
class Writer {
  readonly parts: Uint8Array[] = [];

  private varint(n: bigint | number): void {
    let v = BigInt.asUintN(64, BigInt(n));
    const b: number[] = [];
    while (v >= 0x80n) {
      b.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    b.push(Number(v));
    this.parts.push(Uint8Array.from(b));
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  bytes(field: number, b: Uint8Array): void {
    this.tag(field, LEN);
    this.varint(b.byteLength);
    this.parts.push(b);
  }

  /** A field of a scalar kind; zero values are left out, as protobuf-es does for proto3. */
  scalar(field: number, kind: Kind, v: unknown): void {
    if (v === undefined || v === null) return;
    switch (kind) {
      case "string":
        if (v !== "") this.bytes(field, Buffer.from(v as string, "utf8"));
        return;
      case "bytes":
        if ((v as Uint8Array).byteLength > 0) this.bytes(field, v as Uint8Array);
        return;
      case "bool":
        if (v) {
          this.tag(field, VARINT);
          this.varint(1);
        }
        return;
      case "uint32":
      case "int64":
        if (BigInt(v as number | bigint) !== 0n) {
          this.tag(field, VARINT);
          this.varint(kind === "uint32" ? BigInt.asUintN(32, BigInt(v as number)) : (v as bigint | number));
        }
        return;
    }
  }

  /** Writes value's fields; false when one is not a valid value of its kind (nothing usable was written). */
  fields<T>(table: FieldTable<T>, value: Partial<T>): boolean {
    for (const [name, [field, kind]] of Object.entries(table) as [string, readonly [number, Kind]][]) {
      const v = (value as Record<string, unknown>)[name];
      if (!valid(kind, v)) return false;
      this.scalar(field, kind, v);
    }
    return true;
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

/**
 * helloFrame serializes Frame{id, hello: Hello{protocol_version, client,
 * open}}, as toBinary(FrameSchema, ...) would; undefined when an option
 * is not a plain value of its field (the caller then uses protobuf-es).
 */
export function helloFrame(id: number, client: string, open: MessageInitShape<typeof OpenOptionsSchema>): Uint8Array | undefined {
  const o = new Writer();
  if (!o.fields(OPEN_OPTIONS, open)) return undefined;
  const h = new Writer();
  h.scalar(1, "uint32", PROTOCOL_VERSION);
  h.scalar(2, "string", client);
  h.bytes(3, o.finish());
  const f = new Writer();
  f.scalar(1, "int64", id);
  f.bytes(2, h.finish());
  return f.finish();
}

/**
 * shutdownFrame serializes Frame{id, shutdown: {}}, as toBinary(FrameSchema,
 * ...) would. By hand, so that close() builds no descriptor: an agent that
 * only read and wrote files never needed one, and building them is several
 * milliseconds of a short-lived process's exit.
 */
export function shutdownFrame(id: number): Uint8Array {
  const f = new Writer();
  f.scalar(1, "int64", id);
  f.bytes(9, new Uint8Array(0));
  return f.finish();
}

/**
 * writeFileHead serializes a WriteFileRequest without its data (field 2,
 * which the caller appends with bytesField): path, mode, create_parents,
 * append, exclusive. It is sent for every writeFile, so it is built in
 * one buffer of its exact size. Undefined when a value is not a plain one
 * of its field.
 */
export function writeFileHead(path: string, mode: number, createParents: boolean, append: boolean, exclusive: boolean): Uint8Array | undefined {
  // Anything but plain values goes through protobuf-es (its conversions and errors).
  if (!valid("string", path) || !valid("uint32", mode) || typeof createParents !== "boolean") return undefined;
  const plen = Buffer.byteLength(path, "utf8");
  const size = (plen > 0 ? 1 + varintSize(plen) + plen : 0) + (mode !== 0 ? 1 + varintSize(mode) : 0) + (createParents ? 2 : 0) + (append ? 2 : 0) + (exclusive ? 2 : 0);
  const buf = Buffer.allocUnsafe(size);
  let pos = 0;
  if (plen > 0) {
    buf[pos++] = 0x0a; // field 1, length-delimited
    pos = putVarint(buf, pos, plen);
    pos += buf.write(path, pos, "utf8");
  }
  if (mode !== 0) {
    buf[pos++] = 0x18; // field 3, varint
    pos = putVarint(buf, pos, mode);
  }
  if (createParents) (buf[pos++] = 0x20), (buf[pos++] = 1); // field 4
  if (append) (buf[pos++] = 0x28), (buf[pos++] = 1); // field 5
  if (exclusive) (buf[pos++] = 0x30), (buf[pos++] = 1); // field 6
  return buf;
}

/** The engine's Welcome, read from its frame. */
export interface WelcomeFrame {
  id: number;
  engineVersion: string;
  info: InfoResponse | undefined;
}

function readLen(buf: Uint8Array, pos: number): [Uint8Array, number] {
  let len: number;
  [len, pos] = readVarint(buf, pos);
  if (pos + len > buf.length) throw new RangeError("truncated field");
  return [buf.subarray(pos, pos + len), pos + len];
}

const utf8 = new TextDecoder();

/**
 * decodeInfo reads an InfoResponse into the object fromBinary would make,
 * or returns undefined when it holds anything else (a field this SDK does
 * not know, another wire type), for fromBinary to read.
 */
function decodeInfo(buf: Uint8Array): InfoResponse | undefined {
  const byNumber = new Map<number, [string, Kind]>();
  for (const [name, [field, kind]] of Object.entries(INFO_RESPONSE) as [string, readonly [number, Kind]][]) byNumber.set(field, [name, kind]);
  const m: Record<string, unknown> = { $typeName: "agentfs.v1.InfoResponse" };
  for (const [name, [, kind]] of Object.entries(INFO_RESPONSE) as [string, readonly [number, Kind]][]) m[name] = kind === "string" ? "" : kind === "bool" ? false : 0n;
  let pos = 0;
  while (pos < buf.length) {
    let tag: number;
    [tag, pos] = readVarint(buf, pos);
    const f = byNumber.get(Math.floor(tag / 8));
    if (!f) return undefined;
    const [name, kind] = f;
    if (kind === "string") {
      if (tag % 8 !== LEN) return undefined;
      let b: Uint8Array;
      [b, pos] = readLen(buf, pos);
      m[name] = utf8.decode(b);
    } else {
      if (tag % 8 !== VARINT) return undefined;
      const start = pos;
      [, pos] = readVarint(buf, pos);
      let v = 0n;
      for (let i = pos - 1; i >= start; i--) v = (v << 7n) | BigInt(buf[i] & 0x7f);
      m[name] = kind === "bool" ? v !== 0n : BigInt.asIntN(64, v);
    }
  }
  return m as unknown as InfoResponse;
}

/**
 * decodeWelcome reads Frame{id, welcome: Welcome{protocol_version,
 * engine_version, info}}, or returns undefined for any other frame (or
 * one with fields this SDK does not know), which decodeFrame then reads.
 */
export function decodeWelcome(buf: Uint8Array): WelcomeFrame | undefined {
  let pos = 0;
  let id = 0;
  let welcome: Uint8Array | undefined;
  while (pos < buf.length) {
    const tag = buf[pos++];
    if (tag === FRAME_ID) [id, pos] = readVarint(buf, pos);
    else if (tag === FRAME_WELCOME) [welcome, pos] = readLen(buf, pos);
    else return undefined;
  }
  if (!welcome) return undefined;
  const out: WelcomeFrame = { id, engineVersion: "", info: undefined };
  pos = 0;
  while (pos < welcome.length) {
    const tag = welcome[pos++];
    if (tag === 0x08) {
      [, pos] = readVarint(welcome, pos); // protocol_version: the engine checked it
    } else if (tag === 0x12) {
      let b: Uint8Array;
      [b, pos] = readLen(welcome, pos);
      out.engineVersion = utf8.decode(b);
    } else if (tag === 0x1a) {
      let b: Uint8Array;
      [b, pos] = readLen(welcome, pos);
      out.info = decodeInfo(b);
      if (!out.info) return undefined;
    } else {
      return undefined;
    }
  }
  return out;
}

/** decodeFrame decodes any frame with the generated schema. */
export function decodeFrame(buf: Uint8Array): Frame {
  return fromBinary(FrameSchema, buf);
}

/**
 * FrameReader cuts a byte stream into frames. A frame that arrives within
 * one chunk is returned as a view of that chunk; a frame spread over chunks
 * is assembled once into a buffer of its exact size (no repeated
 * concatenation while a large frame trickles in).
 */
export class FrameReader {
  private head: Buffer | undefined; // unconsumed bytes shorter than a length prefix or a whole small frame
  private big: Buffer | undefined; // the frame being assembled
  private bigFill = 0;

  constructor(private readonly onFrame: (frame: Buffer) => void) {}

  push(chunk: Buffer): void {
    if (this.big) {
      const need = this.big.length - this.bigFill;
      const n = Math.min(need, chunk.length);
      chunk.copy(this.big, this.bigFill, 0, n);
      this.bigFill += n;
      if (this.bigFill < this.big.length) return;
      const frame = this.big;
      this.big = undefined;
      this.onFrame(frame);
      chunk = chunk.subarray(n);
      if (chunk.length === 0) return;
    }
    if (this.head) {
      chunk = Buffer.concat([this.head, chunk]);
      this.head = undefined;
    }
    let pos = 0;
    while (chunk.length - pos >= 4) {
      const len = chunk.readUInt32BE(pos);
      if (len > MAX_FRAME) throw new RangeError(`frame of ${len} bytes exceeds the 1 GiB limit`);
      if (chunk.length - pos - 4 >= len) {
        this.onFrame(chunk.subarray(pos + 4, pos + 4 + len));
        pos += 4 + len;
        continue;
      }
      if (len > 65536) {
        this.big = Buffer.allocUnsafe(len);
        this.bigFill = chunk.copy(this.big, 0, pos + 4);
        return;
      }
      break;
    }
    if (pos < chunk.length) this.head = chunk.subarray(pos);
  }
}
