// Where a browser agent's database lives between page loads: a file in the
// Origin Private File System, and a Web Lock that keeps two tabs of the
// same origin from opening the same agent at once (each would keep its own
// copy in memory, and the last to save would silently drop the other's
// writes).

import { AgentFSError } from "../errors.js";
import type { SyncAccessHandle } from "./wasm.js";

/** The parts of the File System Access and Web Locks APIs used here (no DOM lib in this project). */
interface FileHandle {
  createSyncAccessHandle?(): Promise<SyncAccessHandle>;
  getFile(): Promise<{ size: number; arrayBuffer(): Promise<ArrayBuffer> }>;
  createWritable(options?: { keepExistingData?: boolean }): Promise<{ write(data: Uint8Array): Promise<void>; close(): Promise<void>; abort(): Promise<void> }>;
}
interface DirectoryHandle {
  getDirectoryHandle(name: string, options?: { create?: boolean }): Promise<DirectoryHandle>;
  getFileHandle(name: string, options?: { create?: boolean }): Promise<FileHandle>;
  removeEntry(name: string): Promise<void>;
}
interface Navigator {
  storage?: { getDirectory?(): Promise<DirectoryHandle> };
  locks?: {
    request(name: string, options: { mode?: "exclusive" | "shared"; ifAvailable?: boolean }, cb: (lock: object | null) => unknown): Promise<unknown>;
  };
}
const nav = (globalThis as unknown as { navigator?: Navigator }).navigator;

function errno(code: string, errnoValue: number, syscall: string, path: string, text: string): AgentFSError {
  const e = new AgentFSError(`${code}: ${text}, ${syscall} '${path}'`, code, "ERRNO");
  e.errno = -errnoValue;
  e.syscall = syscall;
  e.path = path;
  return e;
}

/** The OPFS path's parts ("a/b.db" -> ["a", "b.db"]); "." and ".." are refused. */
function parts(path: string): string[] {
  const p = path.split("/").filter((s) => s !== "");
  if (p.length === 0 || p.some((s) => s === "." || s === "..")) throw errno("EINVAL", 22, "open", path, "invalid argument (an OPFS path like \"agents/a.db\")");
  return p;
}

async function handle(path: string, create: boolean): Promise<FileHandle | undefined> {
  const root = nav?.storage?.getDirectory;
  if (!root) throw errno("ENOTSUP", 95, "open", path, "this browser has no Origin Private File System (navigator.storage.getDirectory); open a temporary agent with AgentFS.open() and save it with exportDatabase()");
  let dir = await nav!.storage!.getDirectory!();
  const p = parts(path);
  try {
    for (const d of p.slice(0, -1)) dir = await dir.getDirectoryHandle(d, { create });
    return await dir.getFileHandle(p[p.length - 1], { create });
  } catch (e) {
    if ((e as { name?: string }).name === "NotFoundError") return undefined;
    throw e;
  }
}

/** The bytes of the OPFS file at path, or undefined when there is none (or it is empty: never written). */
export async function readOpfs(path: string): Promise<Uint8Array | undefined> {
  const h = await handle(path, false);
  if (!h) return undefined;
  const f = await h.getFile();
  if (f.size === 0) return undefined;
  return new Uint8Array(await f.arrayBuffer());
}

/** Removes the OPFS file at path (nothing when there is none). */
export async function removeOpfs(path: string): Promise<void> {
  const p = parts(path);
  let dir = await nav!.storage!.getDirectory!();
  try {
    for (const d of p.slice(0, -1)) dir = await dir.getDirectoryHandle(d);
    await dir.removeEntry(p[p.length - 1]);
  } catch (e) {
    if ((e as { name?: string }).name !== "NotFoundError") throw e;
  }
}

/**
 * Whether this global scope can write OPFS files in place: synchronous
 * access handles exist in dedicated workers only (not in a page, nor in a
 * shared or service worker).
 */
export function syncHandles(): boolean {
  const g = globalThis as unknown as { FileSystemFileHandle?: { prototype: FileHandle }; DedicatedWorkerGlobalScope?: unknown };
  return typeof g.FileSystemFileHandle?.prototype.createSyncAccessHandle === "function" && g.DedicatedWorkerGlobalScope !== undefined;
}

/** A database file and its rollback journal, open for in-place reads and writes. */
export interface SyncFiles {
  db: SyncAccessHandle;
  journal: SyncAccessHandle;
  close(): void;
}

/**
 * Opens the OPFS file at path and its "-journal" (both created if
 * missing) with synchronous access handles. A handle is exclusive: while
 * it is open no other handle or writable stream of the file can be made.
 */
export async function openSyncFiles(path: string): Promise<SyncFiles> {
  const db = await (await handle(path, true))!.createSyncAccessHandle!();
  let journal: SyncAccessHandle;
  try {
    journal = await (await handle(`${path}-journal`, true))!.createSyncAccessHandle!();
  } catch (e) {
    db.close();
    throw e;
  }
  return {
    db,
    journal,
    close() {
      db.close();
      journal.close();
    },
  };
}

/**
 * Replaces the OPFS file at path with bytes. A writable stream writes to
 * a swap file that close() moves into place, so a crash or a closed tab
 * leaves the old database or the new one, never a torn one.
 */
export async function writeOpfs(path: string, bytes: Uint8Array): Promise<void> {
  const h = (await handle(path, true))!;
  const w = await h.createWritable({ keepExistingData: false });
  try {
    await w.write(bytes);
  } catch (e) {
    await w.abort().catch(() => {});
    throw e;
  }
  await w.close();
}

/**
 * lockAgent takes the Web Lock of the agent stored at path: exclusive for
 * a writer, shared for readOnly (readers may open it together, never with
 * a writer). With wait, it waits for the holder to close it; without, it
 * fails at once with EBUSY. Resolves with the function that releases it.
 */
export function lockAgent(path: string, readOnly: boolean, wait: boolean): Promise<() => void> {
  const locks = nav?.locks;
  // Without Web Locks (an old browser, an insecure context) there is
  // nothing to coordinate with: the agent opens unguarded.
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    const opts = { mode: readOnly ? ("shared" as const) : ("exclusive" as const), ...(wait ? {} : { ifAvailable: true }) };
    locks
      .request(`agentfs:${path}`, opts, (lock) => {
        if (!lock) {
          reject(errno("EBUSY", 16, "open", path, "resource busy: the agent is open in another tab, worker or AgentFS of this origin (close it there, or open with { lock: \"wait\" } to wait for it)"));
          return undefined;
        }
        // Held until the agent is closed (or the page goes away).
        return new Promise<void>((release) => resolve(release));
      })
      .catch(reject);
  });
}
