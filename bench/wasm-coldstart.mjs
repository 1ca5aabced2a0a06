// Cold start of the engine as WebAssembly to the first write, in Node
// (agentfs-sdk, transport "wasm") and in headless Chromium (the SDK's
// browser build, database in OPFS), with V8's default tiering and with
// Liftoff only; writeFile/readFile of 1 KiB and 1 MiB in Chromium; the
// .wasm's size raw and gzipped. Each run is a new process / a new browser
// profile, so nothing is cached.
//
//   node bench/wasm-coldstart.mjs [runs]     (after `go tool task build` and `npm run build` in sdk-ts)
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
for (const flags of [[], ["--liftoff-only"]]) {
  const nodeMs = [];
  for (let i = 0; i < runs; i++) {
    const script = `const t0 = performance.now();
      const { AgentFS } = await import(${JSON.stringify(join(sdk, "dist", "index.js"))});
      const a = await AgentFS.open({ transport: "wasm", wasm: ${JSON.stringify(wasm)} });
      await a.fs.writeFile("/first.txt", "hello");
      console.log(performance.now() - t0);
      await a.close();`;
    nodeMs.push(Number(execFileSync(process.execPath, [...flags, "--input-type=module", "-e", script], { encoding: "utf8" }).trim()));
  }
  console.log(`node ${process.version} ${flags.join(" ") || "(default tiering)"}: import -> first write: median ${median(nodeMs).toFixed(0)} ms (${nodeMs.map((x) => x.toFixed(0)).join(", ")})`);
}

// Chromium: a fresh profile each run; navigation start -> first write in
// OPFS. Then, in the last run's page, writeFile/readFile of 1 KiB and
// 1 MiB (each write saves the database to OPFS before it resolves).
const server = await serve();
const version = execFileSync(process.env.CHROMIUM || "/usr/bin/chromium", ["--version"], { encoding: "utf8" }).trim();
for (const [label, args] of [["V8 Liftoff only (the test suite's setting)", []], ["V8 default tiering", ["--js-flags=--no-liftoff-only"]]]) {
  const browserMs = [];
  let ops;
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "agentfs-bench-"));
    const ctx = await launch(dir, args);
    const page = await ctx.newPage();
    await page.goto(server.origin + "/test/index.html");
    const r = await page.evaluate(async (measure) => {
      const { AgentFS } = await import("/dist/browser.js");
      const a = await AgentFS.open({ id: "bench" });
      await a.fs.writeFile("/first.txt", "hello");
      const first = performance.now(); // since navigation start
      let ops;
      if (measure) {
        ops = {};
        for (const [name, size, n] of [["1KiB", 1024, 50], ["1MiB", 1 << 20, 10]]) {
          const data = new Uint8Array(size).fill(7);
          let t = performance.now();
          for (let k = 0; k < n; k++) await a.fs.writeFile(`/f${k}`, data);
          ops[`writeFile ${name}`] = (performance.now() - t) / n;
          t = performance.now();
          for (let k = 0; k < n; k++) await a.fs.readFile(`/f${k}`);
          ops[`readFile ${name}`] = (performance.now() - t) / n;
        }
      }
      await a.close();
      return { first, ops };
    }, i === runs - 1);
    browserMs.push(r.first);
    ops = r.ops ?? ops;
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`chromium ${version}, ${label}: navigation -> first write (OPFS): median ${median(browserMs).toFixed(0)} ms (${browserMs.map((x) => x.toFixed(0)).join(", ")})`);
  console.log(`  ms per call: ${Object.entries(ops).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ")}`);
}
await server.stop();
