// The npm packages' sizes and `npm install agentfs-sdk` time into an empty
// project from a local Verdaccio registry (tests/npm/registry.mjs), with
// and without optional dependencies (the engine package of this platform).
// Each install starts from an empty project and an empty npm cache; one
// unmeasured install first lets Verdaccio fetch the third-party
// dependency (@bufbuild/protobuf) from its uplink, so every measured
// install is served from local storage. Prints a Markdown table.
//
//   node bench/npm-install.mjs TARBALLS_FILE    (bench/npm-install.sh makes the file)
//   RUNS=3 (default): installs per variant; the median and the range are shown.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { freshCache, startRegistry } from "../tests/npm/registry.mjs";

const tarballs = readFileSync(process.argv[2], "utf8").trim().split("\n");
const RUNS = Number(process.env.RUNS || 3);
const mib = (n) => (n / 1048576).toFixed(1);

function unpackedSize(tgz) {
  // tar -tvz lists each entry's size in the third column.
  return execFileSync("tar", ["-tvzf", tgz], { encoding: "utf8" })
    .trim()
    .split("\n")
    .reduce((s, l) => s + Number(l.split(/\s+/)[2] || 0), 0);
}

const reg = await startRegistry();
try {
  for (const p of tarballs) execFileSync("npm", ["publish", p], { env: reg.env, stdio: ["ignore", "ignore", "inherit"] });
  const install = (args, cache) => {
    const app = mkdtempSync(join(tmpdir(), "agentfs-npm-bench-"));
    try {
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
      const t0 = process.hrtime.bigint();
      execFileSync("npm", ["install", "agentfs-sdk", ...args], { cwd: app, env: { ...reg.env, npm_config_cache: cache }, stdio: ["ignore", "ignore", "inherit"] });
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const du = Number(execFileSync("du", ["-sb", join(app, "node_modules")], { encoding: "utf8" }).split(/\s/)[0]);
      return { secs, du };
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  };
  install([], freshCache(reg, "prime"));
  const rows = [];
  for (const [label, args] of [["npm install agentfs-sdk", []], ["npm install agentfs-sdk --omit=optional", ["--omit=optional"]]]) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(install(args, freshCache(reg, `${i}`)));
    const secs = runs.map((r) => r.secs).sort((a, b) => a - b);
    rows.push(`| \`${label}\` | ${secs[Math.floor(secs.length / 2)].toFixed(1)} s (${secs[0].toFixed(1)}-${secs[secs.length - 1].toFixed(1)}) | ${mib(runs[0].du)} MiB |`);
  }
  console.log(`npm ${execFileSync("npm", ["--version"], { encoding: "utf8" }).trim()}, Node ${process.version}, Verdaccio on 127.0.0.1; ${process.platform}-${process.arch}.\n`);
  console.log("| tarball | packed | unpacked |\n| --- | ---: | ---: |");
  for (const p of tarballs) console.log(`| ${basename(p)} | ${mib(statSync(p).size)} MiB | ${mib(unpackedSize(p))} MiB |`);
  console.log(`\nInstall into an empty project, empty npm cache, median of ${RUNS} (range):\n`);
  console.log("| command | time | node_modules |\n| --- | ---: | ---: |");
  for (const r of rows) console.log(r);
} finally {
  reg.stop();
}
