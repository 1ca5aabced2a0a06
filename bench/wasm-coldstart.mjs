// Cold start of the engine as WebAssembly to the first write, in Node
// (agentfs-sdk, transport "wasm") and in headless Chromium (the SDK's
// browser build, database in OPFS), plus the .wasm's size raw and
// gzipped. Each run is a new process / a new browser profile, so nothing
// is cached.
//
//   node bench/wasm-coldstart.mjs [runs]     (after `go tool task build` and `npm run build` in sdk-ts)
// The browser runs with the test harness's flags (V8 Liftoff only); set
// CHROMIUM_FLAGS="--js-flags=--no-liftoff-only" for V8's default tiering.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sdk = join(root, "sdk-ts");
const runs = Number(process.argv[2] ?? 3);
const wasm = process.env.AGENTFS_WASM || join(root, "bin", "agentfs.wasm");
const { serve, launch } = await import(join(sdk, "test", "browser", "harness.mjs"));

const raw = readFileSync(wasm);
const gz = gzipSync(raw, { level: 9 }).length;
console.log(`agentfs.wasm: ${(raw.length / 1048576).toFixed(1)} MiB raw, ${(gz / 1048576).toFixed(1)} MiB gzipped (-9)`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Node: a fresh process each run, from import to the first resolved write.
const nodeMs = [];
for (let i = 0; i < runs; i++) {
  const script = `const t0 = performance.now();
    const { AgentFS } = await import(${JSON.stringify(join(sdk, "dist", "index.js"))});
    const a = await AgentFS.open({ transport: "wasm", wasm: ${JSON.stringify(wasm)} });
    await a.fs.writeFile("/first.txt", "hello");
    console.log(performance.now() - t0);
    await a.close();`;
  nodeMs.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim()));
}
console.log(`node ${process.version}: import -> first write: median ${median(nodeMs).toFixed(0)} ms (${nodeMs.map((x) => x.toFixed(0)).join(", ")})`);

// Chromium: a fresh profile each run; navigation start -> first write in OPFS.
const server = await serve();
const browserMs = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-bench-"));
  const ctx = await launch(dir, (process.env.CHROMIUM_FLAGS ?? "").split(" ").filter(Boolean));
  const page = await ctx.newPage();
  await page.goto(server.origin + "/test/index.html");
  browserMs.push(
    await page.evaluate(async () => {
      const { AgentFS } = await import("/dist/browser.js");
      const a = await AgentFS.open({ id: "bench" });
      await a.fs.writeFile("/first.txt", "hello");
      const t = performance.now(); // since navigation start
      await a.close();
      return t;
    }),
  );
  await ctx.close();
  rmSync(dir, { recursive: true, force: true });
}
await server.stop();
console.log(`chromium ${execFileSync(process.env.CHROMIUM || "/usr/bin/chromium", ["--version"], { encoding: "utf8" }).trim()}: navigation -> first write (OPFS): median ${median(browserMs).toFixed(0)} ms (${browserMs.map((x) => x.toFixed(0)).join(", ")})`);
