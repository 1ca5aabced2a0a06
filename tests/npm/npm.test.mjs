// `npm install agentfs-sdk` as a user meets it, against a real registry
// (Verdaccio, registry.mjs): every tarball of sdk-ts/scripts/pack-all.sh
// (listed one a line in the file AGENTFS_NPM_TARBALLS) is checked for its
// contents and published with `npm publish`; then, in empty projects, the
// root README's TypeScript install command runs and the sdk-ts README's
// example runs, first with the native engine of this platform's package,
// then installed with --omit=optional, where the WebAssembly engine stands
// in and says so once on stderr. Only linux-x64 runs here; the other
// platforms' packages are checked for the right binary (os, cpu, the
// executable's header).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startRegistry } from "./registry.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VERSION = readFileSync(join(ROOT, "VERSION"), "utf8").trim();
const ALL = ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64", "win32-x64"];
// The packages built (pack-all.sh TARGET...): all of them in the suite;
// a subset (AGENTFS_NPM_TARGETS="linux-x64 ...") for a quicker local run.
const TARGETS = process.env.AGENTFS_NPM_TARGETS ? process.env.AGENTFS_NPM_TARGETS.split(/\s+/) : ALL;
const list = process.env.AGENTFS_NPM_TARBALLS;
if (!list) throw new Error("AGENTFS_NPM_TARBALLS: the file of tarball paths that sdk-ts/scripts/pack-all.sh printed (tests/npm/run.sh sets it)");
const TARBALLS = readFileSync(list, "utf8").trim().split("\n");
const tarball = (t) => TARBALLS.find((p) => basename(p) === (t ? `agentfs-sdk-${t}-${VERSION}.tgz` : `agentfs-sdk-${VERSION}.tgz`));

const temps = [];
function temp(name) {
  const d = mkdtempSync(join(tmpdir(), `agentfs-npm-${name}-`));
  temps.push(d);
  return d;
}
let registry;
after(() => {
  registry?.stop();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function unpack(tgz) {
  const d = temp("unpack");
  execFileSync("tar", ["-xzf", tgz, "-C", d]);
  const files = execFileSync("tar", ["-tzf", tgz], { encoding: "utf8" }).trim().split("\n").sort();
  return { dir: join(d, "package"), files, manifest: JSON.parse(readFileSync(join(d, "package", "package.json"), "utf8")) };
}

// The executable format of a binary from its first bytes: what the
// platform's loader checks (ELF e_machine, Mach-O cputype, PE machine).
function binaryFormat(path) {
  const b = Buffer.alloc(4096);
  const fd = openSync(path, "r");
  readSync(fd, b, 0, b.length, 0);
  closeSync(fd);
  if (b.readUInt32BE(0) === 0x7f454c46) {
    return { 0x3e: "ELF x86-64", 0xb7: "ELF aarch64" }[b.readUInt16LE(18)] ?? `ELF machine ${b.readUInt16LE(18)}`;
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    return { 0x01000007: "Mach-O x86_64", 0x0100000c: "Mach-O arm64" }[b.readUInt32LE(4)] ?? `Mach-O cputype ${b.readUInt32LE(4)}`;
  }
  if (b.toString("latin1", 0, 2) === "MZ") {
    const pe = b.readUInt32LE(0x3c);
    if (b.toString("latin1", pe, pe + 4) === "PE\0\0") return b.readUInt16LE(pe + 4) === 0x8664 ? "PE x86-64" : `PE machine ${b.readUInt16LE(pe + 4)}`;
  }
  return "unknown";
}
const FORMAT = { "linux-x64": "ELF x86-64", "linux-arm64": "ELF aarch64", "darwin-arm64": "Mach-O arm64", "darwin-x64": "Mach-O x86_64", "win32-x64": "PE x86-64" };

test("tarballs: agentfs-sdk and one engine package per platform, each with the right binary", () => {
  assert.equal(TARBALLS.length, 1 + TARGETS.length, TARBALLS.join("\n"));
  const main = unpack(tarball());
  assert.equal(main.manifest.name, "agentfs-sdk");
  assert.equal(main.manifest.version, VERSION);
  assert.deepEqual(main.manifest.optionalDependencies, Object.fromEntries(ALL.map((t) => [`@agentfs-sdk/${t}`, VERSION]).sort()));
  assert.equal(main.manifest.scripts, undefined, "a published manifest runs no scripts");
  for (const f of ["package/dist/index.js", "package/dist/index.d.ts", "package/wasm/agentfs.wasm", "package/wasm/agentfs-workers.wasm", "package/wasm/wasm_exec.js", "package/LICENSE", "package/README.md"]) {
    assert.ok(main.files.includes(f), `${f} missing from agentfs-sdk:\n${main.files.join("\n")}`);
  }
  for (const f of main.files) assert.match(f, /^package\/(package\.json|README\.md|LICENSE|dist\/.*\.(js|d\.ts)|wasm\/(agentfs\.wasm|agentfs-workers\.wasm|wasm_exec\.js))$/, `unexpected file ${f}`);
  assert.equal(readFileSync(join(main.dir, "wasm", "agentfs.wasm")).subarray(0, 4).toString("latin1"), "\0asm");

  for (const t of TARGETS) {
    const p = tarball(t);
    assert.ok(p, `no tarball for ${t} in ${TARBALLS.join(" ")}`);
    const { dir, files, manifest } = unpack(p);
    const [os, cpu] = t.split("-");
    const exe = os === "win32" ? "agentfs.exe" : "agentfs";
    assert.equal(manifest.name, `@agentfs-sdk/${t}`);
    assert.equal(manifest.version, VERSION);
    assert.deepEqual(manifest.os, [os]);
    assert.deepEqual(manifest.cpu, [cpu]);
    // The cgo engine links glibc: on musl npm skips the package and the WebAssembly engine runs.
    assert.deepEqual(manifest.libc, t === "linux-x64" ? ["glibc"] : undefined);
    const want = ["package/LICENSE", "package/README.md", `package/${exe}`, "package/package.json"];
    if (t === "linux-x64") want.push("package/agentfs.node");
    assert.deepEqual(files, want.sort(), t);
    assert.equal(binaryFormat(join(dir, exe)), FORMAT[t], `${t}/${exe}`);
    assert.ok(statSync(join(dir, exe)).mode & 0o111, `${t}/${exe} is not executable`);
    if (t === "linux-x64") assert.equal(binaryFormat(join(dir, "agentfs.node")), "ELF x86-64");
  }
});

// The root README's TypeScript install block, run as written (the
// registry comes from npm's user config), and the sdk-ts README's example.
function installBlock() {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const m = readme.match(/<!-- install: ts -->\s*```sh\n([\s\S]*?)```/);
  assert.ok(m, "README.md has no `<!-- install: ts -->` sh block");
  return m[1].trim().split("\n");
}
function readmeExample() {
  const m = readFileSync(join(ROOT, "sdk-ts", "README.md"), "utf8").match(/```js\n([\s\S]*?)```/);
  assert.ok(m, "sdk-ts/README.md has no js example");
  return m[1];
}

function newProject(name, installArgs = []) {
  const app = temp(name);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  for (const line of installBlock()) {
    const [cmd, ...args] = line.split(/\s+/);
    assert.equal(cmd, "npm", line);
    execFileSync(cmd, [...args, ...installArgs], { cwd: app, env: registry.env, stdio: ["ignore", "inherit", "inherit"] });
  }
  writeFileSync(join(app, "example.mjs"), readmeExample());
  return app;
}

function run(app, file) {
  const r = spawnSync(process.execPath, [file], { cwd: app, env: registry.env, encoding: "utf8", timeout: 300000 });
  assert.equal(r.status, 0, `${file}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  return r;
}

// Which engine ran, beyond what the README example prints.
const PROBE = `
import { AgentFS, bundledEngine, bundledAddon } from "agentfs-sdk";
const out = { engine: bundledEngine() ?? null, addon: bundledAddon() ?? null, runs: [] };
for (const transport of [undefined, undefined, "process"]) {
  const a = await AgentFS.open({ id: "probe", transport });
  await a.fs.writeFile("/p.txt", "probe");
  out.runs.push({ text: await a.fs.readFile("/p.txt", "utf8"), inProcess: a.transport.inProcess ?? false, pid: a.transport.pid ?? 0 });
  await a.close();
}
console.log(JSON.stringify(out));
`;

test("registry: every package publishes to Verdaccio", { timeout: 600000 }, async () => {
  registry = await startRegistry();
  for (const p of TARBALLS) execFileSync("npm", ["publish", p], { env: registry.env, stdio: ["ignore", "ignore", "inherit"] });
  const view = JSON.parse(execFileSync("npm", ["view", "agentfs-sdk", "--json"], { env: registry.env, encoding: "utf8" }));
  assert.equal(view.version, VERSION);
  assert.equal(view.optionalDependencies["@agentfs-sdk/linux-x64"], VERSION);
});

test("install: npm install agentfs-sdk runs the README example on this platform's native engine", { timeout: 600000 }, () => {
  assert.ok(registry, "the registry did not start");
  const app = newProject("native");
  const platform = `${process.platform}-${process.arch}`;
  const installed = readdirSync(join(app, "node_modules", "@agentfs-sdk"));
  assert.deepEqual(installed, [platform], "npm installs the engine package of this platform only");
  const r = run(app, "example.mjs");
  assert.equal(r.stdout, "write the report\n");
  assert.equal(r.stderr, "", "no note on stderr with a native engine");
  assert.ok(existsSync(join(app, ".agentfs", "my-agent.db")));

  writeFileSync(join(app, "probe.mjs"), PROBE);
  const p = JSON.parse(run(app, "probe.mjs").stdout);
  const pkg = join(app, "node_modules", "@agentfs-sdk", platform);
  assert.equal(p.engine, join(pkg, "agentfs"));
  assert.equal(p.addon, join(pkg, "agentfs.node"));
  // The default runs the package's addon in this process; "process" starts its binary.
  assert.deepEqual(p.runs.map((x) => [x.text, x.inProcess, x.pid > 0]), [["probe", true, false], ["probe", true, false], ["probe", false, true]]);
});

test("install: with --omit=optional the WebAssembly engine runs the README example, said once on stderr", { timeout: 600000 }, () => {
  assert.ok(registry, "the registry did not start");
  const app = newProject("wasm", ["--omit=optional"]);
  assert.ok(!existsSync(join(app, "node_modules", "@agentfs-sdk")), "no engine package installed");
  const r = run(app, "example.mjs");
  assert.equal(r.stdout, "write the report\n");
  const note = r.stderr.trim().split("\n");
  assert.equal(note.length, 1, r.stderr);
  assert.match(note[0], new RegExp(`^agentfs-sdk: no native engine for ${process.platform}-${process.arch} \\(@agentfs-sdk/${process.platform}-${process.arch} \\(an optional dependency of agentfs-sdk\\) is not installed.*\\); using the WebAssembly engine`));
  // The WebAssembly engine writes the database file back at close.
  assert.ok(existsSync(join(app, ".agentfs", "my-agent.db")));

  // Two opens in one process: still one line; "process" says what to install.
  writeFileSync(join(app, "twice.mjs"), `
    import { AgentFS } from "agentfs-sdk";
    for (let i = 0; i < 2; i++) {
      const a = await AgentFS.open({ id: "twice" });
      await a.fs.writeFile("/n", String(i));
      console.log(await a.fs.readFile("/n", "utf8"), a.transport.inProcess);
      await a.close();
    }
    try { await AgentFS.open({ transport: "process" }); } catch (e) { console.log(e.code, e.message); }
  `);
  const t = run(app, "twice.mjs");
  const lines = t.stdout.trim().split("\n");
  assert.deepEqual(lines.slice(0, 2), ["0 true", "1 true"]);
  assert.match(lines[2], new RegExp(`^ERR_AGENTFS_NOT_FOUND agentfs engine binary not found: @agentfs-sdk/${process.platform}-${process.arch} .*is not installed.*transport: "wasm"`));
  assert.equal(t.stderr.trim().split("\n").length, 1, t.stderr);
});
