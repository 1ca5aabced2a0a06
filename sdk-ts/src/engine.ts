// Finding the engine. The native engine comes from this platform's package,
// @agentfs-sdk/<platform>-<arch> (an optional dependency of agentfs-sdk that
// npm installs only where its os/cpu/libc match, as esbuild does): the
// binary `agentfs` (agentfs.exe on Windows), and on linux-x64 the Node addon
// agentfs.node too. With no such package (another platform, or an install
// with --omit=optional) the WebAssembly engine bundled in agentfs-sdk runs,
// after one line on stderr.

import { createRequire } from "node:module";
import { basename, delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { kindError } from "./errors.js";
import { fs } from "./nodelazy.js";

/** The platforms that have an engine package (@agentfs-sdk/<platform>). */
export const enginePlatforms = ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64", "win32-x64"] as const;

const exe = process.platform === "win32" ? "agentfs.exe" : "agentfs";

/** The engine package of this platform: @agentfs-sdk/<platform>-<arch>. */
export function enginePackage(): string {
  return `@agentfs-sdk/${process.platform}-${process.arch}`;
}

// The directory of this platform's engine package, resolved as Node
// resolves any dependency of agentfs-sdk (hoisted or nested), or undefined.
// The two places Node looks first from dist/ (agentfs-sdk's own
// node_modules, then the node_modules it is installed in: npm's nested
// and hoisted layouts) are checked directly: the resolution itself (the
// CommonJS loader's first use) is about a millisecond of the cold start.
// Any other layout (pnpm's, a node_modules further up) goes through it.
function enginePackageDir(): string | undefined {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const candidates = [join(root, "node_modules", enginePackage())];
  if (basename(dirname(root)) === "node_modules") candidates.push(join(dirname(root), enginePackage()));
  for (const dir of candidates) if (isFile(join(dir, "package.json"))) return dir;
  try {
    return dirname(createRequire(import.meta.url).resolve(`${enginePackage()}/package.json`));
  } catch {
    return undefined;
  }
}

function executable(p: string): boolean {
  try {
    fs().accessSync(p, fs().constants.X_OK);
    return fs().statSync(p).isFile();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return fs().statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The path of the engine binary in this platform's engine package, or undefined when it is not installed. */
export function bundledEngine(): string | undefined {
  const dir = enginePackageDir();
  return dir && join(dir, exe);
}

/** The path of the engine addon in this platform's engine package (linux-x64 only), or undefined. */
export function bundledAddon(): string | undefined {
  const dir = enginePackageDir();
  return dir && join(dir, "agentfs.node");
}

// Why this platform has no native engine, for the messages below.
function missingPackage(): string {
  const platform = `${process.platform}-${process.arch}`;
  if ((enginePlatforms as readonly string[]).includes(platform)) {
    return `${enginePackage()} (an optional dependency of agentfs-sdk) is not installed; reinstall without --omit=optional or \`npm install ${enginePackage()}\``;
  }
  return `agentfs-sdk has no native engine for ${platform} (engine packages exist for ${enginePlatforms.join(", ")})`;
}

// The binary in the engine package, then agentfs on PATH.
function locateEngine(): string | undefined {
  const bundled = bundledEngine();
  if (bundled && executable(bundled)) return bundled;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, exe);
    if (executable(p)) return p;
  }
  return undefined;
}

/**
 * findEngine returns the path of the agentfs binary to start: the explicit
 * one, then AGENTFS_BIN, then this platform's engine package, then
 * `agentfs` on PATH; or throws an error that says how to get one.
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
  const found = locateEngine();
  if (found) return found;
  throw kindError(
    "NOT_FOUND",
    `agentfs engine binary not found: ${missingPackage()}; AGENTFS_BIN is unset and there is no ${exe} on PATH. ` +
      "Build one with `go install github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest` and set AGENTFS_BIN or pass { engine: '/path/to/agentfs' }, " +
      'or use { transport: "wasm" } (the WebAssembly engine in this package, any platform)',
  );
}

/**
 * How the engine runs: in this process (the addon), as a child process, or
 * as WebAssembly in this process (databases in memory; see AgentFS.open).
 */
export type EngineMode = "inprocess" | "process" | "wasm";

let wasmNoted = false;

// The one line on stderr when the WebAssembly engine stands in for a
// missing native one: its databases live in memory until close, which the
// user should know, but once per process is enough.
function noteWasmFallback(): void {
  if (wasmNoted) return;
  wasmNoted = true;
  process.stderr.write(
    `agentfs-sdk: no native engine for ${process.platform}-${process.arch} (${missingPackage()}); ` +
      "using the WebAssembly engine (databases are held in memory and written back at close). " +
      "Set AGENTFS_TRANSPORT=wasm to choose it without this note.\n",
  );
}

/**
 * chooseEngine picks how and from where the engine runs. An explicit
 * transport wins, then AGENTFS_TRANSPORT; otherwise, when no engine binary
 * is named (the option or AGENTFS_BIN), the addon (AGENTFS_ADDON, else the
 * engine package's) runs the engine in this process; else the engine
 * package's binary, or agentfs on PATH, runs as a child process; else the
 * WebAssembly engine runs, said once on stderr.
 */
export function chooseEngine(transport?: EngineMode, engine?: string): { addon?: string; engine?: string; wasm?: true } {
  const env = process.env.AGENTFS_TRANSPORT;
  if (env && env !== "inprocess" && env !== "process" && env !== "wasm") {
    throw kindError("INVALID_ARGUMENT", `AGENTFS_TRANSPORT=${env}: use "inprocess", "process" or "wasm"`);
  }
  const mode = transport ?? (env as EngineMode | undefined);
  if (mode === "wasm") return { wasm: true };
  if (mode === "process") return { engine: findEngine(engine) };
  const addon = process.env.AGENTFS_ADDON || bundledAddon();
  if (mode === "inprocess") {
    if (!addon || !isFile(addon)) {
      throw kindError(
        "NOT_FOUND",
        addon
          ? `agentfs engine addon not found at ${addon}: the addon ships in @agentfs-sdk/linux-x64 only; use { transport: "process" } (the engine binary) or { transport: "wasm" }`
          : `agentfs engine addon not found: ${missingPackage()}; the addon ships in @agentfs-sdk/linux-x64 only (elsewhere use { transport: "process" } or { transport: "wasm" }); ` +
            "or build it with `go build -buildmode=c-shared -o agentfs.node ./cmd/agentfs-node` in core/ and set AGENTFS_ADDON",
      );
    }
    return { addon };
  }
  if (engine || process.env.AGENTFS_BIN) return { engine: findEngine(engine) };
  if (addon && isFile(addon)) return { addon };
  const found = locateEngine();
  if (found) return { engine: found };
  noteWasmFallback();
  return { wasm: true };
}
