// Markdown comparison of workloads.mjs runs: Turso's agentfs-sdk 0.6.4
// (--ref FILE) and this project's TypeScript SDK with its default
// transport, the engine in the Node process (--ts FILE), and optionally
// with the engine as a child process over stdio (--tsproc FILE), with the
// targets of issue 4 (judged on --ts), plus the round trip of an empty
// call (--rtt and --rttproc FILEs from sdk-ts-rtt.mjs), and the floor
// (--floor FILE: bench/floor-sdk, Node and the workload with no storage)
// for cold start and memory. Each FILE is raw output: "JSON {...}" lines (medians
// over several) and /usr/bin/time -v's "Maximum resident set size".
import fs from "node:fs";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const median = (xs) => {
  const s = xs.filter((x) => x !== undefined && x !== null).sort((a, b) => a - b);
  if (!s.length) return undefined;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
function load(file) {
  if (!file) return undefined;
  const txt = fs.readFileSync(file, "utf8");
  const runs = txt.split("\n").filter((l) => l.startsWith("JSON ")).map((l) => JSON.parse(l.slice(5)));
  if (!runs.length) throw new Error(`${file}: no JSON line (did the run fail?)`);
  const peaks = [...txt.matchAll(/Maximum resident set size \(kbytes\): (\d+)/g)].map((m) => Number(m[1]));
  return { runs, peaks };
}
// The second column of ours: --tsproc (the engine as a child over stdio) or --tswasm (the engine as WebAssembly).
const second = args.tswasm && !args.tsproc ? "wasm" : "stdio";
const ref = load(args.ref), ts = load(args.ts), tsproc = load(args.tsproc ?? args.tswasm), floor = load(args.floor);
const op = (side, k, f) => side && median(side.runs.map((r) => r.ops[k]?.[f]));
const targets = {
  "a.writeFile 1KiB": 5, "b.readFile 1KiB random": 5, "c.stat random": 3, "d.writeFile 64MiB": 20,
  "d.readFile 64MiB": 3, 'e.kv.list prefix "key:1" (x5)': 100, "f.tools.record": 5,
};
const num = (x, d = 1) => (x === undefined ? "-" : x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
function cell(side, k) {
  const mib = op(side, k, "mib_s"), ops = op(side, k, "ops_s"), n = side?.runs[0].ops[k]?.n;
  if (ops === undefined) return "-";
  if (mib !== undefined && k.startsWith("d.") && !k.includes("pread")) return `${num(mib)} MiB/s`;
  if (n <= 5) { const ms = 1000 / ops; return ms >= 1000 ? `${num(ms / 1000, 2)} s per call` : `${num(ms, 3)} ms per call`; }
  return `${num(ops, 0)} ops/s`;
}
const out = [];
const envOf = (s) => s?.runs[0].env;
out.push(`- reference: ${ref ? "agentfs-sdk 0.6.4 (" + envOf(ref).sdk + ")" : "-"}; ours: ${ts ? envOf(ts).sdk + " with the bundled engine in the Node process (default transport)" : "-"}${tsproc ? (second === "stdio" ? "; stdio: the same package with AGENTFS_TRANSPORT=process (the bundled engine as a child process)" : "; wasm: the same package with AGENTFS_TRANSPORT=wasm (the bundled agentfs.wasm in the Node process)") : ""}`);
out.push(`- node ${envOf(ts ?? ref).node}, cpu ${envOf(ts ?? ref).cpu}; runs per side: ref ${ref?.runs.length ?? 0}, ts ${ts?.runs.length ?? 0}, ${second} ${tsproc?.runs.length ?? 0} (medians if more than one)`);
out.push("- ratio: how many times faster the TypeScript SDK is (throughput, or time per call)", "");
const ratioOf = (side, k) => {
  const r = op(ref, k, "ops_s"), o = op(side, k, "ops_s");
  return r && o ? o / r : undefined;
};
const fmtRatio = (x) => (x === undefined ? "-" : num(x, x < 10 ? 2 : 1) + "x");
out.push(
  `| workload | agentfs-sdk 0.6.4 | this, in process | ratio | target | ${tsproc ? `this, ${second} | ratio | ` : ""}p50 ref / in process${tsproc ? ` / ${second}` : ""} (ms) |`,
  `|---|---:|---:|---:|---:|${tsproc ? "---:|---:|" : ""}---:|`,
);
for (const k of Object.keys((ts ?? ref).runs[0].ops)) {
  const ratio = ratioOf(ts, k);
  const tgt = targets[k];
  const ok = tgt && ratio !== undefined ? (ratio >= tgt ? " ✓" : " ✗") : "";
  const proc = tsproc ? `${cell(tsproc, k)} | ${fmtRatio(ratioOf(tsproc, k))} | ` : "";
  const p50 = [ref, ts, ...(tsproc ? [tsproc] : [])].map((s) => num(op(s, k, "p50_ms"), 3)).join(" / ");
  out.push(`| ${k} | ${cell(ref, k)} | ${cell(ts, k)} | ${fmtRatio(ratio)} | ${tgt ? "≥ " + tgt + "x" + ok : ""} | ${proc}${p50} |`);
}
const cold = (s) => s && s.runs.flatMap((r) => r.cold);
const coldCell = (s) => {
  const c = cold(s);
  if (!c?.length) return "-";
  const xs = c.map((x) => x.spawn_to_write_ms);
  return `${num(median(xs))} ms (min ${num(Math.min(...xs))}, max ${num(Math.max(...xs))})`;
};
const cts = cold(ts);
const coldMed = cts?.length ? median(cts.map((x) => x.spawn_to_write_ms)) : undefined;
out.push(`| cold start: node process start to first writeFile done | ${coldCell(ref)} | ${coldCell(ts)} | | ≤ 60 ms${coldMed === undefined ? "" : coldMed <= 60 ? " ✓" : " ✗"} | ${tsproc ? coldCell(tsproc) + " | | " : ""}|`);
const peak = (s) => (s?.peaks.length ? median(s.peaks) / 1024 : undefined);
const mib = (x) => (x === undefined ? "-" : num(x, 0) + " MiB");
const pk = peak(ts);
out.push(`| peak RSS of the whole run (/usr/bin/time -v) | ${mib(peak(ref))} | ${mib(pk)} | | ≤ 150 MiB${pk === undefined ? "" : pk <= 150 ? " ✓" : " ✗"} | ${tsproc ? mib(peak(tsproc)) + " | | " : ""}|`);
if (floor) {
  out.push("", `Floor (bench/floor-sdk: the same workloads on an SDK that stores nothing, Node and the workload alone): cold start ${coldCell(floor)}, peak RSS of the whole run ${mib(peak(floor))}.`);
}
if (ts) {
  out.push("", "Peak RSS of the node process after each phase (MiB; in process it includes the engine; a child engine is not included):", "");
  out.push("| phase | " + Object.keys(ts.runs[0].rss_kb).join(" | ") + " |", "|---|" + Object.keys(ts.runs[0].rss_kb).map(() => "---:").join("|") + "|");
  for (const [name, s] of [["agentfs-sdk 0.6.4", ref], ["this, in process", ts], [`this, ${second}`, tsproc], ["floor (no storage)", floor]]) {
    if (s) out.push(`| ${name} | ` + Object.keys(ts.runs[0].rss_kb).map((k) => num(median(s.runs.map((r) => r.rss_kb[k])) / 1024, 0)).join(" | ") + " |");
  }
}
const rttOf = (file) => {
  if (!file) return undefined;
  const line = fs.readFileSync(file, "utf8").split("\n").find((l) => l.startsWith("RTT "));
  return line ? JSON.parse(line.slice(4)) : undefined;
};
const rtts = [["in process", rttOf(args.rtt)], ["stdio", rttOf(args.rttproc)]].filter(([, r]) => r);
if (rtts.length) {
  out.push("", "Round trip of a call (µs; sequential, one call at a time; target p50 ≤ 50 µs):", "", "| call | transport | p50 | p90 | p99 |", "|---|---|---:|---:|---:|");
  for (const [k, label] of [["ping", "Ping frame (the frame path alone)"], ["access_root", "FilesystemService/Access \"/\" (empty call)"], ["info", "AgentService/Info (always a frame)"]]) {
    for (const [tname, r] of rtts) if (r[k]) out.push(`| ${label} | ${tname} | ${r[k].p50_us} | ${r[k].p90_us} | ${r[k].p99_us} |`);
  }
}
console.log(out.join("\n"));
