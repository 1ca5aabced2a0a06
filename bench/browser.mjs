// Browser benchmarks (issue 15): writeFile/readFile of 1 KiB and 1 MiB in
// headless Chromium with the database in OPFS, for this SDK in a page
// (whole-file saves), in a dedicated worker (pages written in place
// through synchronous access handles) and agentfs-sdk 0.6.4's browser
// build over @tursodatabase/database-wasm 0.7.2, in one browser run; cold
// start (navigation/process start to the first resolved write) in
// Chromium and Node; each .wasm's size raw and gzipped. Prints a Markdown
// table (and saves it under $RESULTS when set).
//
//   bench/browser.sh              (builds what it needs, installs the reference side)
//   node bench/browser.mjs        with AGENTFS_WASM, AGENTFS_WASM_NONODE, TURSO_DEPS set
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const sdk = join(root, "sdk-ts");
const runs = Number(process.env.COLD_RUNS ?? 3);
const full = process.env.AGENTFS_WASM || join(root, "bin", "agentfs.wasm");
const nonode = process.env.AGENTFS_WASM_NONODE;
const workersWasm = process.env.AGENTFS_WASM_WORKERS;
const deps = process.env.TURSO_DEPS;
const { launch } = await import(join(sdk, "test", "browser", "harness.mjs"));
const { build } = await import(join(sdk, "node_modules", "esbuild", "lib", "main.js"));

// The reference side, bundled for the page.
const work = mkdtempSync(join(tmpdir(), "agentfs-bench-browser-"));
await build({
  entryPoints: [join(here, "browser", "turso-entry.js")],
  bundle: true,
  format: "esm",
  platform: "browser",
  nodePaths: [join(deps, "node_modules")],
  outfile: join(work, "turso.js"),
  logLevel: "warning",
});

// Turso's database shares memory with its worker (SharedArrayBuffer), so
// the page must be cross-origin isolated: every response says COOP/COEP.
const types = { ".js": "text/javascript", ".html": "text/html", ".wasm": "application/wasm" };
const files = {
  "/wasm/agentfs.wasm": full,
  "/wasm/wasm_exec.js": join(dirname(full), "wasm_exec.js"),
  "/wasm-nonode/agentfs.wasm": nonode,
  "/wasm-nonode/wasm_exec.js": join(dirname(full), "wasm_exec.js"),
  "/turso.js": join(work, "turso.js"),
};
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  let file = files[path];
  if (!file && path.startsWith("/dist/")) file = join(sdk, "dist", normalize(path.slice(6)));
  if (!file && path.startsWith("/test/")) file = join(sdk, "test", "browser", "pages", normalize(path.slice(6)));
  let body;
  try {
    body = path === "/" ? "<!doctype html><title>bench</title>" : readFileSync(file);
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {
    "content-type": path === "/" ? "text/html" : (types[extname(file)] ?? "application/octet-stream"),
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
    "cache-control": "no-store",
  });
  res.end(body);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const origin = `http://127.0.0.1:${server.address().port}`;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const chromiumVersion = execFileSync(process.env.CHROMIUM || "/usr/bin/chromium", ["--version"], { encoding: "utf8" }).trim();
// Default V8 tiering (what users get), not the test suite's Liftoff only.
const browserArgs = ["--js-flags=--no-liftoff-only"];

// The operations, as source text run in a page or in the worker:
// (open, write, read, close) over a fresh agent.
const OPS = `async (kind, wasm) => {
  let a, write, read;
  if (kind === "turso") {
    const db = await turso.connect("bench-turso.db");
    a = await turso.AgentFS.openWith(db);
    write = (p, d) => a.fs.writeFile(p, d);
    read = (p) => a.fs.readFile(p);
  } else {
    const sdk = globalThis.sdk ?? (await import("/dist/browser.js"));
    a = await sdk.AgentFS.open({ id: "bench-" + kind, wasm });
    write = (p, d) => a.fs.writeFile(p, d);
    read = (p) => a.fs.readFile(p);
  }
  const out = {};
  for (const [name, size, n] of [["1 KiB", 1024, 50], ["1 MiB", 1 << 20, 10]]) {
    const data = new Uint8Array(size).fill(7);
    await write("/warm", data);
    let t = performance.now();
    for (let k = 0; k < n; k++) await write("/f" + k, data);
    out["writeFile " + name] = (performance.now() - t) / n;
    t = performance.now();
    for (let k = 0; k < n; k++) if ((await read("/f" + k)).length !== size) throw new Error("short read");
    out["readFile " + name] = (performance.now() - t) / n;
  }
  if (a.close) await a.close();
  return out;
}`;

// Steady state: one fresh profile, the three sides one after the other.
const ops = {};
{
  const dir = mkdtempSync(join(tmpdir(), "agentfs-bench-"));
  const ctx = await launch(dir, browserArgs);
  const page = await ctx.newPage();
  await page.goto(origin + "/");
  await page.addScriptTag({ type: "module", content: `import("/turso.js").then(() => { globalThis.tursoReady = true; });` });
  await page.waitForFunction(() => globalThis.tursoReady === true);
  ops.page = await page.evaluate(`(${OPS})("page", "/wasm/agentfs.wasm")`);
  ops.worker = await page.evaluate(
    ([src]) =>
      new Promise((resolve, reject) => {
        const w = new Worker("/test/eval-worker.js", { type: "module" });
        w.onmessage = (ev) => (ev.data.ok ? resolve(ev.data.value) : reject(new Error(ev.data.error.message)));
        w.onerror = (ev) => reject(new Error(ev.message));
        w.postMessage({ seq: 1, fn: `(sdk) => (${src})("worker", "/wasm/agentfs.wasm")` });
      }),
    [OPS],
  );
  ops.turso = await page.evaluate(`(${OPS})("turso")`);
  await ctx.close();
  rmSync(dir, { recursive: true, force: true });
}

// Cold start in Chromium: a fresh profile (no compiled-code cache) each
// run; navigation start -> the first write resolved in OPFS.
const FIRST = `async (kind, wasm) => {
  if (kind === "turso") {
    await import("/turso.js");
    const a = await turso.AgentFS.openWith(await turso.connect("first.db"));
    await a.fs.writeFile("/first.txt", "hello");
  } else {
    const sdk = await import("/dist/browser.js");
    const a = await sdk.AgentFS.open({ id: "first", wasm });
    await a.fs.writeFile("/first.txt", "hello");
    await a.close();
  }
  return performance.now();
}`;
const cold = {};
for (const [label, kind, wasm] of [
  ["agentfs-go, full .wasm (with node)", "page", "/wasm/agentfs.wasm"],
  ["agentfs-go, agentfs_nonode .wasm", "page", "/wasm-nonode/agentfs.wasm"],
  ["agentfs-sdk 0.6.4 + database-wasm 0.7.2", "turso"],
]) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "agentfs-bench-"));
    const ctx = await launch(dir, browserArgs);
    const page = await ctx.newPage();
    await page.goto(origin + "/");
    ms.push(await page.evaluate(`(${FIRST})(${JSON.stringify(kind)}, ${JSON.stringify(wasm ?? "")})`));
    await ctx.close();
    rmSync(dir, { recursive: true, force: true });
  }
  cold[label] = ms;
}

// Cold start in Node: a fresh process each run, import -> first write.
const nodeCold = {};
for (const [label, wasm] of [["agentfs-go, full .wasm (with node)", full], ["agentfs-go, agentfs_nonode .wasm", nonode]]) {
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const script = `const t0 = performance.now();
      const { AgentFS } = await import(${JSON.stringify(join(sdk, "dist", "index.js"))});
      const a = await AgentFS.open({ transport: "wasm", wasm: ${JSON.stringify(wasm)} });
      await a.fs.writeFile("/first.txt", "hello");
      console.log(performance.now() - t0);
      await a.close();`;
    ms.push(Number(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim()));
  }
  nodeCold[label] = ms;
}
server.close();

const size = (f) => {
  const raw = readFileSync(f);
  const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }).length;
  return `${(raw.length / 1048576).toFixed(1)} MiB | ${(gzipSync(raw, { level: 9 }).length / 1048576).toFixed(1)} MiB | ${(br / 1048576).toFixed(1)} MiB`;
};
const tursoWasm = join(deps, "node_modules", "@tursodatabase", "database-wasm", "dist", "turso.wasm32-wasi.wasm");

const out = [];
out.push(`${chromiumVersion}, Node ${process.version}, V8 default tiering; ${runs} cold runs each (median, all runs in brackets). Load at start: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}.`);
out.push("");
out.push("Per operation, ms (mean of 50 x 1 KiB, 10 x 1 MiB, each awaited; database in OPFS):");
out.push("");
out.push("| operation | agentfs-go in a page (whole-file save) | agentfs-go in a worker (pages in place) | agentfs-sdk 0.6.4 + database-wasm 0.7.2 |");
out.push("|---|---:|---:|---:|");
for (const op of Object.keys(ops.page)) out.push(`| ${op} | ${fmt(ops.page[op])} | ${fmt(ops.worker[op])} | ${fmt(ops.turso[op])} |`);
out.push("");
out.push("Cold start to the first resolved write, ms:");
out.push("");
out.push("| where | engine | median | runs |");
out.push("|---|---|---:|---|");
for (const [label, ms] of Object.entries(cold)) out.push(`| Chromium (fresh profile, page) | ${label} | ${fmt(median(ms))} | ${ms.map(fmt).join(", ")} |`);
for (const [label, ms] of Object.entries(nodeCold)) out.push(`| Node (new process, transport "wasm") | ${label} | ${fmt(median(ms))} | ${ms.map(fmt).join(", ")} |`);
out.push("");
out.push("WebAssembly size:");
out.push("");
out.push("| build | raw | gzip -9 | brotli -5 |");
out.push("|---|---:|---:|---:|");
out.push(`| agentfs-go full (\`go build\`, GOOS=js; the Node build) | ${size(full)} |`);
out.push(`| agentfs-go \`-tags agentfs_nonode\` (no sandbox \`node\`) | ${size(nonode)} |`);
if (workersWasm) out.push(`| agentfs-go \`-tags agentfs_workers\` (Cloudflare Workers: no SQLite, no \`node\`) | ${size(workersWasm)} |`);
out.push(`| @tursodatabase/database-wasm 0.7.2 (turso.wasm32-wasi.wasm) | ${size(tursoWasm)} |`);
const table = out.join("\n") + "\n";
process.stdout.write(table);
if (process.env.RESULTS) writeFileSync(join(process.env.RESULTS, `browser-${new Date().toISOString().replace(/[:.]/g, "-")}.md`), table);
rmSync(work, { recursive: true, force: true });
