// The stdio protocol over both links: the engine as a child process
// ("stdio", transport "process") and loaded into this process
// ("inprocess"): the API suite, concurrency, a stopped engine, process
// lifetime, opening by id/path/temporary, bindings, cancellation; and
// finding the engine.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ADDON, ENGINE, PKG, WASM, failure, tempDir } from "./helpers.mjs";
import { apiSuite } from "./api-suite.mjs";

const MODES = [
  { name: "stdio", opts: { transport: "process" }, killed: /engine was killed by SIGKILL/ },
  { name: "inprocess", opts: { transport: "inprocess" }, killed: /engine was stopped/ },
];

for (const m of MODES) {
  apiSuite(m.name, async (t) => AgentFS.open({ ...m.opts, path: join(tempDir(t), "a.db") }));

  test(`${m.name}: open by id, by path, temporary`, async (t) => {
    const dir = tempDir(t);
    const a = await AgentFS.open({ ...m.opts, id: "agent-1", cwd: dir });
    await a.fs.writeFile("/x", "1");
    await a.close();
    assert.ok(existsSync(join(dir, ".agentfs", "agent-1.db")));
    const b = await AgentFS.open({ ...m.opts, id: "agent-1", cwd: dir });
    assert.equal(await b.fs.readFile("/x", "utf8"), "1");
    await b.close();

    const tmp = await AgentFS.open(m.opts);
    const p = tmp.info.path;
    await tmp.fs.writeFile("/t", "t");
    assert.ok(existsSync(p));
    await tmp.close();
    assert.ok(!existsSync(p), "temporary database removed on close");

    const e = await failure(() => AgentFS.open({ ...m.opts, path: join(dir, "missing.db"), noCreate: true }));
    assert.match(e.message, /missing\.db/);
    assert.equal(e.code, "ERR_AGENTFS_NOT_FOUND");
    const bad = await failure(() => AgentFS.open({ ...m.opts, id: "../evil" }));
    assert.equal(bad.code, "ERR_AGENTFS_INVALID_ARGUMENT");
  });

  test(`${m.name}: many calls in flight`, async (t) => {
    const a = await AgentFS.open({ ...m.opts, path: join(tempDir(t), "c.db") });
    const n = 2000;
    await Promise.all(Array.from({ length: n }, (_, i) => a.fs.writeFile(`/d${i % 10}/f${i}`, `v${i}`)));
    const got = await Promise.all(Array.from({ length: n }, (_, i) => a.fs.readFile(`/d${i % 10}/f${i}`, "utf8")));
    got.forEach((v, i) => assert.equal(v, `v${i}`));
    const errs = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => (i % 2 ? a.fs.stat(`/d0/f${i * 10}`) : a.fs.stat(`/none${i}`))));
    errs.forEach((r, i) => {
      if (i % 2) assert.equal(r.status, "fulfilled");
      else assert.equal(r.reason.code, "ENOENT");
    });
    await a.close();
    await assert.rejects(() => a.fs.stat("/"), { code: "ERR_AGENTFS_UNAVAILABLE", message: /closed/ });
  });

  test(`${m.name}: an engine killed mid-call rejects every pending call`, async (t) => {
    const a = await AgentFS.open({ ...m.opts, path: join(tempDir(t), "k.db") });
    const transport = a.transport;
    const big = Buffer.alloc(32 << 20, 7);
    const calls = [a.fs.writeFile("/big", big), ...Array.from({ length: 100 }, (_, i) => a.kv.set(`k${i}`, i))];
    transport.kill("SIGKILL");
    const results = await Promise.allSettled(calls);
    assert.equal(results.filter((r) => r.status === "rejected").length >= 1, true);
    for (const r of results) {
      if (r.status === "rejected") {
        assert.equal(r.reason.code, "ERR_AGENTFS_UNAVAILABLE");
        assert.match(r.reason.message, m.killed);
      }
    }
    await assert.rejects(() => a.fs.stat("/"), { code: "ERR_AGENTFS_UNAVAILABLE" });
    await a.close(); // closing a dead agent does not hang or throw
  });

  test(`${m.name}: an idle agent does not keep node alive; close() lets it exit`, () => {
    const script = (close) => `
      import { AgentFS } from ${JSON.stringify(join(PKG, "dist", "index.js"))};
      const a = await AgentFS.open();
      await a.fs.writeFile('/x', 'y');
      console.log(await a.fs.readFile('/x', 'utf8'));
      ${close ? "await a.close(); console.log('closed');" : ""}`;
    for (const close of [false, true]) {
      const env = { ...process.env, AGENTFS_TRANSPORT: m.opts.transport };
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script(close)], { encoding: "utf8", timeout: 20000, env });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, close ? "y\nclosed\n" : "y\n");
    }
  });

  test(`${m.name}: exec runs a script whose bindings call back into this process`, async (t) => {
    const a = await AgentFS.open({ ...m.opts, path: join(tempDir(t), "x.db") });
    t.after(() => a.close());
    const seen = [];
    const r = await a.exec("lookup --id 7 > /out.json; cat /out.json; fails || echo failed:$?; echo done", {
      bindings: {
        lookup: {
          description: "find a user",
          schema: { type: "object", properties: { id: { type: "integer" } } },
          fn: async (args) => {
            seen.push(args);
            return { id: args.id, name: "ada" };
          },
        },
        fails: () => {
          throw new Error("no such user");
        },
      },
    });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual(seen, [{ id: 7 }]);
    assert.deepEqual(JSON.parse(r.stdout.split("\n")[0]), { id: 7, name: "ada" });
    assert.match(r.stdout, /failed:1\ndone\n$/);
    assert.match(r.stderr, /fails: no such user/);
    // What the script wrote is in the agent's filesystem.
    assert.deepEqual(JSON.parse(await a.fs.readFile("/out.json", "utf8")), { id: 7, name: "ada" });
    // A binding may call the agent while the script runs.
    const nested = await a.exec("peek", { bindings: { peek: async () => (await a.fs.readFile("/out.json", "utf8")).trim() + "!" } });
    assert.equal(JSON.parse(nested.stdout), '{"id":7,"name":"ada"}!');
    // Without bindings, exec is a plain script; an unknown command exits 127.
    const plain = await a.exec("lookup --id 1; echo $?");
    assert.equal(plain.stdout, "127\n");
  });

  test(`${m.name}: an AbortSignal cancels a call in the engine`, async (t) => {
    const a = await AgentFS.open({ ...m.opts, path: join(tempDir(t), "abort.db") });
    t.after(() => a.close());
    const ac = new AbortController();
    const started = Date.now();
    setTimeout(() => ac.abort(), 200);
    const e = await failure(() => a.exec("sleep 1; echo late > /late", { signal: ac.signal }));
    assert.equal(e.name, "AbortError");
    assert.equal(e.code, "ABORT_ERR");
    assert.ok(Date.now() - started < 900, "the abort did not end the wait");
    // The engine stopped the script: a second later it still has not
    // written /late, and the connection keeps working.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await a.fs.exists("/late"), false);
    const pre = new AbortController();
    pre.abort();
    assert.equal((await failure(() => a.fs.readFile("/x", { signal: pre.signal }))).name, "AbortError");
    await a.fs.writeFile("/ok", "1", { signal: new AbortController().signal });
    assert.equal(await a.fs.readFile("/ok", { encoding: "utf8", signal: new AbortController().signal }), "1");
  });
}

test("stdio: finding the engine", async (t) => {
  const saved = process.env.AGENTFS_BIN;
  process.env.AGENTFS_BIN = "/nonexistent/agentfs";
  try {
    await assert.rejects(() => AgentFS.open({ transport: "process" }), { code: "ERR_AGENTFS_NOT_FOUND", message: /AGENTFS_BIN=\/nonexistent\/agentfs/ });
  } finally {
    process.env.AGENTFS_BIN = saved;
  }
  // the explicit option wins over AGENTFS_BIN
  process.env.AGENTFS_BIN = "/nonexistent/agentfs";
  try {
    const a = await AgentFS.open({ engine: ENGINE });
    await a.close();
  } finally {
    process.env.AGENTFS_BIN = saved;
  }
  // in process: a missing addon is named, with what to do
  process.env.AGENTFS_ADDON = "/nonexistent/agentfs.node";
  try {
    await assert.rejects(() => AgentFS.open({ transport: "inprocess" }), { code: "ERR_AGENTFS_NOT_FOUND", message: /\/nonexistent\/agentfs\.node.*transport: "process"/ });
  } finally {
    process.env.AGENTFS_ADDON = ADDON;
  }
  // No engine package for this platform, no AGENTFS_BIN, nothing on PATH
  // (a copy of the package without its optional dependencies): "process"
  // says what to install; the default runs the WebAssembly engine, saying
  // so once on stderr however many agents open.
  const copy = tempDir(t);
  cpSync(join(PKG, "dist"), join(copy, "dist"), { recursive: true });
  cpSync(join(PKG, "package.json"), join(copy, "package.json"));
  symlinkSync(join(PKG, "node_modules"), join(copy, "node_modules"));
  const r = spawnSync(process.execPath, ["--input-type=module", "-e",
    `import { AgentFS } from ${JSON.stringify(join(copy, "dist", "index.js"))};
     try { await AgentFS.open({ transport: "process" }); } catch (e) { console.log(e.code + ' ' + e.message); }
     for (let i = 0; i < 2; i++) {
       const a = await AgentFS.open();
       await a.fs.writeFile("/f", "wasm " + i);
       console.log(await a.fs.readFile("/f", "utf8"));
       await a.close();
     }`],
  { encoding: "utf8", env: { PATH: "/nonexistent", AGENTFS_WASM: WASM }, timeout: 120000 });
  const platform = `${process.platform}-${process.arch}`;
  const out = r.stdout.trim().split("\n");
  assert.match(out[0], /ERR_AGENTFS_NOT_FOUND agentfs engine binary not found: .*go install github\.com\/agentfs-go\/agentfs\/cli\/cmd\/agentfs@latest.*transport: "wasm"/);
  assert.match(out[0], new RegExp(`@agentfs-sdk/${platform} \\(an optional dependency of agentfs-sdk\\) is not installed`));
  assert.deepEqual(out.slice(1), ["wasm 0", "wasm 1"], r.stderr);
  const note = r.stderr.trim().split("\n");
  assert.equal(note.length, 1, r.stderr);
  assert.match(note[0], new RegExp(`^agentfs-sdk: no native engine for ${platform} .*using the WebAssembly engine`));
  // An addon asked for by name is missing: the error says where the addon ships.
  const r2 = spawnSync(process.execPath, ["--input-type=module", "-e",
    `import { AgentFS } from ${JSON.stringify(join(copy, "dist", "index.js"))};
     try { await AgentFS.open({ transport: "inprocess" }); } catch (e) { console.log(e.code + ' ' + e.message); }`],
  { encoding: "utf8", env: { PATH: "/nonexistent" }, timeout: 20000 });
  assert.match(r2.stdout, /ERR_AGENTFS_NOT_FOUND agentfs engine addon not found: .*@agentfs-sdk\/linux-x64 only/);
});
