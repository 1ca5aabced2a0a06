// agent.mountSandbox(): the escape hatch from the in-process sandbox. The
// agent's filesystem is mounted with FUSE on a host directory by the
// engine's CLI (`agentfs mount`, a server process of its own on the same
// database file), so that any native program (git, a compiler, tar) runs
// over the agent's files; unmount() hands them back. Linux with /dev/fuse
// (and fusermount3 when not root).

import { mkdtemp, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findEngine } from "./engine.js";
import { kindError } from "./errors.js";
import { childProcess, fs } from "./nodelazy.js";

export interface MountSandboxOptions {
  /** Host directory to mount on (it must exist and be empty); default: a new temporary directory, removed by unmount(). */
  dir?: string;
  /** The agentfs binary that serves the mount (default: AGENTFS_BIN, this platform's engine package, then PATH). */
  engine?: string;
}

/** The agent's filesystem mounted on a host directory (agent.mountSandbox). */
export interface SandboxMount {
  /** The mount point, absolute. */
  readonly path: string;
  /**
   * Unmounts (removing the directory when mountSandbox made it). It fails
   * with EBUSY while a process still uses the mount; once it succeeded,
   * later calls do nothing.
   */
  unmount(): Promise<void>;
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    childProcess().execFile(bin, args, { env }, (err, _stdout, stderr) => {
      if (!err) return done();
      // The CLI's one-line error (and hint) says what went wrong.
      const msg = String(stderr).trim().split("\n").filter(Boolean).join("; ") || err.message;
      const kind = /busy/i.test(msg) ? "EBUSY" : "";
      const e = kindError("FAILED_PRECONDITION", `${args[0]} ${args.slice(1).join(" ")}: ${msg}`);
      if (kind) Object.assign(e, { code: kind });
      fail(e);
    });
  });
}

/**
 * The mounts this process made and has not unmounted. A mount server is a
 * process of its own: without this, a program that ends without
 * unmounting (or closing its agent) would leave the mount behind. At exit
 * each is unmounted, lazily if still busy (the kernel detaches it now and
 * ends it with its last user), as Python's atexit and Rust's Drop do.
 */
const live = new Map<string, { bin: string; env: NodeJS.ProcessEnv; temp: boolean }>();
let exitHook = false;

function unmountAtExit(): void {
  for (const [dir, m] of live) {
    for (const args of [["umount", dir], ["umount", "--lazy", dir]]) {
      try {
        childProcess().execFileSync(m.bin, args, { env: m.env, stdio: "ignore" });
        if (m.temp) {
          try { fs().rmdirSync(dir); } catch { /* still busy: left to the OS's temp cleanup */ }
        }
        break;
      } catch { /* busy: try lazily, else leave it to "agentfs prune" */ }
    }
  }
  live.clear();
}

/** mountSandbox mounts the database at dbPath (see AgentFS.mountSandbox). */
export async function mountSandbox(dbPath: string, opts: MountSandboxOptions, keyEnv: Record<string, string>): Promise<SandboxMount> {
  if (process.platform !== "linux") throw kindError("UNIMPLEMENTED", `mountSandbox: FUSE mounts are Linux only (this is ${process.platform})`);
  const bin = findEngine(opts.engine);
  const temp = !opts.dir;
  const dir = opts.dir ? resolve(opts.dir) : await mkdtemp(join(tmpdir(), "agentfs-mount-"));
  // The key, if any, travels in the server's environment, never in its
  // arguments (which every user of the machine can read).
  const env = { ...process.env, ...keyEnv };
  try {
    // Returns once the mount is ready; the server runs on, detached.
    await run(bin, ["mount", dbPath, dir], env);
  } catch (e) {
    if (temp) await rmdir(dir).catch(() => {});
    throw e;
  }
  let mounted = true;
  live.set(dir, { bin, env, temp });
  if (!exitHook) {
    exitHook = true;
    process.once("exit", unmountAtExit);
  }
  return {
    path: dir,
    async unmount() {
      if (!mounted) return;
      await run(bin, ["umount", dir], env);
      mounted = false;
      live.delete(dir);
      if (temp) await rmdir(dir);
    },
  };
}
