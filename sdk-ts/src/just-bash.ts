// agentfs-sdk/just-bash: an agent's filesystem as just-bash's IFileSystem
// (npm just-bash, a bash interpreter in TypeScript), so its scripts read
// and write the agent: `new Bash({ fs: await agentfs({ id: "a" }) })`.
// The shape is agentfs-sdk 0.6.4's adapter (agentfs(), AgentFsWrapper,
// mountPoint); every call goes to the engine through agent.fs, so errors
// are node:fs style ("ENOENT: no such file or directory, open '/x'"),
// which just-bash turns into its messages.
//
// The types of just-bash's interface are restated here (structurally the
// same) so that this package does not depend on just-bash.

import { AgentFS, type AgentFSOptions } from "./agentfs.js";
import type { Encoding, Filesystem } from "./fs.js";
import { AgentFSError } from "./errors.js";

export type BufferEncoding = "utf8" | "utf-8" | "ascii" | "binary" | "base64" | "hex" | "latin1";
export type FileContent = string | Uint8Array;
export interface ReadFileOptions {
  encoding?: BufferEncoding | null;
}
export interface WriteFileOptions {
  encoding?: BufferEncoding;
}
export interface FsStat {
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
  mode: number;
  size: number;
  mtime: Date;
  ino?: number;
}
export interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}
export interface MkdirOptions {
  recursive?: boolean;
}
export interface RmOptions {
  recursive?: boolean;
  force?: boolean;
}
export interface CpOptions {
  recursive?: boolean;
}

/** just-bash's IFileSystem, as this adapter implements it. */
export interface IFileSystem {
  readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string>;
  readFileBuffer(path: string): Promise<Uint8Array>;
  writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void>;
  appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void>;
  exists(path: string): Promise<boolean>;
  stat(path: string): Promise<FsStat>;
  lstat(path: string): Promise<FsStat>;
  mkdir(path: string, options?: MkdirOptions): Promise<void>;
  readdir(path: string): Promise<string[]>;
  readdirWithFileTypes(path: string): Promise<DirentEntry[]>;
  rm(path: string, options?: RmOptions): Promise<void>;
  cp(src: string, dest: string, options?: CpOptions): Promise<void>;
  mv(src: string, dest: string): Promise<void>;
  resolvePath(base: string, path: string): string;
  getAllPaths(): string[];
  chmod(path: string, mode: number): Promise<void>;
  symlink(target: string, linkPath: string): Promise<void>;
  link(existingPath: string, newPath: string): Promise<void>;
  readlink(path: string): Promise<string>;
  realpath(path: string): Promise<string>;
  utimes(path: string, atime: Date, mtime: Date): Promise<void>;
}

/** Anything with an agent's filesystem: an AgentFS (agent.fs). */
export interface AgentFsHandle {
  fs: Filesystem;
}

export interface AgentFsOptions {
  fs: AgentFsHandle;
  /** Where the agent's root appears in just-bash's tree (default "/"). */
  mountPoint?: string;
}

/** Symlinks followed by realpath before ELOOP, as Linux. */
const MAX_LINKS = 40;

function encodingOf(options?: ReadFileOptions | WriteFileOptions | BufferEncoding | null): Encoding {
  const e = typeof options === "string" ? options : (options?.encoding ?? "utf8");
  return (e === "utf-8" ? "utf8" : e) as Encoding;
}

/** A node:fs style error (the class the rest of the SDK raises). */
function errno(code: string, n: number, text: string, syscall: string, path: string): AgentFSError {
  const e = new AgentFSError(`${code}: ${text}, ${syscall} '${path}'`, code, "ERRNO");
  e.errno = -n;
  e.syscall = syscall;
  e.path = path;
  return e;
}

/** "/a/./b/../c/" -> "/a/c" (lexical, as just-bash's own filesystems). */
function normalize(path: string): string {
  const out: string[] = [];
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") out.pop();
    else out.push(p);
  }
  return "/" + out.join("/");
}

function toFsStat(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean; mode: number; size: number; mtimeMs: number; ino: number }): FsStat {
  return { isFile: s.isFile(), isDirectory: s.isDirectory(), isSymbolicLink: s.isSymbolicLink(), mode: s.mode, size: s.size, mtime: new Date(s.mtimeMs), ino: s.ino };
}

export class AgentFsWrapper implements IFileSystem {
  private readonly fs: Filesystem;
  private readonly mountPoint: string;

  constructor(options: AgentFsOptions) {
    this.fs = options.fs.fs;
    const mp = options.mountPoint ?? "/";
    if (!mp.startsWith("/")) throw new TypeError(`mount point must be an absolute path: ${mp}`);
    this.mountPoint = normalize(mp);
  }

  getMountPoint(): string {
    return this.mountPoint;
  }

  /** just-bash's path -> the agent's path (the mount point stripped). */
  private p(path: string): string {
    const n = normalize(path);
    if (this.mountPoint === "/") return n;
    if (n === this.mountPoint) return "/";
    if (n.startsWith(this.mountPoint + "/")) return n.slice(this.mountPoint.length);
    return n;
  }

  /** The agent's path -> just-bash's path. */
  private v(path: string): string {
    return this.mountPoint === "/" ? path : path === "/" ? this.mountPoint : this.mountPoint + path;
  }

  async readFile(path: string, options?: ReadFileOptions | BufferEncoding): Promise<string> {
    return this.fs.readFile(this.p(path), encodingOf(options));
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    return this.fs.readFile(this.p(path));
  }

  async writeFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    await this.fs.writeFile(this.p(path), content, { encoding: encodingOf(options) });
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    await this.fs.appendFile(this.p(path), content, { encoding: encodingOf(options) });
  }

  exists(path: string): Promise<boolean> {
    return this.fs.exists(this.p(path));
  }

  async stat(path: string): Promise<FsStat> {
    return toFsStat(await this.fs.stat(this.p(path)));
  }

  async lstat(path: string): Promise<FsStat> {
    return toFsStat(await this.fs.lstat(this.p(path)));
  }

  mkdir(path: string, options?: MkdirOptions): Promise<void> {
    return this.fs.mkdir(this.p(path), { recursive: options?.recursive ?? false });
  }

  readdir(path: string): Promise<string[]> {
    return this.fs.readdir(this.p(path));
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return (await this.fs.readdirPlus(this.p(path))).map((e) => ({
      name: e.name,
      isFile: e.stats.isFile(),
      isDirectory: e.stats.isDirectory(),
      isSymbolicLink: e.stats.isSymbolicLink(),
    }));
  }

  rm(path: string, options?: RmOptions): Promise<void> {
    return this.fs.rm(this.p(path), { recursive: options?.recursive ?? false, force: options?.force ?? false });
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    await this.copy(this.p(src), this.p(dest), options?.recursive ?? false);
  }

  private async copy(src: string, dest: string, recursive: boolean): Promise<void> {
    const s = await this.fs.lstat(src);
    if (s.isDirectory()) {
      if (!recursive) throw errno("EISDIR", 21, "illegal operation on a directory", "cp", src);
      await this.fs.mkdir(dest, { recursive: true });
      for (const name of await this.fs.readdir(src)) await this.copy(`${src === "/" ? "" : src}/${name}`, `${dest === "/" ? "" : dest}/${name}`, true);
    } else if (s.isSymbolicLink()) {
      await this.fs.symlink(await this.fs.readlink(src), dest);
    } else {
      await this.fs.copyFile(src, dest);
    }
  }

  mv(src: string, dest: string): Promise<void> {
    return this.fs.rename(this.p(src), this.p(dest));
  }

  resolvePath(base: string, path: string): string {
    return normalize(path.startsWith("/") ? path : `${base}/${path}`);
  }

  /**
   * Every path, synchronously: the agent's tree is in the engine, reached
   * only asynchronously, so this is empty (as in agentfs-sdk 0.6.4);
   * just-bash's globbing then lists directories with readdir.
   */
  getAllPaths(): string[] {
    return [];
  }

  chmod(path: string, mode: number): Promise<void> {
    return this.fs.chmod(this.p(path), mode);
  }

  /**
   * An absolute target is a path of just-bash's tree: stored as the
   * agent's path, so the link also resolves inside the agent (the CLI, a
   * mount); readlink maps it back.
   */
  symlink(target: string, linkPath: string): Promise<void> {
    return this.fs.symlink(target.startsWith("/") ? this.p(target) : target, this.p(linkPath));
  }

  link(existingPath: string, newPath: string): Promise<void> {
    return this.fs.link(this.p(existingPath), this.p(newPath));
  }

  async readlink(path: string): Promise<string> {
    const t = await this.fs.readlink(this.p(path));
    return t.startsWith("/") ? this.v(t) : t;
  }

  /** The path with every symlink resolved (ENOENT for a missing part, ELOOP past 40 links). */
  async realpath(path: string): Promise<string> {
    let todo = this.p(path).split("/").filter((s) => s !== "");
    const done: string[] = [];
    let links = 0;
    while (todo.length > 0) {
      const name = todo.shift()!;
      if (name === ".") continue;
      if (name === "..") {
        done.pop();
        continue;
      }
      const cur = "/" + [...done, name].join("/");
      const s = await this.fs.lstat(cur);
      if (!s.isSymbolicLink()) {
        done.push(name);
        continue;
      }
      if (++links > MAX_LINKS) throw errno("ELOOP", 40, "too many symbolic links encountered", "realpath", path);
      const target = await this.fs.readlink(cur);
      if (target.startsWith("/")) done.length = 0;
      todo = [...target.split("/").filter((s) => s !== ""), ...todo];
    }
    return this.v("/" + done.join("/"));
  }

  utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    return this.fs.utimes(this.p(path), atime, mtime);
  }
}

/**
 * agentfs returns a just-bash filesystem over an agent: an open AgentFS
 * (or anything with its fs), a Filesystem, or the options of
 * AgentFS.open (the agent is opened here and stays open while the
 * program runs; to close it, open it yourself and pass the AgentFS).
 * mountPoint puts the agent's root elsewhere in just-bash's tree.
 */
export async function agentfs(handleOrOptions: AgentFsHandle | Filesystem | AgentFSOptions, mountPoint?: string): Promise<AgentFsWrapper> {
  const h = handleOrOptions as Partial<AgentFsHandle> & { stat?: unknown };
  if (typeof h.stat === "function" && !("fs" in h)) return new AgentFsWrapper({ fs: { fs: handleOrOptions as Filesystem }, mountPoint });
  if (h.fs && typeof (h.fs as { stat?: unknown }).stat === "function") return new AgentFsWrapper({ fs: h as AgentFsHandle, mountPoint });
  const agent = await AgentFS.open(handleOrOptions as AgentFSOptions);
  return new AgentFsWrapper({ fs: agent, mountPoint });
}

export type { Filesystem as FileSystem } from "./fs.js";
