// The stdio protocol's frames (spec/PROTOCOL.md): a 4-byte big-endian
// length, then one serialized agentfs.v1.Frame.
//
// The hot path (Call out, Result in) is encoded and decoded by hand rather
// than through protobuf-es: a Call frame is built as a small header plus the
// request payload's own buffers, so a 64 MiB WriteFile is never copied on
// the way to the pipe, and a Result's payload is a view into the received
// frame. Every other frame goes through the generated FrameSchema.

import { fromBinary } from "@bufbuild/protobuf";
import { ErrorSchema, type Error as ProtoError } from "./gen/agentfs/v1/errors_pb.js";
import { FrameSchema, type Frame } from "./gen/agentfs/v1/protocol_pb.js";

/** The largest frame either side accepts (PROTOCOL.md: MAX_FRAME). */
export const MAX_FRAME = 1 << 30;

/** The protocol version this SDK speaks. */
export const PROTOCOL_VERSION = 1;

const FRAME_ID = 0x08; // field 1, varint
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
