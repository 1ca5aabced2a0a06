// bench/cloudflare.sh: agentfs-sdk/cloudflare (the Go engine's Workers
// build over a Durable Object's SQLite storage) beside agentfs-sdk 0.6.4's
// own cloudflare integration, in workerd (npm workerd, the Workers
// runtime). Prints Markdown: Worker sizes against Cloudflare's limits,
// cold start of the first request, and requests/s of small writeFile and
// readFile, both implementations in the same workerd run.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { config, freePort, ROOT, start } from "../tests/cloudflare/workerd.mjs";

const B = join(ROOT, "bench", "cloudflare", "build");
const WASM = join(ROOT, "sdk-ts", "wasm", "agentfs-workers.wasm");
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const N = Number(process.env.N ?? 300);
const WARM = Number(process.env.WARM ?? 10);

function worker(impl) {
  const modules = [["build/worker.js", join(B, `${impl}.js`), "esModule"]];
  if (impl === "ours") modules.push(["wasm/agentfs-workers.wasm", WASM, "wasm"]);
  // 0.6.4's integration uses Node's Buffer: both run with nodejs_compat.
  return { name: impl, modules, classes: ["Agent"], bindings: [["AGENT", "Agent"]], flags: ["nodejs_compat"] };
}
const NAMES = { ours: "agentfs-sdk/cloudflare (this repo, Go engine as wasm)", turso: "agentfs-sdk 0.6.4 cloudflare (Turso, TypeScript)" };

const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-bench-"));
const loadAtStart = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const mib = (n) => (n / 1048576).toFixed(2);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function ok(r) {
  if (r.status >= 300) throw new Error(`${r.status}: ${await r.text()}`);
  await r.arrayBuffer();
}

try {
  // Sizes: what a deploy uploads (the bundle and its modules), and gzip
  // of it, which Cloudflare's limit counts; brotli at quality 5 beside
  // (quality 11 takes minutes on 26 MiB, and saves about 15% more).
  console.log("### Worker size\n");
  console.log("| implementation | raw MiB | gzip MiB | brotli -5 MiB | free plan (3 MiB) | paid plan (10 MiB) |");
  console.log("| --- | ---: | ---: | ---: | --- | --- |");
  const brotli = (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;
  for (const impl of ["ours", "turso"]) {
    const parts = worker(impl).modules.map(([, p]) => readFileSync(p));
    const raw = parts.reduce((n, b) => n + b.length, 0);
    const gz = parts.reduce((n, b) => n + gzipSync(b).length, 0);
    const br = parts.reduce((n, b) => n + brotli(b), 0);
    console.log(`| ${NAMES[impl]} | ${mib(raw)} | ${mib(gz)} | ${mib(br)} | ${gz <= 3 << 20 ? "fits" : "too large"} | ${gz <= 10 << 20 ? "fits" : "too large"} |`);
  }

  // Cold start: workerd started on an empty storage directory, time to
  // its socket answering, then to the first writeFile's answer.
  console.log(`\n### Cold start (median of ${ROUNDS} starts, empty storage)\n`);
  console.log("| implementation | workerd up, ms | first writeFile after up, ms | total, ms |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const impl of ["ours", "turso"]) {
    const up = [], first = [];
    for (let i = 0; i < ROUNDS; i++) {
      const port = await freePort();
      const file = config(join(dir, `cold-${impl}-${i}`), join(dir, `cold-${impl}-${i}-storage`), port, [worker(impl)]);
      const t0 = performance.now();
      const w = await start(file, port);
      const t1 = performance.now();
      try {
        await ok(await fetch(`http://127.0.0.1:${port}/a/w/hello.txt`, { method: "PUT", body: "hello" }));
      } finally {
        first.push(performance.now() - t1);
        up.push(t1 - t0);
        await w.stop();
      }
    }
    console.log(`| ${NAMES[impl]} | ${median(up).toFixed(0)} | ${median(first).toFixed(0)} | ${(median(up) + median(first)).toFixed(0)} |`);
  }

  // Throughput: both Workers in one workerd, warm objects.
  const port = await freePort();
  const file = config(join(dir, "warm"), join(dir, "warm-storage"), port, [worker("ours"), worker("turso")]);
  const w = await start(file, port);
  try {
    const base = { ours: `http://127.0.0.1:${port}`, turso: `http://127.0.0.1:${port + 1}` };
    const body = Buffer.alloc(1024, 97);
    const rows = [];
    for (const impl of ["ours", "turso"]) {
      const u = `${base[impl]}/bench`;
      // Warm: V8 tiers the engine's WebAssembly up while it runs (the
      // first few thousand calls are several times slower: in workerd
      // 1.20261117 the jump came after 3,000-4,000 writeFile+readFile;
      // cold start shows the first one). WARM loops of 2N operations.
      for (let i = 0; i < 20; i++) await ok(await fetch(`${u}/w/warm${i}`, { method: "PUT", body }));
      for (let i = 0; i < WARM; i++) await ok(await fetch(`${u}/loop?n=${N}&size=1024`));
      const rate = async (fn, n) => {
        const t = performance.now();
        await fn(n);
        return (n / (performance.now() - t)) * 1000;
      };
      const seqW = await rate(async (n) => { for (let i = 0; i < n; i++) await ok(await fetch(`${u}/w/f${i % 50}`, { method: "PUT", body })); }, N);
      const seqR = await rate(async (n) => { for (let i = 0; i < n; i++) await ok(await fetch(`${u}/r/f${i % 50}`)); }, N);
      const parW = await rate(async (n) => {
        let next = 0;
        await Promise.all(Array.from({ length: 8 }, async () => { while (next < n) { const i = next++; await ok(await fetch(`${u}/w/p${i % 50}`, { method: "PUT", body })); } }));
      }, N);
      // Inside the object: N writeFile + N readFile with no HTTP between.
      const t = performance.now();
      await ok(await fetch(`${u}/loop?n=${N}&size=1024`));
      const loop = ((2 * N) / (performance.now() - t)) * 1000;
      rows.push(`| ${NAMES[impl]} | ${seqW.toFixed(0)} | ${seqR.toFixed(0)} | ${parW.toFixed(0)} | ${loop.toFixed(0)} |`);
    }
    console.log(`\n### Requests/s, 1 KiB files (${N} each, one object, both Workers in one workerd)\n`);
    console.log("| implementation | writeFile seq (HTTP) | readFile seq (HTTP) | writeFile 8 in flight (HTTP) | write+read inside the object, ops/s |");
    console.log("| --- | ---: | ---: | ---: | ---: |");
    for (const r of rows) console.log(r);
  } finally {
    await w.stop();
  }
  console.log(`\nworkerd ${JSON.parse(readFileSync(join(ROOT, "examples", "cloudflare", "node_modules", "workerd", "package.json"), "utf8")).version}, Node ${process.version}; gzip at zlib's default level. Load at start: ${loadAtStart}.`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
