// Shared helpers of the tests: the engine under test (AGENTFS_BIN, else the
// checkout's bin/agentfs built by `go tool task build`; AGENTFS_ADDON, else
// bin/agentfs.node, for the in-process transport; AGENTFS_WASM, else
// bin/agentfs.wasm, for the wasm transport), temp directories
// and a real `agentfs serve http` on a free loopback port.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const PKG = dirname(dirname(fileURLToPath(import.meta.url)));
export const ROOT = dirname(PKG);
export const ENGINE = process.env.AGENTFS_BIN || join(ROOT, "bin", "agentfs");
if (!existsSync(ENGINE)) throw new Error(`no engine at ${ENGINE}: run \`go tool task build\` or set AGENTFS_BIN`);
process.env.AGENTFS_BIN = ENGINE;
// The engine as a Node addon (transport "inprocess"), built by `go tool task build`.
export const ADDON = process.env.AGENTFS_ADDON || join(ROOT, "bin", "agentfs.node");
if (!existsSync(ADDON)) throw new Error(`no engine addon at ${ADDON}: run \`go tool task build\` or set AGENTFS_ADDON`);
process.env.AGENTFS_ADDON = ADDON;
// The engine as WebAssembly (transport "wasm"), with Go's wasm_exec.js beside it.
export const WASM = process.env.AGENTFS_WASM || join(ROOT, "bin", "agentfs.wasm");
if (!existsSync(WASM)) throw new Error(`no WASM engine at ${WASM}: run \`go tool task build\` or set AGENTFS_WASM`);
process.env.AGENTFS_WASM = WASM;

export function tempDir(t) {
  const d = mkdtempSync(join(tmpdir(), "agentfs-sdk-ts-"));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Rejects with the error of fn, or fails when fn succeeds. */
export async function failure(fn) {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a failure");
}

/** Starts `agentfs serve http` on a free port; resolves with its base URL. */
export async function serveHttp(t, { token, data }) {
  const env = { ...process.env };
  if (token) env.AGENTFS_TOKEN = token;
  else delete env.AGENTFS_TOKEN;
  const p = spawn(ENGINE, ["serve", "http", "--listen", "127.0.0.1:0", "--data", data, "--quiet"], { env, stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => {
    p.kill("SIGTERM");
    return new Promise((r) => (p.exitCode !== null ? r() : p.on("exit", r)));
  });
  let log = "";
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      log += d;
      const m = /at (http:\/\/[0-9.:]+)/.exec(log);
      if (m) resolve(m[1]);
    };
    p.stderr.setEncoding("utf8").on("data", onData);
    p.stdout.setEncoding("utf8").on("data", onData);
    p.on("exit", (code) => reject(new Error(`serve http exited with ${code}: ${log}`)));
  });
}
