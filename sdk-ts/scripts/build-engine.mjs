// Builds what agentfs-sdk itself carries of the engine: wasm/agentfs.wasm
// with Go's wasm_exec.js (the engine as WebAssembly: the "wasm" transport,
// and the fallback on platforms without an engine package) and
// wasm/agentfs-workers.wasm (agentfs-sdk/cloudflare). Run by
// `npm pack` through the prepack script. The native engines (binary, Node
// addon) travel in the platform packages @agentfs-sdk/<platform>, built by
// scripts/pack-all.sh.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = dirname(dirname(fileURLToPath(import.meta.url)));
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
