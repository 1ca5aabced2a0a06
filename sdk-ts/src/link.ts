// The byte links a StdioTransport speaks the stdio protocol over: the
// engine as a child process (`agentfs serve --stdio`, pipes), or the
// engine loaded into this process as a Node addon (agentfs.node), where
// the same frames travel through memory and short calls can also be
// answered synchronously.

import type { ChildProcessByStdio } from "node:child_process";
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { kindError } from "./errors.js";
import { setAddonLoader, type Addon, type Link, type LinkEvents } from "./locallink.js";
import { childProcess } from "./nodelazy.js";

export { LocalLink, type Addon, type Link, type LinkEvents } from "./locallink.js";

const STDERR_KEEP = 4096;

/** The engine as a child process, frames over its stdin and stdout. */
export class ChildLink implements Link {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private corked = false;
  private stderrTail = "";

  constructor(engine: string, events: LinkEvents, cwd?: string, env?: NodeJS.ProcessEnv) {
    this.child = childProcess().spawn(engine, ["serve", "--stdio"], {
      stdio: ["pipe", "pipe", "pipe"],
      cwd,
      env: env ? { ...process.env, ...env } : process.env,
      windowsHide: true,
    });
    this.child.stdout.on("data", (chunk: Buffer) => events.onData(chunk));
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_KEEP);
    });
    // A dead engine makes writes fail with EPIPE; the exit handler reports it.
    this.child.stdin.on("error", () => {});
    this.child.on("error", (e) => events.onExit(kindError("UNAVAILABLE", `cannot start the agentfs engine ${engine}: ${e.message}`)));
    this.child.on("close", (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const tail = this.stderrTail.trim();
      events.onExit(kindError("UNAVAILABLE", `the agentfs engine ${how}` + (tail ? `; its last output: ${tail}` : "")));
    });
  }

  // Frames written in the same tick go out together: the first write corks
  // the pipe and the uncork runs once the current code yields.
  write(bufs: readonly Uint8Array[]): void {
    const stdin = this.child.stdin;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    for (const b of bufs) stdin.write(b);
  }

  end(): void {
    this.child.stdin.end();
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    this.child.kill(signal);
  }

  keepAlive(on: boolean): void {
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as unknown as { ref?(): void; unref?(): void }[];
    for (const h of handles) {
      if (on) h.ref?.();
      else h.unref?.();
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
}

const addons = new Map<string, Addon>();

// process.dlopen, not require(): the addon is named by a file path, and
// require's resolution (the CommonJS loader's first use, a stat and a
// realpath of each directory) costs about a millisecond of the cold start.
// A relative path is relative to the working directory, as chooseEngine's
// check of the file is.
function loadAddon(path: string): Addon {
  let a = addons.get(path);
  if (!a) {
    try {
      const m = { exports: {} };
      process.dlopen(m, resolve(path));
      a = m.exports as Addon;
    } catch (e) {
      throw kindError("UNAVAILABLE", `cannot load the agentfs engine addon ${path}: ${(e as Error).message} (use { transport: "process" } to run the engine as a child process)`);
    }
    addons.set(path, a);
  }
  return a;
}

setAddonLoader(loadAddon);
