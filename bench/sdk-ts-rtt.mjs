// The round trip of a call from the TypeScript SDK, over the transport that
// AGENTFS_TRANSPORT selects (run by bench/sdk-ts.sh from a
// project where agentfs-sdk is installed): a Ping frame (the transport
// alone: the engine answers it in its read loop) and the cheapest calls
// (AccessRequest on "/", InfoRequest: a dispatched call that touches
// nothing or little). Prints one "RTT {...}" JSON line with p50/p99 in µs.
import { AgentFS } from "agentfs-sdk";

const N = Number(process.env.RTT_N || 20000);
const a = await AgentFS.open();
const t = a.transport;
async function measure(fn) {
  for (let i = 0; i < 2000; i++) await fn(); // warm-up (JIT)
  const lat = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    await fn();
    lat[i] = performance.now() - s;
  }
  lat.sort();
  const us = (q) => Math.round(lat[Math.min(N - 1, Math.floor(q * N))] * 1000 * 10) / 10;
  return { n: N, p50_us: us(0.5), p90_us: us(0.9), p99_us: us(0.99) };
}
const out = {
  ping: await measure(() => t.ping()),
  access_root: await measure(() => a.fs.access("/")),
  info: await measure(() => a.rpc.agent.info({})),
};
for (const [k, v] of Object.entries(out)) console.log(`${k.padEnd(12)} p50=${v.p50_us}us p90=${v.p90_us}us p99=${v.p99_us}us (n=${v.n})`);
console.log("RTT " + JSON.stringify(out));
await a.close();
