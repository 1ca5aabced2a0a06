import { create, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import type { UnaryTransport } from "./gen/agentfs/v1/clients_agentfs.js";

/**
 * Transport is what the idiomatic API calls: the generated clients' unary
 * call, plus unaryParts for requests the API encodes itself as a list of
 * buffers (WriteFile and Pwrite put the file data last, as its own buffer,
 * so it is never copied into a request message).
 */
export interface Transport extends UnaryTransport {
  /** Sends one call with a payload given as buffers; resolves with the response payload. */
  call(procedure: string, payload: readonly Uint8Array[], signal?: AbortSignal): Promise<Uint8Array>;
  unaryParts<O extends DescMessage>(procedure: string, payload: readonly Uint8Array[], output: O, signal?: AbortSignal): Promise<MessageShape<O>>;
  /** Stops the engine (stdio) or releases the connection (http). */
  close(): Promise<void>;
  /**
   * Sends a server-streaming call (ProcessService/StreamProcess): onMessage
   * receives each response message's bytes as the engine sends it (a
   * transport that can pause reading waits for a promise it returns); the
   * promise settles at the end of the stream (rejects with its error).
   * Transports that cannot stream leave it out; callers fall back to
   * long-poll calls.
   */
  stream?(procedure: string, payload: Uint8Array, onMessage: (payload: Uint8Array) => Promise<void> | void, signal?: AbortSignal): Promise<void>;
}

/** encode serializes a request given as an init object. */
export function encode<I extends DescMessage>(input: I, request: MessageInitShape<I>): Uint8Array {
  return toBinary(input, create(input, request));
}

/**
 * bytesField returns the buffers that append a bytes field to an encoded
 * message: protobuf allows fields in any order, so a request can be encoded
 * without its data and the data appended as it is.
 */
export function bytesField(field: number, data: Uint8Array): Uint8Array[] {
  const head: number[] = [(field << 3) | 2];
  let n = data.byteLength;
  while (n >= 0x80) {
    head.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  head.push(n);
  return [Uint8Array.from(head), data];
}
