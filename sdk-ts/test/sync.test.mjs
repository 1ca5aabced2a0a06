// Sync and encryption through the SDK: a real `agentfs serve sync` started
// here (bearer token), two agents opened with syncRemoteUrl on both
// transports, pull/push/sync/stats; encrypted agents round trip and
// refuse a wrong key (the wasm transport's encryption: wasm.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ENGINE, failure, tempDir } from "./helpers.mjs";

const TOKEN = "sdk-ts-sync-token";
const KEY = "ab".repeat(32);

/** Starts `agentfs serve sync` on a free port; resolves with its base URL. */
async function serveSync(t, data) {
  const p = spawn(ENGINE, ["serve", "sync", "--listen", "127.0.0.1:0", "--data", data], {
    env: { ...process.env, AGENTFS_TOKEN: TOKEN },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => {
    p.kill("SIGTERM");
    return new Promise((r) => (p.exitCode !== null ? r() : p.on("exit", r)));
  });
  let log = "";
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      log += d;
      const m = /at (http:\/\/[0-9.:]+)\/ID/.exec(log);
      if (m) resolve(m[1]);
    };
    p.stderr.setEncoding("utf8").on("data", onData);
    p.stdout.setEncoding("utf8").on("data", onData);
    p.on("exit", (code) => reject(new Error(`serve sync exited ${code}: ${log}`)));
  });
}

for (const transport of ["process", "inprocess"]) {
  test(`sync through the SDK (${transport})`, async (t) => {
    const dir = tempDir(t);
    const base = await serveSync(t, join(dir, "remote"));
    const url = `${base}/shared`;
    const a = await AgentFS.open({ transport, path: join(dir, "a.db"), syncRemoteUrl: url, syncToken: TOKEN });
    t.after(() => a.close());
    await a.fs.writeFile("/notes.md", "from a");
    await a.kv.set("k", { v: 1 });
    let st = await a.stats();
    assert.ok(st.cdcOperations > 0, "changes to push");
    assert.equal(st.remoteUrl, url);
    const pushed = await a.push();
    assert.ok(pushed.rows > 0);
    st = await a.stats();
    assert.equal(st.cdcOperations, 0);
    assert.ok(st.lastPushUnixTime > 0 && st.networkSentBytes > 0);

    const b = await AgentFS.open({ transport, path: join(dir, "b.db"), syncRemoteUrl: url, syncToken: TOKEN });
    t.after(() => b.close());
    assert.equal(await b.fs.readFile("/notes.md", "utf8"), "from a");
    assert.deepEqual(await b.kv.get("k"), { v: 1 });
    await b.fs.writeFile("/b.txt", "from b");
    const s = await b.sync();
    assert.ok(s.push.rows > 0);
    const pulled = await a.pull();
    assert.ok(pulled.changed && pulled.applied > 0);
    assert.equal(await a.fs.readFile("/b.txt", "utf8"), "from b");

    // A wrong token: PERMISSION_DENIED naming TURSO_DB_AUTH_TOKEN; an
    // agent without a remote: FAILED_PRECONDITION.
    const e = await failure(() => AgentFS.open({ transport, path: join(dir, "c.db"), syncRemoteUrl: url, syncToken: "wrong" }));
    assert.match(e.message, /TURSO_DB_AUTH_TOKEN/);
    assert.equal(existsSync(join(dir, "c.db")), false);
    const plain = await AgentFS.open({ transport, path: join(dir, "plain.db") });
    t.after(() => plain.close());
    const e2 = await failure(() => plain.pull());
    assert.match(e2.message, /not set up for sync/);
  });

  test(`encryption through the SDK (${transport})`, async (t) => {
    const dir = tempDir(t);
    const p = join(dir, "enc.db");
    const a = await AgentFS.open({ transport, path: p, encryptionKey: KEY, cipher: "aes256gcm" });
    await a.fs.writeFile("/secret.txt", "MARKER-SDK-TS-SECRET");
    await a.close();
    for (const f of [p, `${p}-wal`]) {
      if (existsSync(f)) assert.equal(readFileSync(f).includes("MARKER-SDK-TS-SECRET"), false, `${f} holds plaintext`);
    }
    const before = readFileSync(p);
    const wrong = await failure(() => AgentFS.open({ transport, path: p, encryptionKey: "cd".repeat(32) }));
    assert.match(wrong.message, /wrong key/);
    const none = await failure(() => AgentFS.open({ transport, path: p }));
    assert.match(none.message, /is encrypted/);
    const short = await failure(() => AgentFS.open({ transport, path: p, encryptionKey: "ab".repeat(8), cipher: "aes256gcm" }));
    assert.match(short.message, /32-byte key/);
    const nothex = await failure(() => AgentFS.open({ transport, path: p, encryptionKey: "zz" }));
    assert.match(nothex.message, /not hexadecimal/);
    assert.ok(readFileSync(p).equals(before), "refused opens left the file as it was");
    const c = await AgentFS.open({ transport, path: p, encryption: { hexKey: KEY, cipher: "aes256gcm" } });
    assert.equal(await c.fs.readFile("/secret.txt", "utf8"), "MARKER-SDK-TS-SECRET");
    await c.close();
    const b = await AgentFS.open({ transport, path: p, encryptionKey: Buffer.from(KEY, "hex") });
    t.after(() => b.close());
    assert.equal(await b.fs.readFile("/secret.txt", "utf8"), "MARKER-SDK-TS-SECRET");
  });
}

/** Pushes ~3 MiB of files to the remote; returns the last file's bytes (written last: past any prefix of the file). */
async function fillRemote(dir, url) {
  const { randomBytes } = await import("node:crypto");
  const last = randomBytes(256 << 10);
  const w = await AgentFS.open({ transport: "process", path: join(dir, "writer.db"), syncRemoteUrl: url, syncToken: TOKEN });
  try {
    for (let i = 0; i < 12; i++) await w.fs.writeFile(`/big/f${i}.bin`, randomBytes(256 << 10));
    await w.fs.writeFile("/big/last.bin", last);
    await w.push();
  } finally {
    await w.close();
  }
  return last;
}

for (const transport of ["process", "inprocess"]) {
  test(`partial sync through the SDK (${transport})`, async (t) => {
    const dir = tempDir(t);
    const url = `${await serveSync(t, join(dir, "remote"))}/partial`;
    const last = await fillRemote(dir, url);

    const full = await AgentFS.open({ transport, path: join(dir, "full.db"), syncRemoteUrl: url, syncToken: TOKEN });
    const whole = (await full.stats()).networkReceivedBytes;
    assert.deepEqual(await full.fs.readFile("/big/last.bin"), last);
    await full.close();
    assert.ok(whole > 3 << 20, `a full bootstrap receives the whole remote (${whole})`);

    const part = await AgentFS.open({
      transport, path: join(dir, "part.db"), syncRemoteUrl: url, syncToken: TOKEN,
      syncPartialBootstrapLength: 128 << 10, syncPartialSegmentSize: 64 << 10,
    });
    t.after(() => part.close());
    const boot = (await part.stats()).networkReceivedBytes;
    assert.ok(boot > 0 && boot < whole / 8, `partial bootstrap received ${boot} of ${whole}`);
    // A file outside the prefix comes over the network when read.
    assert.deepEqual(await part.fs.readFile("/big/last.bin"), last);
    const after = (await part.stats()).networkReceivedBytes;
    assert.ok(after > boot && after < whole, `${boot} < ${after} < ${whole}`);

    const q = await AgentFS.open({
      transport, path: join(dir, "q.db"), syncRemoteUrl: url, syncToken: TOKEN,
      syncPartialBootstrapQuery: "SELECT name FROM fs_dentry WHERE parent_ino = 1", syncPartialPrefetch: true,
    });
    t.after(() => q.close());
    const qboot = (await q.stats()).networkReceivedBytes;
    assert.ok(qboot > 0 && qboot < 1 << 20, `query bootstrap received ${qboot}`);
    assert.deepEqual(await q.fs.readFile("/big/last.bin"), last);

    const e = await failure(() => AgentFS.open({
      transport, path: join(dir, "bad.db"), syncRemoteUrl: url, syncToken: TOKEN,
      syncPartialBootstrapLength: 4096, syncPartialBootstrapQuery: "SELECT 1",
    }));
    assert.equal(e.kind, "INVALID_ARGUMENT");
    assert.match(e.message, /exclude each other/);
    const e2 = await failure(() => AgentFS.open({ transport, path: join(dir, "nourl.db"), syncPartialBootstrapLength: 4096 }));
    assert.match(e2.message, /sync_remote_url/);
  });
}

test("partial sync options are refused over HTTP", async (t) => {
  const { serveHttp } = await import("./helpers.mjs");
  const url = await serveHttp(t, { data: tempDir(t) });
  const e = await failure(() => AgentFS.open({ id: "p", url, syncPartialBootstrapLength: 4096 }));
  assert.equal(e.kind, "INVALID_ARGUMENT");
  assert.match(e.message, /not an HTTP agent/);
});
