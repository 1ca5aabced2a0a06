// The WebAssembly engine's memory and speed under V8's defaults and under
// `node --liftoff-only` (docs/BENCHMARKS.md, "The engine as WebAssembly"):
//
//   node bench/wasm-memory.mjs && node --liftoff-only bench/wasm-memory.mjs
//
// Needs bin/agentfs.wasm (go tool task build-wasm) and sdk-ts/dist (npm run build).
import { AgentFS } from "../sdk-ts/dist/index.js";

const wasm = new URL("../bin/agentfs.wasm", import.meta.url).pathname;
const mib = () => Math.round(process.memoryUsage().rss / 1048576);
const a = await AgentFS.open({ transport: "wasm", wasm });
console.log(`rss after open: ${mib()} MiB`);
const buf = Buffer.alloc(1024, 7);
const time = async (name, n, fn) => {
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  console.log(`${name.padEnd(13)} ${((n / (performance.now() - t)) * 1000).toFixed(0)} ops/s`);
};
await time("writeFile", 10000, (i) => a.fs.writeFile(`/d${i % 100}/f${i}.bin`, buf));
console.log(`rss after 10,000 writes: ${mib()} MiB`);
await time("readFile", 5000, (i) => a.fs.readFile(`/d${i % 100}/f${i}.bin`));
await time("stat", 5000, (i) => a.fs.stat(`/d${i % 100}/f${i}.bin`));
await time("kv.set", 5000, (i) => a.kv.set(`k${i}`, { i }));
await time("kv.get", 5000, (i) => a.kv.get(`k${i}`));
await time("tools.record", 3000, (i) => a.tools.record("t", 1, 2, { i }, { r: i }));
await time("tools.get", 3000, (i) => a.tools.get(i + 1));
console.log(`rss at the end: ${mib()} MiB`);
await a.close();
