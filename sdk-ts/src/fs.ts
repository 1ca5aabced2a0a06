// agent.fs: the filesystem with agentfs-sdk 0.6.4's method names and
// shapes (plus chmod, chown, utimes, link, truncate and friends), every
// call one request to the engine.

import { fromBinary } from "@bufbuild/protobuf";
import { FilesystemServiceClient, FilesystemServiceProcedures as P } from "./gen/agentfs/v1/clients_agentfs.js";
import {
  PwriteRequestSchema,
  ReadFileRequestSchema,
  ReadFileResponseSchema,
  PwriteResponseSchema,
  StatResponseSchema,
  WriteFileRequestSchema,
  type Stat,
} from "./gen/agentfs/v1/filesystem_pb.js";
import { errnoError } from "./errors.js";
import { bytesField, encode, type Transport } from "./transport.js";
import { writeFileHead } from "./wire.js";

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;
export const S_IFSOCK = 0o140000;
export const DEFAULT_FILE_MODE = S_IFREG | 0o644;
export const DEFAULT_DIR_MODE = S_IFDIR | 0o755;

const NS_PER_S = 1_000_000_000n;

/**
 * Stats of a file, with agentfs-sdk's fields (atime, mtime and ctime in
 * whole seconds) and node:fs's extras (atimeMs..., blksize, blocks, rdev).
 */
export class Stats {
  ino: number;
  mode: number;
  nlink: number;
  uid: number;
  gid: number;
  size: number;
  rdev: number;
  blksize: number;
  blocks: number;
  /** Seconds since the epoch, as agentfs-sdk. */
  atime: number;
  mtime: number;
  ctime: number;
  /** Milliseconds since the epoch (with fraction), as node:fs. */
  atimeMs: number;
  mtimeMs: number;
  ctimeMs: number;
  /** Nanoseconds since the epoch. */
  atimeNs: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;

  constructor(s: Stat) {
    this.ino = Number(s.ino);
    this.mode = s.mode;
    this.nlink = s.nlink;
    this.uid = s.uid;
    this.gid = s.gid;
    this.size = Number(s.size);
    this.rdev = Number(s.rdev);
    this.blksize = Number(s.blksize);
    this.blocks = Number(s.blocks);
    this.atimeNs = s.atimeNs;
    this.mtimeNs = s.mtimeNs;
    this.ctimeNs = s.ctimeNs;
    this.atime = Number(s.atimeNs / NS_PER_S);
    this.mtime = Number(s.mtimeNs / NS_PER_S);
    this.ctime = Number(s.ctimeNs / NS_PER_S);
    this.atimeMs = Number(s.atimeNs) / 1e6;
    this.mtimeMs = Number(s.mtimeNs) / 1e6;
    this.ctimeMs = Number(s.ctimeNs) / 1e6;
  }

  isFile(): boolean {
    return (this.mode & S_IFMT) === S_IFREG;
  }
  isDirectory(): boolean {
    return (this.mode & S_IFMT) === S_IFDIR;
  }
  isSymbolicLink(): boolean {
    return (this.mode & S_IFMT) === S_IFLNK;
  }
  isFIFO(): boolean {
    return (this.mode & S_IFMT) === S_IFIFO;
  }
  isCharacterDevice(): boolean {
    return (this.mode & S_IFMT) === S_IFCHR;
  }
  isBlockDevice(): boolean {
    return (this.mode & S_IFMT) === S_IFBLK;
  }
  isSocket(): boolean {
    return (this.mode & S_IFMT) === S_IFSOCK;
  }
}

/** A directory entry with its attributes (readdirPlus). */
export interface DirEntry {
  name: string;
  stats: Stats;
}

/** Filesystem totals (statfs). */
export interface FilesystemStats {
  /** Number of inodes (files, directories, symlinks...). */
  inodes: number;
  /** Bytes of file data stored. */
  bytesUsed: number;
  blockSize: number;
  blocks: number;
  blocksFree: number;
  filesFree: number;
  nameMax: number;
}

export type Encoding = BufferEncoding;
export type Data = string | Uint8Array;

function encodingOf(options?: Encoding | { encoding?: Encoding | null } | null): Encoding | undefined {
  if (typeof options === "string") return options;
  return options?.encoding ?? undefined;
}

function toBytes(data: Data | ArrayBufferView, encoding?: Encoding): Uint8Array {
  if (typeof data === "string") return Buffer.from(data, encoding ?? "utf8");
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`data must be a string, Buffer or Uint8Array, got ${typeof data}`);
}

/** A Buffer over the same memory (no copy). */
function asBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Nanoseconds from a node:fs time argument (seconds, a numeric string or a Date). */
function toNs(t: number | string | Date): bigint {
  if (t instanceof Date) return BigInt(t.getTime()) * 1_000_000n;
  const s = typeof t === "string" ? Number(t) : t;
  if (!Number.isFinite(s)) throw new TypeError(`invalid time ${String(t)}`);
  const whole = Math.floor(s);
  return BigInt(whole) * NS_PER_S + BigInt(Math.round((s - whole) * 1e9));
}

// open(2) flags (Linux values) and node:fs's string flags.
export const O_RDONLY = 0;
export const O_WRONLY = 1;
export const O_RDWR = 2;
export const O_CREAT = 0x40;
export const O_EXCL = 0x80;
export const O_TRUNC = 0x200;
export const O_APPEND = 0x400;
export const O_DIRECTORY = 0x10000;
export const O_NOFOLLOW = 0x20000;

const stringFlags: Record<string, number> = {
  r: O_RDONLY,
  "r+": O_RDWR,
  rs: O_RDONLY,
  "rs+": O_RDWR,
  w: O_WRONLY | O_CREAT | O_TRUNC,
  wx: O_WRONLY | O_CREAT | O_TRUNC | O_EXCL,
  "w+": O_RDWR | O_CREAT | O_TRUNC,
  "wx+": O_RDWR | O_CREAT | O_TRUNC | O_EXCL,
  a: O_WRONLY | O_CREAT | O_APPEND,
  ax: O_WRONLY | O_CREAT | O_APPEND | O_EXCL,
  "a+": O_RDWR | O_CREAT | O_APPEND,
  "ax+": O_RDWR | O_CREAT | O_APPEND | O_EXCL,
};

function openFlags(flags: string | number, path: string): number {
  if (typeof flags === "number") return flags;
  const f = stringFlags[flags];
  if (f === undefined) throw errnoError("EINVAL", "open", path);
  return f;
}

// Handles the program dropped without close() are closed when collected,
// so a long-running process does not leak them in the engine.
const orphans = new FinalizationRegistry<{ client: FilesystemServiceClient; handle: bigint }>(({ client, handle }) => {
  client.close({ handle }).catch(() => {});
});

/**
 * FileHandle is an open file: positional reads and writes (agentfs-sdk's
 * pread/pwrite/truncate/fsync/fstat) plus close(). The handle stays valid
 * after the file is unlinked or renamed.
 */
export class FileHandle {
  private closed = false;
  private readonly token = {};

  constructor(
    private readonly client: FilesystemServiceClient,
    private readonly transport: Transport,
    readonly handle: bigint,
    readonly path: string,
  ) {
    orphans.register(this, { client, handle }, this.token);
  }

  private check(syscall: string): void {
    if (this.closed) throw errnoError("EBADF", syscall);
  }

  /** Reads up to size bytes at offset; shorter at end of file. */
  async pread(offset: number, size: number): Promise<Buffer> {
    this.check("read");
    const r = await this.client.pread({ handle: this.handle, offset: BigInt(offset), size: BigInt(size) });
    return asBuffer(r.data);
  }

  /** Writes data at offset (extending the file with zeros if needed). */
  async pwrite(offset: number, data: Data): Promise<number> {
    this.check("write");
    const bytes = toBytes(data);
    const head = encode(PwriteRequestSchema, { handle: this.handle, offset: BigInt(offset) });
    const r = await this.transport.unaryParts(P.pwrite, [head, ...bytesField(3, bytes)], PwriteResponseSchema);
    return Number(r.written);
  }

  async truncate(size = 0): Promise<void> {
    this.check("ftruncate");
    await this.client.ftruncate({ handle: this.handle, size: BigInt(size) });
  }

  async fsync(): Promise<void> {
    this.check("fsync");
    await this.client.fsync({ handle: this.handle });
  }

  async fstat(): Promise<Stats> {
    this.check("fstat");
    const r = await this.client.fstat({ handle: this.handle });
    return new Stats(r.stat!);
  }

  /** Releases the handle in the engine; later calls fail with EBADF. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    orphans.unregister(this.token);
    await this.client.close({ handle: this.handle });
  }
}

/** The agent's filesystem (agent.fs). */
export class Filesystem {
  /** The generated client, for calls without an idiomatic wrapper (xattrs, walk, batch). */
  readonly client: FilesystemServiceClient;

  constructor(
    private readonly transport: Transport,
    /** The database's chunk size (agent.info), for getChunkSize. */
    private readonly chunkSize = 4096,
  ) {
    this.client = new FilesystemServiceClient(transport);
  }

  /** Bytes per stored chunk of file data (set when the database was made; agentfs-sdk's getChunkSize). */
  getChunkSize(): number {
    return this.chunkSize;
  }

  /** Attributes, following symlinks. */
  async stat(path: string): Promise<Stats> {
    // Decoded directly: stat is the most frequent call of all.
    const r = fromBinary(StatResponseSchema, await this.raw(P.stat, path));
    return new Stats(r.stat!);
  }

  /** Attributes of the link itself for a symlink. */
  async lstat(path: string): Promise<Stats> {
    const r = await this.client.lstat({ path });
    return new Stats(r.stat!);
  }

  private raw(procedure: string, path: string): Promise<Uint8Array> {
    // The request's only field is the path (field 1): no message to build.
    return this.transport.call(procedure, bytesField(1, Buffer.from(path, "utf8")));
  }

  /** The whole file: a Buffer, or a string with an encoding. */
  readFile(path: string): Promise<Buffer>;
  readFile(path: string, encoding: Encoding): Promise<string>;
  readFile(path: string, options: { encoding: Encoding }): Promise<string>;
  readFile(path: string, options?: Encoding | { encoding?: Encoding | null } | null): Promise<Buffer | string>;
  async readFile(path: string, options?: Encoding | { encoding?: Encoding | null; signal?: AbortSignal } | null): Promise<Buffer | string> {
    const signal = typeof options === "object" && options !== null ? options.signal : undefined;
    const r = await this.transport.unaryParts(P.readFile, [encode(ReadFileRequestSchema, { path })], ReadFileResponseSchema, signal);
    const buf = asBuffer(r.data);
    const enc = encodingOf(options);
    return enc ? buf.toString(enc) : buf;
  }

  /**
   * Creates or replaces a file in one transaction; missing parent
   * directories are created, as agentfs-sdk does (createParents: false
   * fails with ENOENT instead, as node:fs).
   */
  async writeFile(
    path: string,
    data: Data,
    options?: Encoding | { encoding?: Encoding | null; mode?: number; flag?: string; createParents?: boolean; signal?: AbortSignal } | null,
  ): Promise<void> {
    const o = typeof options === "object" && options !== null ? options : {};
    const flag = o.flag ?? "w";
    if (flag !== "w" && flag !== "a" && flag !== "wx" && flag !== "ax") throw errnoError("EINVAL", "open", path);
    // The request is encoded by hand and the (empty) response is not
    // decoded: a program's first writeFile builds no protobuf descriptor
    // (wire.ts), and every writeFile saves the generic encoder's work.
    const mode = o.mode ?? 0;
    const createParents = o.createParents ?? true;
    const append = flag[0] === "a";
    const exclusive = flag.endsWith("x");
    const head = writeFileHead(path, mode, createParents, append, exclusive) ?? encode(WriteFileRequestSchema, { path, mode, createParents, append, exclusive });
    await this.transport.call(P.writeFile, [head, ...bytesField(2, toBytes(data, encodingOf(options)))], o.signal);
  }

  /** Appends to a file, creating it if missing. */
  async appendFile(path: string, data: Data, options?: Encoding | { encoding?: Encoding | null; mode?: number; createParents?: boolean } | null): Promise<void> {
    const o = typeof options === "object" && options !== null ? options : {};
    await this.writeFile(path, data, { encoding: encodingOf(options), mode: o.mode, flag: "a", createParents: o.createParents });
  }

  /** Names in the directory, sorted. */
  async readdir(path: string): Promise<string[]> {
    return (await this.client.readdir({ path })).names;
  }

  /** Names with attributes, in one round trip. */
  async readdirPlus(path: string): Promise<DirEntry[]> {
    const r = await this.client.readdirPlus({ path });
    return r.entries.map((e) => ({ name: e.name, stats: new Stats(e.stat!) }));
  }

  /** Creates a directory; with recursive, its parents too (and no EEXIST). */
  async mkdir(path: string, options?: { recursive?: boolean; mode?: number } | number): Promise<void> {
    const o = typeof options === "number" ? { mode: options } : (options ?? {});
    await this.client.mkdir({ path, mode: o.mode ?? 0, recursive: o.recursive ?? false });
  }

  async rmdir(path: string): Promise<void> {
    await this.client.rmdir({ path });
  }

  async unlink(path: string): Promise<void> {
    await this.client.unlink({ path });
  }

  /** Legacy alias of unlink (agentfs-sdk). */
  deleteFile(path: string): Promise<void> {
    return this.unlink(path);
  }

  /** Removes a file or (with recursive) a directory tree; force ignores a missing path. */
  async rm(path: string, options?: { force?: boolean; recursive?: boolean }): Promise<void> {
    await this.client.remove({ path, force: options?.force ?? false, recursive: options?.recursive ?? false });
  }

  async rename(oldPath: string, newPath: string): Promise<void> {
    await this.client.rename({ oldPath, newPath });
  }

  async copyFile(src: string, dest: string): Promise<void> {
    await this.client.copyFile({ src, dst: dest });
  }

  async symlink(target: string, linkpath: string): Promise<void> {
    await this.client.symlink({ target, linkPath: linkpath });
  }

  async readlink(path: string): Promise<string> {
    return (await this.client.readlink({ path })).target;
  }

  /** Creates a hard link newPath to existingPath. */
  async link(existingPath: string, newPath: string): Promise<void> {
    await this.client.link({ oldPath: existingPath, newPath });
  }

  /** Succeeds when the path exists (and, with mode R_OK/W_OK/X_OK, is accessible). */
  async access(path: string, mode = 0): Promise<void> {
    await this.client.access({ path, mode });
  }

  /** True when the path exists (following symlinks). */
  async exists(path: string): Promise<boolean> {
    try {
      await this.access(path);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === "ENOENT") return false;
      throw e;
    }
  }

  async chmod(path: string, mode: number): Promise<void> {
    await this.client.chmod({ path, mode });
  }

  /** Changes owner and group; -1 leaves one unchanged. */
  async chown(path: string, uid: number, gid: number): Promise<void> {
    await this.client.chown({ path, uid: BigInt(uid), gid: BigInt(gid) });
  }

  /** chown of the link itself. */
  async lchown(path: string, uid: number, gid: number): Promise<void> {
    await this.client.chown({ path, uid: BigInt(uid), gid: BigInt(gid), noFollow: true });
  }

  /** Sets access and modification times (seconds, numeric strings or Dates, as node:fs). */
  async utimes(path: string, atime: number | string | Date, mtime: number | string | Date): Promise<void> {
    await this.client.utimes({ path, atimeNs: toNs(atime), mtimeNs: toNs(mtime) });
  }

  /** utimes of the link itself. */
  async lutimes(path: string, atime: number | string | Date, mtime: number | string | Date): Promise<void> {
    await this.client.utimes({ path, atimeNs: toNs(atime), mtimeNs: toNs(mtime), noFollow: true });
  }

  async truncate(path: string, len = 0): Promise<void> {
    await this.client.truncate({ path, size: BigInt(len) });
  }

  async statfs(): Promise<FilesystemStats> {
    const r = await this.client.statfs({});
    return {
      inodes: Number(r.inodes),
      bytesUsed: Number(r.bytesUsed),
      blockSize: Number(r.blockSize),
      blocks: Number(r.blocks),
      blocksFree: Number(r.blocksFree),
      filesFree: Number(r.filesFree),
      nameMax: Number(r.nameMax),
    };
  }

  /**
   * Opens a file for positional I/O. The default "r+" opens an existing
   * file for reading and writing, as agentfs-sdk's open(path) does;
   * node:fs's string flags ("r", "w", "a+", "wx"...) and numeric O_* flags
   * are accepted.
   */
  async open(path: string, flags: string | number = "r+", mode = 0): Promise<FileHandle> {
    const r = await this.client.open({ path, flags: openFlags(flags, path), mode });
    return new FileHandle(this.client, this.transport, r.handle, path);
  }
}

