// Cold start of the TypeScript SDKs, interleaved: node started to the first
// writeFile done (the "cold start" row of bench/sdk-ts.sh, which runs each
// side's five samples one side after the other), N fresh node processes per
// side taken in turns, so that the machine's load falls on every side
// alike; medians. The child is workloads.mjs's coldOnce child, unchanged:
// import the SDK, AgentFS.open a new path, writeFile, print, close.
//
// Run it in the scratch project bench/sdk-ts.sh installs (both SDKs):
//
//   ./bench/sdk-ts.sh                       # once, any size: builds and installs
//   cd bench/tmp/sdk-ts-project && AGENTFS_ADDON=$PWD/../../../bin/agentfs.node node ../../sdk-ts-cold.mjs
//
// Env: N (30) samples per side; SIDES ("ref ts floor"): ref is Turso's
// agentfs-sdk 0.6.4 (turso-agentfs), ts this package with its default
// transport, floor bench/floor-sdk (Node and the child alone).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N || 30);
const SIDES = (process.env.SIDES || "ref ts floor").split(/\s+/).filter(Boolean);
const MODULES = { ref: "turso-agentfs", ts: "agentfs-sdk", floor: join(HERE, "floor-sdk", "index.mjs") };
for (const s of SIDES) if (!MODULES[s]) throw new Error(`unknown side ${s} (want ${Object.keys(MODULES).join(", ")})`);
const CHILD = `const { AgentFS } = await import(process.env.SDK);
const a = await AgentFS.open({ path: process.env.CS_DB });
await a.fs.writeFile('/hello.txt', 'hello');
process.stdout.write(JSON.stringify({ inproc_ms: performance.now() }) + '\\n');
await a.close();`;

function once(side, db) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = null;
    let out = "";
    const p = spawn(process.execPath, ["--input-type=module", "-e", CHILD], { env: { ...process.env, SDK: MODULES[side], CS_DB: db } });
    p.stdout.on("data", (d) => {
      if (first === null) first = performance.now() - t0;
      out += d;
    });
    p.stderr.on("data", (d) => process.stderr.write(d));
    p.on("close", (rc) => (rc === 0 ? resolve({ write: first, inproc: JSON.parse(out).inproc_ms }) : reject(new Error(`${side}: exit status ${rc}`))));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const dir = mkdtempSync(join(tmpdir(), "sdk-ts-cold-"));
const R = Object.fromEntries(SIDES.map((s) => [s, []]));
try {
  for (let i = 0; i < N; i++) for (const s of SIDES) R[s].push(await once(s, join(dir, `${s}${i}.db`)));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
for (const s of SIDES) {
  const w = R[s].map((r) => r.write);
  console.log(`${s.padEnd(6)} median spawn->write ${median(w).toFixed(1)} ms (min ${Math.min(...w).toFixed(1)}), in-process ${median(R[s].map((r) => r.inproc)).toFixed(1)} ms, n=${w.length}`);
}
if (R.ref) for (const s of SIDES) if (s !== "ref") console.log(`ratio ref/${s} ${(median(R.ref.map((r) => r.write)) / median(R[s].map((r) => r.write))).toFixed(3)}`);
