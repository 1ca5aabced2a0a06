// Finding the engine binary: an explicit option, then AGENTFS_BIN, then the
// binary bundled in this package (bin/<platform>-<arch>/agentfs, put there
// by `npm pack`), then `agentfs` on PATH.

import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { kindError } from "./errors.js";

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The path of the engine bundled in this package for this platform. */
export function bundledEngine(): string {
  return fileURLToPath(new URL(`../bin/${process.platform}-${process.arch}/agentfs`, import.meta.url));
}

/**
 * findEngine returns the path of the agentfs binary to start, or throws an
 * error that says how to get one.
 */
export function findEngine(explicit?: string): string {
  if (explicit) {
    if (!executable(explicit)) throw kindError("NOT_FOUND", `agentfs engine ${explicit} (option "engine") is not an executable file`);
    return explicit;
  }
  const env = process.env.AGENTFS_BIN;
  if (env) {
    if (!executable(env)) throw kindError("NOT_FOUND", `AGENTFS_BIN=${env} is not an executable file`);
    return env;
  }
  const bundled = bundledEngine();
  if (executable(bundled)) return bundled;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, "agentfs");
    if (executable(p)) return p;
  }
  throw kindError(
    "NOT_FOUND",
    `agentfs engine not found: this package bundles it only for linux-x64 (looked for ${bundled}), ` +
      "AGENTFS_BIN is unset and there is no agentfs on PATH. Install it with " +
      "`go install github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest` (or `go tool task build` in a checkout) " +
      "and set AGENTFS_BIN or pass { engine: '/path/to/agentfs' }",
  );
}

/** The path of the engine addon bundled in this package for this platform. */
export function bundledAddon(): string {
  return fileURLToPath(new URL(`../bin/${process.platform}-${process.arch}/agentfs.node`, import.meta.url));
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * How the engine runs: in this process (the addon), as a child process, or
 * as WebAssembly in this process (databases in memory; see AgentFS.open).
 */
export type EngineMode = "inprocess" | "process" | "wasm";

/**
 * chooseEngine picks how and from where the engine runs. An explicit
 * transport wins, then AGENTFS_TRANSPORT; otherwise the bundled addon runs
 * the engine in this process unless an engine binary was named (the
 * option or AGENTFS_BIN), which runs as a child process.
 */
export function chooseEngine(transport?: EngineMode, engine?: string): { addon?: string; engine?: string } {
  const env = process.env.AGENTFS_TRANSPORT;
  if (env && env !== "inprocess" && env !== "process" && env !== "wasm") {
    throw kindError("INVALID_ARGUMENT", `AGENTFS_TRANSPORT=${env}: use "inprocess", "process" or "wasm"`);
  }
  const mode = transport ?? (env as EngineMode | undefined);
  if (mode === "process") return { engine: findEngine(engine) };
  const addon = process.env.AGENTFS_ADDON || bundledAddon();
  if (mode === "inprocess") {
    if (!isFile(addon)) {
      throw kindError(
        "NOT_FOUND",
        `agentfs engine addon not found at ${addon}: this package bundles it only for linux-x64; ` +
          'build it with `go build -buildmode=c-shared -o agentfs.node ./cmd/agentfs-node` in core/ and set AGENTFS_ADDON, or use { transport: "process" }',
      );
    }
    return { addon };
  }
  if (!engine && !process.env.AGENTFS_BIN && isFile(addon)) return { addon };
  return { engine: findEngine(engine) };
}
