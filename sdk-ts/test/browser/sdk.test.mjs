// agentfs-sdk's "browser" build in a real browser (Debian's chromium,
// headless, driven by playwright-core): the API, persistence in the
// Origin Private File System across a reload, a worker and a browser
// restart, two tabs on one agent, and a database made in the browser
// read by the CLI.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { ENGINE, SDK, launch, openPage, profileDir, serve } from "./harness.mjs";

let server, ctx, profile;
before(async () => {
  server = await serve();
  profile = mkdtempSync(join(tmpdir(), "agentfs-chromium-"));
  ctx = await launch(profile);
});
after(async () => {
  await ctx?.close();
  await server?.stop();
  rmSync(profile, { recursive: true, force: true });
});

test("browser: files, directories, handles, kv, tool calls, exec and errno codes", async () => {
  const page = await openPage(ctx, server.origin);
  const r = await page.evaluate(async () => {
    const a = await sdk.AgentFS.open({ id: "api" });
    const fs = a.fs;
    const out = {};
    await fs.writeFile("/a/b/c.txt", "héllo");
    out.text = await fs.readFile("/a/b/c.txt", "utf8");
    const buf = await fs.readFile("/a/b/c.txt");
    out.isUint8 = buf instanceof Uint8Array;
    out.bufText = buf.toString("utf8");
    await fs.writeFile("/hex.bin", "00ff10", "hex");
    out.hex = Array.from(await fs.readFile("/hex.bin"));
    const big = new Uint8Array(200000).map((_, i) => (i * 7) & 255);
    await fs.writeFile("/big.bin", big);
    const back = await fs.readFile("/big.bin");
    out.bigSame = back.length === big.length && back.every((v, i) => v === big[i]);
    await fs.appendFile("/a/b/c.txt", "!");
    const s = await fs.stat("/a/b/c.txt");
    out.stat = { size: s.size, file: s.isFile(), dir: s.isDirectory(), mode: s.mode & 0o777 };
    await fs.mkdir("/dir");
    out.mkdirAgain = await failure(() => fs.mkdir("/dir"));
    out.missing = await failure(() => fs.readFile("/nope"));
    out.rmdirFile = await failure(() => fs.rmdir("/a/b/c.txt"));
    await fs.rename("/a/b/c.txt", "/dir/c.txt");
    await fs.symlink("/dir/c.txt", "/link");
    out.readlink = await fs.readlink("/link");
    out.readdir = await fs.readdir("/");
    out.entries = (await fs.readdirPlus("/dir")).map((e) => [e.name, e.stats.isFile()]);
    const fh = await fs.open("/dir/c.txt", "r+");
    out.pread = (await fh.pread(1, 4)).toString();
    await fh.pwrite(0, "H");
    await fh.close();
    out.closedHandle = await failure(() => fh.pread(0, 1));
    out.afterPwrite = await fs.readFile("/dir/c.txt", "utf8");
    await fs.unlink("/link");
    await a.kv.set("user:1", { name: "ada" });
    await a.kv.set("user:2", "two");
    out.kvGet = await a.kv.get("user:1");
    out.kvList = (await a.kv.list("user:")).map((e) => e.key);
    await a.kv.delete("user:2");
    out.kvAfterDelete = await a.kv.get("user:2");
    const id = await a.tools.start("search", { q: "x" });
    await a.tools.success(id, { hits: 3 });
    const id2 = await a.tools.start("fetch");
    await a.tools.error(id2, "timeout");
    out.call = await a.tools.get(id);
    out.stats = (await a.tools.getStats()).map((s) => [s.name, s.total_calls, s.successful, s.failed]);
    out.unknownTool = await failure(() => a.tools.success(999999, {}));
    const ex = await a.exec("mkdir -p /sh && echo from-shell > /sh/out.txt && ls /dir && cat /sh/out.txt | tr a-z A-Z");
    out.exec = { code: ex.exitCode, stdout: ex.stdout };
    out.shellFile = await fs.readFile("/sh/out.txt", "utf8");
    const bad = await a.exec("cat /no/such/file");
    out.execFail = { code: bad.exitCode, stderr: bad.stderr };
    out.bound = (await a.exec("greet --who web > /greeting.json; cat /greeting.json", {
      bindings: { greet: { schema: { type: "object", properties: { who: { type: "string" } } }, fn: async (args) => `hello ${args.who} ${(await a.fs.readFile("/sh/out.txt", "utf8")).trim()}` } },
    })).stdout;
    await a.close();
    out.afterClose = await failure(() => a.fs.readFile("/dir/c.txt"));
    // A failed open (no engine at that URL) says where it looked, and
    // leaves the agent's lock free.
    out.noEngine = await failure(() => sdk.AgentFS.open({ id: "api", wasm: "/no/such/agentfs.wasm" }));
    const again = await sdk.AgentFS.open({ id: "api" });
    out.reopened = await again.fs.readFile("/dir/c.txt", "utf8");
    await again.close();
    out.badId = await failure(() => sdk.AgentFS.open({ id: "../up" }));
    return out;
  });
  assert.deepEqual(page.errors, []);
  assert.equal(r.text, "héllo");
  assert.ok(r.isUint8);
  assert.equal(r.bufText, "héllo");
  assert.deepEqual(r.hex, [0, 255, 16]);
  assert.ok(r.bigSame);
  assert.deepEqual(r.stat, { size: 7, file: true, dir: false, mode: 0o644 });
  for (const [e, code, errno, syscall] of [
    [r.mkdirAgain, "EEXIST", 17, "mkdir"],
    [r.missing, "ENOENT", 2, "open"],
    [r.rmdirFile, "ENOTDIR", 20, "rmdir"],
  ]) {
    assert.ok(e.isError);
    assert.equal(e.code, code, e.message);
    assert.equal(e.errno, -errno);
    assert.equal(e.syscall, syscall);
    assert.match(e.message, new RegExp(`^${code}: `));
  }
  assert.equal(r.missing.path, "/nope");
  assert.equal(r.readlink, "/dir/c.txt");
  assert.deepEqual(r.readdir, ["a", "big.bin", "dir", "hex.bin", "link"]);
  assert.deepEqual(r.entries, [["c.txt", true]]);
  assert.equal(r.pread, "éll");
  assert.equal(r.closedHandle.code, "EBADF");
  assert.equal(r.afterPwrite, "Héllo!");
  assert.deepEqual(r.kvGet, { name: "ada" });
  assert.deepEqual(r.kvList, ["user:1", "user:2"]);
  assert.equal(r.kvAfterDelete, undefined);
  assert.equal(r.call.status, "success");
  assert.deepEqual(r.call.result, { hits: 3 });
  assert.deepEqual(r.stats, [["fetch", 1, 0, 1], ["search", 1, 1, 0]]);
  assert.match(r.unknownTool.code, /^ERR_AGENTFS_|^ENOENT$/);
  assert.deepEqual(r.exec, { code: 0, stdout: "c.txt\nFROM-SHELL\n" });
  assert.equal(r.shellFile, "from-shell\n");
  assert.notEqual(r.execFail.code, 0);
  assert.match(r.execFail.stderr, /No such file or directory/i);
  // A binding (a function of the page) ran as a command, and called the agent.
  assert.equal(JSON.parse(r.bound), "hello web from-shell");
  assert.equal(r.afterClose.code, "ERR_AGENTFS_UNAVAILABLE");
  assert.equal(r.noEngine.code, "ERR_AGENTFS_NOT_FOUND");
  assert.match(r.noEngine.message, /\/no\/such\/agentfs\.wasm: HTTP 404/);
  assert.equal(r.reopened, "Héllo!");
  assert.equal(r.badId.code, "ERR_AGENTFS_INVALID_ARGUMENT");
  await page.close();
});

test("browser: an agent survives a reload, is shared with a worker, and survives a browser restart", async (t) => {
  const dir = profileDir(t);
  let c = await launch(dir);
  try {
    let page = await openPage(c, server.origin);
    await page.evaluate(async () => {
      const a = await sdk.AgentFS.open({ id: "keep" });
      await a.fs.writeFile("/notes/today.md", "# kept");
      await a.kv.set("count", 1);
      // No close: a write is in OPFS once its promise resolved.
    });
    await page.reload();
    await page.waitForFunction(() => globalThis.sdkReady === true);
    // The reload ended the old page, which released its lock.
    const afterReload = await page.evaluate(async () => {
      const a = await sdk.AgentFS.open({ id: "keep" });
      const r = { text: await a.fs.readFile("/notes/today.md", "utf8"), count: await a.kv.get("count") };
      await a.kv.set("count", 2);
      await a.close();
      return r;
    });
    assert.deepEqual(afterReload, { text: "# kept", count: 1 });

    // A dedicated worker of the same origin opens the same agent.
    const fromWorker = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const w = new Worker("/test/worker.js", { type: "module" });
          w.onmessage = (ev) => resolve(ev.data);
          w.onerror = (ev) => resolve({ ok: false, message: ev.message });
          w.postMessage({ id: "keep", text: "hello from a worker" });
        }),
    );
    assert.deepEqual(fromWorker, { ok: true, ls: ["from-worker.txt", "notes"] });
    assert.deepEqual(page.errors, []);
  } finally {
    await c.close();
  }

  // A new browser process on the same profile.
  c = await launch(dir);
  try {
    const page = await openPage(c, server.origin);
    const r = await page.evaluate(async () => {
      const a = await sdk.AgentFS.open({ id: "keep" });
      const r = {
        notes: await a.fs.readFile("/notes/today.md", "utf8"),
        worker: await a.fs.readFile("/from-worker.txt", "utf8"),
        count: await a.kv.get("count"),
        where: await a.kv.get("where"),
      };
      await a.close();
      const missing = await failure(() => sdk.AgentFS.open({ id: "never-made", noCreate: true }));
      return { ...r, missing };
    });
    assert.deepEqual({ ...r, missing: r.missing.code }, { notes: "# kept", worker: "hello from a worker", count: 2, where: "worker", missing: "ERR_AGENTFS_NOT_FOUND" });
  } finally {
    await c.close();
  }
});

test("browser: two tabs on one agent: the second gets EBUSY, or waits with lock: 'wait'; readers share", async () => {
  const one = await openPage(ctx, server.origin);
  const two = await openPage(ctx, server.origin);
  await one.evaluate(async () => {
    globalThis.agent = await sdk.AgentFS.open({ id: "tabs" });
    await agent.fs.writeFile("/owner", "tab one");
  });
  const busy = await two.evaluate(() => failure(() => sdk.AgentFS.open({ id: "tabs" })));
  assert.equal(busy.code, "EBUSY");
  assert.equal(busy.errno, -16);
  assert.match(busy.message, /open in another tab/);
  // Also a read-only open: a reader never sees a writer's half-saved state.
  assert.equal((await two.evaluate(() => failure(() => sdk.AgentFS.open({ id: "tabs", readOnly: true })))).code, "EBUSY");

  // Tab two waits; it gets the agent once tab one closes it, with tab one's writes.
  await two.evaluate(() => {
    globalThis.waiting = sdk.AgentFS.open({ id: "tabs", lock: "wait" }).then(async (a) => {
      const owner = await a.fs.readFile("/owner", "utf8");
      await a.fs.writeFile("/owner", "tab two");
      await a.close();
      return owner;
    });
  });
  await one.evaluate(async () => {
    await agent.fs.writeFile("/last-of-one", "x");
    await agent.close();
  });
  assert.equal(await two.evaluate(() => waiting), "tab one");

  // Readers share the agent.
  const readers = await one.evaluate(async () => {
    const r1 = await sdk.AgentFS.open({ id: "tabs", readOnly: true });
    const r2 = await sdk.AgentFS.open({ id: "tabs", readOnly: true });
    const out = [await r1.fs.readFile("/owner", "utf8"), await r2.fs.readFile("/last-of-one", "utf8")];
    const w = await failure(() => r1.fs.writeFile("/x", "y"));
    await r1.close();
    await r2.close();
    return { out, w: w.code };
  });
  assert.deepEqual(readers.out, ["tab two", "x"]);
  assert.equal(readers.w, "EROFS");
  await one.close();
  await two.close();
});

test("browser: a database made in the browser is read by the CLI, byte for byte", async (t) => {
  const page = await openPage(ctx, server.origin);
  const r = await page.evaluate(async () => {
    const a = await sdk.AgentFS.open({ id: "export" });
    const data = new Uint8Array(300000);
    crypto.getRandomValues(data.subarray(0, 65536));
    for (let i = 65536; i < data.length; i++) data[i] = (i * 31) & 255;
    await a.fs.writeFile("/data/blob.bin", data);
    await a.fs.writeFile("/hello.txt", "héllo from chromium\n");
    await a.kv.set("made-in", "chromium");
    await a.tools.record("search", 1000, 1002, { q: "x" }, { hits: 3 });
    const exported = await a.exportDatabase();
    await a.close();
    // What OPFS holds after close is the same database.
    const root = await navigator.storage.getDirectory();
    const f = await (await (await root.getDirectoryHandle(".agentfs")).getFileHandle("export.db")).getFile();
    const stored = new Uint8Array(await f.arrayBuffer());
    // A temporary agent from those bytes reads the same.
    const copy = await sdk.AgentFS.open({ data: exported });
    const again = await copy.fs.readFile("/hello.txt", "utf8");
    await copy.close();
    return { data: b64(data), exported: b64(exported), stored: b64(stored), again };
  });
  const dir = mkdtempSync(join(tmpdir(), "agentfs-export-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "browser.db");
  const exported = Buffer.from(r.exported, "base64");
  writeFileSync(db, exported);
  assert.equal(exported.subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  assert.equal(r.again, "héllo from chromium\n");
  const cli = (...args) => execFileSync(ENGINE, args, { maxBuffer: 1 << 24 });
  assert.ok(cli("fs", db, "cat", "/data/blob.bin").equals(Buffer.from(r.data, "base64")));
  assert.equal(cli("fs", db, "cat", "/hello.txt").toString(), "héllo from chromium\n");
  assert.match(cli("kv", db, "get", "made-in").toString(), /"chromium"/);
  assert.match(cli("timeline", db).toString(), /search/);
  cli("fsck", db); // exits non-zero on any inconsistency
  // OPFS held the same content (the file written at close may differ from
  // the export in SQLite's header counters only if something wrote between).
  const stored = join(dir, "stored.db");
  writeFileSync(stored, Buffer.from(r.stored, "base64"));
  assert.ok(cli("fs", stored, "cat", "/data/blob.bin").equals(Buffer.from(r.data, "base64")));
  await page.close();
});

test("browser: an app bundled by esbuild from `agentfs-sdk` (platform browser) has no node: import and runs", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-app-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The package as an app installs it: node_modules/agentfs-sdk.
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(SDK, join(dir, "node_modules", "agentfs-sdk"));
  writeFileSync(
    join(dir, "app.js"),
    `import { AgentFS } from "agentfs-sdk";
     const a = await AgentFS.open({ id: "bundled", wasm: "/wasm/agentfs.wasm" });
     await a.fs.writeFile("/app.txt", "bundled app");
     globalThis.appResult = await a.fs.readFile("/app.txt", "utf8");
     await a.close();`,
  );
  const res = await build({ absWorkingDir: dir, entryPoints: ["app.js"], bundle: true, platform: "browser", format: "esm", write: false, logLevel: "silent" });
  const code = res.outputFiles[0].text;
  assert.doesNotMatch(code, /from\s*["']node:|require\(["']node:|import\(["']node:/);
  const page = await openPage(ctx, server.origin);
  await page.addScriptTag({ type: "module", content: code });
  await page.waitForFunction(() => globalThis.appResult !== undefined);
  assert.equal(await page.evaluate(() => globalThis.appResult), "bundled app");
  assert.deepEqual(page.errors, []);
  await page.close();
});
