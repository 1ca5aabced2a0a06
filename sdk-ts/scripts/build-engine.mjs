// Builds the agentfs engine into bin/linux-x64/agentfs (the executable the
// "process" transport starts), bin/linux-x64/agentfs.node (the same
// engine as a Node addon, loaded by the default "inprocess" transport) and
// wasm/agentfs.wasm with Go's wasm_exec.js (the engine as WebAssembly, the
// "wasm" transport, for any platform), wasm/agentfs-workers.wasm (the
// Workers build, agentfs-sdk/cloudflare), so that all three travel inside the
// npm package (run by `npm pack` through the prepack script).
// The engine links SQLite through cgo, so it is built natively: only on a
// linux-x64 host, from the checkout this package sits in (../cli).
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = join(pkg, "..", "cli");
const out = join(pkg, "bin", "linux-x64", "agentfs");
if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`build-engine: the bundled engine is built on linux-x64 only (this is ${process.platform}-${process.arch})`);
  process.exit(1);
}
mkdirSync(dirname(out), { recursive: true });
execFileSync("go", ["build", "-ldflags=-s -w", "-o", out, "./cmd/agentfs"], { cwd: cli, stdio: "inherit" });
console.error(`build-engine: ${out} (${(statSync(out).size / 1048576).toFixed(1)} MiB)`);
const addon = join(pkg, "bin", "linux-x64", "agentfs.node");
execFileSync("go", ["build", "-buildmode=c-shared", "-ldflags=-s -w", "-o", addon, "./cmd/agentfs-node"], { cwd: join(pkg, "..", "core"), stdio: "inherit" });
console.error(`build-engine: ${addon} (${(statSync(addon).size / 1048576).toFixed(1)} MiB)`);
const wasm = join(pkg, "wasm", "agentfs.wasm");
mkdirSync(dirname(wasm), { recursive: true });
execFileSync("go", ["build", "-trimpath", "-ldflags=-s", "-o", wasm, "."], { cwd: join(pkg, "..", "wasm"), stdio: "inherit", env: { ...process.env, GOOS: "js", GOARCH: "wasm" } });
const goroot = execFileSync("go", ["env", "GOROOT"], { encoding: "utf8" }).trim();
copyFileSync(join(goroot, "lib", "wasm", "wasm_exec.js"), join(pkg, "wasm", "wasm_exec.js"));
console.error(`build-engine: ${wasm} (${(statSync(wasm).size / 1048576).toFixed(1)} MiB)`);
// The Workers build (agentfs-sdk/cloudflare): the Durable Object's SQL
// storage instead of SQLite inside, without the node command.
const workers = join(pkg, "wasm", "agentfs-workers.wasm");
execFileSync("go", ["build", "-tags", "agentfs_workers", "-trimpath", "-ldflags=-s -w", "-o", workers, "."], { cwd: join(pkg, "..", "wasm"), stdio: "inherit", env: { ...process.env, GOOS: "js", GOARCH: "wasm" } });
console.error(`build-engine: ${workers} (${(statSync(workers).size / 1048576).toFixed(1)} MiB)`);
