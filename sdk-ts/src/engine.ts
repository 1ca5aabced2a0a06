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
