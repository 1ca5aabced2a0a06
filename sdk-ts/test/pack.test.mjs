// Packaging as a new user meets it: `npm pack`, install the tarball into an
// empty directory, run a script. The engine must come from the package
// (no AGENTFS_BIN, no agentfs on PATH), every way it runs: the addon in
// the Node process (the default), the binary as a child process, and the
// engine as WebAssembly.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { PKG, tempDir } from "./helpers.mjs";

test("pack: the tarball installs into an empty project and finds its bundled engine", { timeout: 600000 }, async (t) => {
  const out = tempDir(t);
  const name = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: PKG, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim().split("\n").pop();
  const tarball = join(out, name);
  const listing = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort();
  assert.ok(listing.includes("package/bin/linux-x64/agentfs"), listing.join("\n"));
  assert.ok(listing.includes("package/bin/linux-x64/agentfs.node"), listing.join("\n"));
  assert.ok(listing.includes("package/wasm/agentfs.wasm") && listing.includes("package/wasm/wasm_exec.js"), listing.join("\n"));
  assert.ok(listing.includes("package/dist/index.js") && listing.includes("package/dist/index.d.ts"));
  for (const f of listing) {
    assert.match(f, /^package\/(package\.json|README\.md|dist\/.*\.(js|d\.ts)|bin\/linux-x64\/agentfs(\.node)?|wasm\/(agentfs\.wasm|wasm_exec\.js))$/, `unexpected file ${f}`);
  }

  const app = tempDir(t);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--silent", tarball], { cwd: app, stdio: "inherit" });
  writeFileSync(join(app, "main.mjs"), `
    import { AgentFS, bundledEngine, bundledAddon } from "agentfs-sdk";
    const a = await AgentFS.open({ id: "app", transport: process.argv[2] });
    await a.fs.writeFile("/hello.txt", "hello from a new user");
    const s = await a.fs.stat("/hello.txt");
    await a.kv.set("k", { ok: true });
    console.log(JSON.stringify({ text: await a.fs.readFile("/hello.txt", "utf8"), size: s.size, kv: await a.kv.get("k"), engine: bundledEngine(), addon: bundledAddon(), inProcess: a.transport.inProcess, pid: a.transport.pid ?? 0 }));
    await a.close();
  `);
  const env = { ...process.env, PATH: dirname(process.execPath) + ":/usr/bin:/bin" };
  delete env.AGENTFS_BIN;
  delete env.AGENTFS_ADDON;
  delete env.AGENTFS_TRANSPORT;
  delete env.AGENTFS_WASM;
  for (const transport of [undefined, "process", "wasm"]) {
    const args = transport ? ["main.mjs", transport] : ["main.mjs"];
    const res = JSON.parse(execFileSync(process.execPath, args, { cwd: app, env, encoding: "utf8" }));
    assert.deepEqual(res.text, "hello from a new user");
    assert.equal(res.size, 21);
    assert.deepEqual(res.kv, { ok: true });
    assert.equal(res.engine, join(app, "node_modules", "agentfs-sdk", "bin", "linux-x64", "agentfs"));
    assert.equal(res.addon, join(app, "node_modules", "agentfs-sdk", "bin", "linux-x64", "agentfs.node"));
    // By default the bundled addon runs the engine in this process; "process" starts the bundled binary;
    // "wasm" runs the bundled agentfs.wasm in this process and writes .agentfs/app.db at close.
    assert.equal(res.inProcess, transport !== "process");
    assert.equal(res.pid > 0, transport === "process");
    assert.ok(existsSync(join(app, ".agentfs", "app.db")));
  }
});
