// Errors as node:fs raises them: an Error with code, errno (negative),
// syscall and path, and the message "ENOENT: no such file or directory,
// stat '/x'". Failures that are not filesystem errors (engine gone, bad
// credentials, unknown tool call) carry an ERR_AGENTFS_* code instead.

import { ErrorKind, type Error as ProtoError } from "./gen/agentfs/v1/errors_pb.js";

/** The class of every error the SDK raises. */
export class AgentFSError extends Error {
  /** POSIX name ("ENOENT") for filesystem errors, otherwise ERR_AGENTFS_<KIND>. */
  code: string;
  /** Negative errno, as node:fs (-2 for ENOENT); undefined for other errors. */
  errno?: number;
  /** The operation as node:fs names it ("stat", "open", ...). */
  syscall?: string;
  path?: string;
  dest?: string;
  /** The engine's class of a non-filesystem failure, e.g. "UNAVAILABLE". */
  kind: string;

  constructor(message: string, code: string, kind: string) {
    super(message);
    this.name = "Error";
    this.code = code;
    this.kind = kind;
  }
}

/** Kind names, as in agentfs.v1.ErrorKind without the prefix. */
function kindName(kind: ErrorKind): string {
  const name = ErrorKind[kind];
  return name ? name.replace(/^ERROR_KIND_/, "") : "UNSPECIFIED";
}

/** fromProto turns the engine's agentfs.v1.Error into an AgentFSError. */
export function fromProto(e: ProtoError): AgentFSError {
  let err: AgentFSError;
  if (e.code !== "") {
    err = new AgentFSError(e.message || `${e.code}: ${e.syscall} '${e.path}'`, e.code, "ERRNO");
    err.errno = -Math.abs(e.errno);
  } else {
    const kind = kindName(e.kind);
    err = new AgentFSError(e.message || kind.toLowerCase(), "ERR_AGENTFS_" + kind, kind);
  }
  if (e.syscall) err.syscall = e.syscall;
  if (e.path) err.path = e.path;
  if (e.dest) err.dest = e.dest;
  return err;
}

/** A failure without errno, of the given kind (e.g. "UNAVAILABLE"). */
export function kindError(kind: string, message: string): AgentFSError {
  return new AgentFSError(message, "ERR_AGENTFS_" + kind, kind);
}

const descriptions: Record<string, [number, string]> = {
  ENOENT: [2, "no such file or directory"],
  EBADF: [9, "bad file descriptor"],
  EEXIST: [17, "file already exists"],
  ENOTDIR: [20, "not a directory"],
  EISDIR: [21, "illegal operation on a directory"],
  EINVAL: [22, "invalid argument"],
};

/** errnoError builds a node:fs style error on the client side (e.g. a closed handle). */
export function errnoError(code: keyof typeof descriptions, syscall: string, path?: string): AgentFSError {
  const [errno, text] = descriptions[code];
  const err = new AgentFSError(`${code}: ${text}, ${syscall}${path !== undefined ? ` '${path}'` : ""}`, code, "ERRNO");
  err.errno = -errno;
  err.syscall = syscall;
  if (path !== undefined) err.path = path;
  return err;
}

/**
 * abortError is the rejection of a call whose AbortSignal fired, as
 * node:fs gives it: name "AbortError", code "ABORT_ERR", the reason as cause.
 */
export function abortError(signal: AbortSignal): Error {
  const e = new Error("The operation was aborted", { cause: signal.reason }) as Error & { code: string };
  e.name = "AbortError";
  e.code = "ABORT_ERR";
  return e;
}
