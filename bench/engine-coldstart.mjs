// Cold start of each engine the packages ship, to the first completed
// write: a fresh Node process imports agentfs-sdk, opens a new agent and
// writes one file, with the engine as
//   - the Node addon, in the process (transport "inprocess", linux-x64),
//   - the binary with cgo (go-libsql) as a child process ("process"),
//   - the CGO-free binary (SQLite compiled to Go; the engine of every
//     other platform) as a child process,
//   - WebAssembly in the process ("wasm", the fallback anywhere).
// Prints a Markdown table of the median and the range over RUNS runs.
//
//   node bench/engine-coldstart.mjs      (bench/engine-coldstart.sh builds what it needs)
// Env: RUNS (5), AGENTFS_BIN, AGENTFS_BIN_NOCGO, AGENTFS_ADDON, AGENTFS_WASM.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sdk = join(root, "sdk-ts", "dist", "index.js");
const runs = Number(process.env.RUNS ?? 5);
const env = (k, d) => process.env[k] || d;
const engines = [
  ["Node addon, in process (linux-x64 package)", { transport: "inprocess" }, { AGENTFS_ADDON: env("AGENTFS_ADDON", join(root, "bin", "agentfs.node")) }],
  ["binary with cgo, child process (linux-x64 package)", { transport: "process" }, { AGENTFS_BIN: env("AGENTFS_BIN", join(root, "bin", "agentfs")) }],
  ["CGO-free binary, child process (other platforms' packages)", { transport: "process" }, { AGENTFS_BIN: env("AGENTFS_BIN_NOCGO", join(root, ".cache", "engines-static", "linux-x64", "agentfs")) }],
  ["WebAssembly, in process (fallback)", { transport: "wasm", wasm: env("AGENTFS_WASM", join(root, "bin", "agentfs.wasm")) }, {}],
];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`Cold start to the first write (node ${process.version}, ${runs} runs each, a new process and a new database per run)\n`);
console.log("| engine | median | min | max |\n|---|---:|---:|---:|");
for (const [name, opts, extra] of engines) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "agentfs-cold-"));
    const o = { ...opts, path: join(dir, "a.db") };
    const script = `const t0 = performance.now();
      const { AgentFS } = await import(${JSON.stringify(sdk)});
      const a = await AgentFS.open(${JSON.stringify(o)});
      await a.fs.writeFile("/first.txt", "hello");
      console.log(performance.now() - t0);
      await a.close();`;
    try {
      ms.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, ...extra } }).trim().split("\n").pop()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`| ${name} | ${median(ms).toFixed(0)} ms | ${Math.min(...ms).toFixed(0)} ms | ${Math.max(...ms).toFixed(0)} ms |`);
}
