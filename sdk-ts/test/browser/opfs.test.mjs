// The SDK in a dedicated worker, where the engine writes the OPFS file in
// place through synchronous access handles (SQLite's pages, with a rollback
// journal beside the file) instead of saving the whole database: data
// survives a reload and a browser restart, a page (which saves whole
// files) opens what a worker wrote, a worker killed in the middle of a
// write loop leaves a database that checks clean with the last completed
// write, and two tabs exclude each other as pages do.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINE, launch, openPage, profileDir, serve } from "./harness.mjs";

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

test("browser worker: the OPFS file is written in place; it survives a reload and a restart, and a page opens it", async (t) => {
  const dir = profileDir(t);
  let c = await launch(dir);
  try {
    let page = await openPage(c, server.origin);
    const first = await page.evaluate(async () => {
      const w = startWorker();
      return w.run(async (sdk) => {
        const a = await sdk.AgentFS.open({ id: "inplace" });
        await a.fs.writeFile("/notes/a.md", "written in place");
        await a.fs.writeFile("/big.bin", new Uint8Array(300000).fill(7));
        await a.kv.set("n", 1);
        // No close: a write is in OPFS once its promise resolved.
        return { files: await a.fs.readdir("/") };
      });
    });
    assert.deepEqual(first.files, ["big.bin", "notes"]);
    // The rollback journal beside the file is the in-place path's mark.
    assert.deepEqual(await page.evaluate(() => opfsList(".agentfs")), ["inplace.db", "inplace.db-journal"]);

    await page.reload();
    await page.waitForFunction(() => globalThis.sdkReady === true);
    const second = await page.evaluate(async () => {
      const w = startWorker();
      return w.run(async (sdk) => {
        const a = await sdk.AgentFS.open({ id: "inplace" });
        const r = {
          text: await a.fs.readFile("/notes/a.md", "utf8"),
          big: (await a.fs.readFile("/big.bin")).length,
          n: await a.kv.get("n"),
          fsck: (await a.rpc.agent.fsck({})).ok,
        };
        await a.kv.set("n", 2);
        await a.fs.unlink("/big.bin");
        r.exported = (await a.exportDatabase()).length > 0;
        await a.close();
        return r;
      });
    });
    assert.deepEqual(second, { text: "written in place", big: 300000, n: 1, fsck: true, exported: true });

    // The page (whole-file saves) opens what the worker wrote in place.
    const fromPage = await page.evaluate(async () => {
      const a = await sdk.AgentFS.open({ id: "inplace" });
      const r = { ls: await a.fs.readdir("/"), n: await a.kv.get("n") };
      await a.kv.set("n", 3);
      await a.close();
      return r;
    });
    assert.deepEqual(fromPage, { ls: ["notes"], n: 2 });
    assert.deepEqual(page.errors, []);
  } finally {
    await c.close();
  }

  // A new browser process on the same profile: the worker reads the page's save.
  c = await launch(dir);
  try {
    const page = await openPage(c, server.origin);
    const r = await page.evaluate(() =>
      startWorker().run(async (sdk) => {
        const a = await sdk.AgentFS.open({ id: "inplace" });
        const r = { text: await a.fs.readFile("/notes/a.md", "utf8"), n: await a.kv.get("n"), fsck: (await a.rpc.agent.fsck({})).ok };
        await a.close();
        const missing = await sdk.AgentFS.open({ id: "never-made", noCreate: true }).then(
          () => "opened",
          (e) => e.code,
        );
        // The failed open left no empty files behind.
        const names = [];
        for await (const [n] of (await (await navigator.storage.getDirectory()).getDirectoryHandle(".agentfs")).entries()) names.push(n);
        return { ...r, missing, left: names.filter((n) => n.startsWith("never-made")) };
      }),
    );
    assert.deepEqual(r, { text: "written in place", n: 3, fsck: true, missing: "ERR_AGENTFS_NOT_FOUND", left: [] });
  } finally {
    await c.close();
  }
});

// A worker writes /counter (256 KiB naming the iteration) in a loop; after
// each resolved write it tells the page and waits for its ack. After the
// third the page acks and kills the worker a few milliseconds later
// (terminate, as closing a tab does; then the page is closed): the kill
// lands in write 4. The next open (in a worker: SQLite plays a hot journal
// back; in a page: the SDK does, before its whole-file save) must check
// clean and hold write 3, or write 4 if its commit had finished.
for (const reopen of ["worker", "page"]) {
  test(`browser worker: a worker killed during a write loop leaves a clean database (reopened in a ${reopen})`, async (t) => {
    const id = `crash-${reopen}`;
    const page = await openPage(ctx, server.origin);
    const lastSeen = 3;
    await page.evaluate(
      ([id, last]) => {
        const w = startWorker();
        globalThis.killed = new Promise((killed) => {
          w.run(
            async (sdk, id, state, note) => {
              const a = await sdk.AgentFS.open({ id });
              for (let i = 1; ; i++) {
                const line = `write ${i}\n`;
                await a.fs.writeFile("/counter", line.repeat(Math.ceil(262144 / line.length)));
                note(i);
                await state.ack();
              }
            },
            id,
            (i) => {
              // One write more than the last acknowledged may start (the
              // kill lands in it or after it), never two: the worker
              // waits for an ack after each write.
              if (i <= last) w.ack();
              if (i === last) setTimeout(() => (w.terminate(), killed(i)), Math.random() * 20);
            },
          );
        });
      },
      [id, lastSeen],
    );
    assert.equal(await page.evaluate(() => killed), lastSeen);
    await page.close();

    const next = await openPage(ctx, server.origin);
    const journal = await next.evaluate(async (id) => {
      const d = await (await navigator.storage.getDirectory()).getDirectoryHandle(".agentfs");
      return (await (await d.getFileHandle(`${id}.db-journal`)).getFile()).size;
    }, id);
    t.diagnostic(`reopen in a ${reopen}: killed after write ${lastSeen}; journal ${journal} bytes at reopen (0: the kill fell between commits)`);
    const check = async (sdk, id) => {
      const a = await sdk.AgentFS.open({ id, lock: "wait" });
      const fsck = await a.rpc.agent.fsck({});
      const text = new TextDecoder().decode(await a.fs.readFile("/counter"));
      await a.close();
      return { ok: fsck.ok, problems: fsck.problems.length, text };
    };
    const r = reopen === "worker" ? await next.evaluate(([fn, id]) => startWorker().run(fn, id), [String(check), id]) : await next.evaluate(([fn, id]) => (0, eval)(`(${fn})`)(sdk, id), [String(check), id]);
    assert.equal(r.ok, true, `fsck found ${r.problems} problems`);
    const n = Number(/^write (\d+)\n/.exec(r.text)?.[1]);
    assert.ok(n === lastSeen || n === lastSeen + 1, `after ${lastSeen} completed writes the file says write ${n}`);
    const line = `write ${n}\n`;
    assert.equal(r.text, line.repeat(Math.ceil(262144 / line.length)), "the file is one write's content, whole");
    // The journal is gone once the page path saved the rolled-back file.
    if (reopen === "page") assert.deepEqual((await next.evaluate(() => opfsList(".agentfs"))).filter((f) => f.startsWith(id)), [`${id}.db`]);
    await next.close();
  });
}

test("browser worker: two tabs' workers on one agent: EBUSY, or wait; pages and workers exclude each other", async () => {
  const one = await openPage(ctx, server.origin);
  const two = await openPage(ctx, server.origin);
  await one.evaluate(async () => {
    globalThis.w = startWorker();
    await w.run(async (sdk, _, state) => {
      state.a = await sdk.AgentFS.open({ id: "tabs-w" });
      await state.a.fs.writeFile("/owner", "worker of tab one");
    });
  });
  const busy = await two.evaluate(async () => {
    globalThis.w = startWorker();
    const inWorker = await w.run((sdk) => sdk.AgentFS.open({ id: "tabs-w" }).then(() => "opened", (e) => e.code));
    const inPage = (await failure(() => sdk.AgentFS.open({ id: "tabs-w" }))).code;
    return { inWorker, inPage };
  });
  assert.deepEqual(busy, { inWorker: "EBUSY", inPage: "EBUSY" });

  await two.evaluate(() => {
    globalThis.waiting = w.run(async (sdk) => {
      const a = await sdk.AgentFS.open({ id: "tabs-w", lock: "wait" });
      const owner = await a.fs.readFile("/owner", "utf8");
      await a.fs.writeFile("/owner", "worker of tab two");
      await a.close();
      return owner;
    });
  });
  await one.evaluate(() =>
    w.run(async (sdk, _, state) => {
      await state.a.fs.writeFile("/last-of-one", "x");
      await state.a.close();
    }),
  );
  assert.equal(await two.evaluate(() => waiting), "worker of tab one");

  // Read-only opens share the agent (a reader reads a copy of the file).
  const readers = await one.evaluate(() =>
    w.run(async (sdk) => {
      const r1 = await sdk.AgentFS.open({ id: "tabs-w", readOnly: true });
      const r2 = await sdk.AgentFS.open({ id: "tabs-w", readOnly: true });
      const out = [await r1.fs.readFile("/owner", "utf8"), await r2.fs.readFile("/last-of-one", "utf8")];
      const w = await r1.fs.writeFile("/x", "y").then(() => "written", (e) => e.code);
      await r1.close();
      await r2.close();
      return { out, w };
    }),
  );
  assert.deepEqual(readers, { out: ["worker of tab two", "x"], w: "EROFS" });
  await one.close();
  await two.close();
});

// Encryption at rest in the browser: a worker writes an encrypted agent in
// place; the OPFS file holds no plaintext (the rollback journal is empty
// between commits; core/store's TestCryptJS_PageFilesCrashRollsBack checks
// it mid-commit); a page opens it with the key (whole-file load) and
// refuses it without; the exported bytes open in the CLI with the key.
test("browser worker: an encrypted agent in OPFS, opened by a page and by the CLI with the key", async (t) => {
  const key = "7e".repeat(32);
  const page = await openPage(ctx, server.origin);
  const r = await page.evaluate(async (key) => {
    const w = startWorker();
    await w.run(async (sdk, key) => {
      const a = await sdk.AgentFS.open({ id: "secret", encryptionKey: key, cipher: "aes256gcm" });
      await a.fs.writeFile("/secret.txt", "MARKER-OPFS-SECRET");
      await a.fs.writeFile("/big.bin", new TextEncoder().encode("MARKER-OPFS-BIG ".repeat(20000)));
      await a.fs.writeFile("/big.bin", new TextEncoder().encode("MARKER-OPFS-NEW ".repeat(20000)));
      await a.close();
    }, key);
    w.terminate();
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(".agentfs");
    const bytes = async (n) => new Uint8Array(await (await (await dir.getFileHandle(n)).getFile()).arrayBuffer());
    const db = await bytes("secret.db");
    const journal = await bytes("secret.db-journal");
    const text = (b) => new TextDecoder("latin1").decode(b);
    const none = await failure(() => sdk.AgentFS.open({ id: "secret" }));
    const a = await sdk.AgentFS.open({ id: "secret", encryptionKey: key });
    const back = await a.fs.readFile("/secret.txt", "utf8");
    const exported = await a.exportDatabase();
    await a.close();
    return {
      head: text(db.subarray(0, 5)),
      plain: ["MARKER-OPFS", "SQLite format 3"].filter((m) => text(db).includes(m) || text(journal).includes(m)),
      none: none.message,
      back,
      exported: b64(exported),
    };
  }, key);
  assert.equal(r.head, "Turso");
  assert.deepEqual(r.plain, []);
  assert.match(r.none, /the database is encrypted/);
  assert.equal(r.back, "MARKER-OPFS-SECRET");
  const dir = mkdtempSync(join(tmpdir(), "agentfs-opfs-crypt-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "secret.db");
  writeFileSync(db, Buffer.from(r.exported, "base64"));
  const env = { ...process.env, AGENTFS_KEY: key };
  assert.equal(execFileSync(ENGINE, ["fs", db, "cat", "/secret.txt"], { encoding: "utf8", env }), "MARKER-OPFS-SECRET");
  execFileSync(ENGINE, ["fsck", db], { env });
  assert.deepEqual(page.errors, []);
  await page.close();
});
