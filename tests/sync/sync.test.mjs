// The sync suite: agentfs serve sync and agentfs sync against clients
// nobody here wrote (Turso's @tursodatabase/sync 0.7.2, with agentfs-sdk
// 0.6.4 on top of it), plus conflicts and faults. Run: node --test
// (AGENTFS_BIN names the CLI binary; default ../../bin/agentfs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, existsSync, rmSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { connect } from "@tursodatabase/sync";
import { AgentFS } from "turso-agentfs";
import { createServerlessAdapter } from "turso-agentfs/serverless";
import { connect as serverless } from "@tursodatabase/serverless";

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.AGENTFS_BIN ?? path.resolve(here, "../../bin/agentfs");
const TOKEN = "sync-suite-" + randomBytes(8).toString("hex");
const root = mkdtempSync(path.join(os.tmpdir(), "agentfs-sync-"));
let server, base;

function startServer(listen = "127.0.0.1:0") {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ["serve", "sync", "--data", path.join(root, "srv"), "--listen", listen, "--quiet"],
      { env: { ...process.env, AGENTFS_TOKEN: TOKEN }, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr.on("data", (d) => {
      err += d;
      const m = /at http:\/\/([^/ ]+)\/ID/.exec(err);
      if (m) resolve({ p, addr: m[1] });
    });
    p.on("exit", (code) => reject(new Error(`serve sync exited ${code}: ${err}`)));
  });
}

function stopServer(s, signal = "SIGTERM") {
  return new Promise((resolve) => { s.p.removeAllListeners("exit"); s.p.on("exit", resolve); s.p.kill(signal); });
}

// agentfs in dir (its .agentfs/ holds the agents).
// Asynchronous: the in-test proxy must keep forwarding while it runs.
function af(dir, args, { input, token = TOKEN } = {}) {
  mkdirSync(dir, { recursive: true });
  const env = { ...process.env, TURSO_DB_AUTH_TOKEN: token };
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, args, { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"] });
    const out = [], err = [];
    p.stdout.on("data", (d) => out.push(d));
    p.stderr.on("data", (d) => err.push(d));
    p.on("error", reject);
    p.on("close", (status) => resolve({ status, out: Buffer.concat(out), err: Buffer.concat(err).toString() }));
    p.stdin.on("error", () => {});
    p.stdin.end(input ?? "");
  });
}
async function ok(dir, args, opts) {
  const r = await af(dir, args, opts);
  assert.equal(r.status, 0, `agentfs ${args.join(" ")}: ${r.err}`);
  return r.out;
}
async function fsckClean(dir, id) {
  const out = (await ok(dir, ["fsck", id])).toString();
  assert.match(out, /clean/, out);
}

// agentfs-sdk 0.6.4 calls a prepare() that returns the statement;
// @tursodatabase/sync 0.7.2's returns a promise of it.
function adapt(db) {
  return new Proxy(db, {
    get(t, p) {
      if (p === "prepare") {
        return (sql) => {
          const sp = t.prepare(sql);
          return new Proxy({}, { get(_, m) { return m === "then" ? undefined : async (...a) => (await sp)[m](...a); } });
        };
      }
      const v = t[p];
      return typeof v === "function" ? v.bind(t) : v;
    },
  });
}

async function turso(file, id) {
  const db = await connect({ path: path.join(root, file), url: `${base}/${id}`, authToken: TOKEN, clientName: "suite" });
  return { db, agent: await AgentFS.openWith(adapt(db)) };
}

before(async () => {
  server = await startServer();
  base = `http://${server.addr}`;
});
after(async () => {
  if (server) await stopServer(server);
  rmSync(root, { recursive: true, force: true });
});

test("ours pushes, Turso's client pulls byte-identical; Turso's client pushes, ours pulls", async () => {
  const a = path.join(root, "laptop");
  const blob = randomBytes(300_000);
  await ok(a, ["init", "agent1", "--sync-remote-url", `${base}/agent1`]);
  await ok(a, ["fs", "agent1", "mkdir", "/src"]);
  await ok(a, ["fs", "agent1", "write", "/src/blob.bin"], { input: blob });
  await ok(a, ["fs", "agent1", "write", "/notes.md", "hello from our CLI\n"]);
  await ok(a, ["kv", "agent1", "set", "config", '{"model":"x","n":3}']);
  await ok(a, ["sync", "agent1", "push"]);

  const { db, agent } = await turso("t1.db", "agent1");
  assert.deepEqual(Buffer.from(await agent.fs.readFile("/src/blob.bin")), blob);
  assert.equal((await agent.fs.readFile("/notes.md")).toString(), "hello from our CLI\n");
  assert.deepEqual(await agent.kv.get("config"), { model: "x", n: 3 });

  const blob2 = randomBytes(50_000);
  await agent.fs.writeFile("/from-turso.bin", blob2);
  await agent.fs.writeFile("/notes.md", "rewritten by agentfs-sdk over Turso's sync\n");
  await agent.kv.set("by", "turso");
  await db.push();
  await db.close();

  await ok(a, ["sync", "agent1", "pull"]);
  assert.deepEqual(await ok(a, ["fs", "agent1", "cat", "/from-turso.bin"]), blob2);
  assert.equal((await ok(a, ["fs", "agent1", "cat", "/notes.md"])).toString(), "rewritten by agentfs-sdk over Turso's sync\n");
  assert.equal((await ok(a, ["kv", "agent1", "get", "by"])).toString().trim(), '"turso"');
  assert.deepEqual(await ok(a, ["fs", "agent1", "cat", "/src/blob.bin"]), blob);
  await fsckClean(a, "agent1");

  // A second Turso client bootstraps everything from the server.
  const t2 = await turso("t2.db", "agent1");
  assert.deepEqual(Buffer.from(await t2.agent.fs.readFile("/from-turso.bin")), blob2);
  assert.deepEqual(Buffer.from(await t2.agent.fs.readFile("/src/blob.bin")), blob);
  await t2.db.close();

  // A bootstrap in chunks: the client selects pages with RoaringBitmaps.
  const t3 = await connect({ path: path.join(root, "t3.db"), url: `${base}/agent1`, authToken: TOKEN, clientName: "chunks", pullBytesThreshold: 3 * 4096 });
  const t3a = await AgentFS.openWith(adapt(t3));
  assert.deepEqual(Buffer.from(await t3a.fs.readFile("/src/blob.bin")), blob);
  await t3.close();

  // stats: JSON with Turso's field names; nothing left to push.
  const st = JSON.parse((await ok(a, ["sync", "agent1", "stats"])).toString());
  assert.equal(st.cdc_operations, 0);
  assert.ok(st.revision && st.network_received_bytes > 0 && st.last_push_unix_time > 0, JSON.stringify(st));
  await ok(a, ["sync", "agent1", "checkpoint"]);
  assert.equal(statSync(path.join(a, ".agentfs/agent1.db-wal"), { throwIfNoEntry: false })?.size ?? 0, 0);
});

test("partial sync: Turso's client (partialSyncExperimental) and ours bootstrap a prefix and fetch the rest on read, at the pinned revision", async (tc) => {
  const id = "partial1", url = `${base}/partial1`;
  const src = path.join(root, "p-src");
  await ok(src, ["init", id, "--sync-remote-url", url]);
  await ok(src, ["fs", id, "mkdir", "/d"]);
  const files = [];
  for (let i = 0; i < 12; i++) {
    files.push(randomBytes(1 << 20));
    await ok(src, ["fs", id, "write", `/d/f${i}`], { input: files[i] });
  }
  await ok(src, ["sync", id, "push"]);
  const size = statSync(path.join(root, "srv", `${id}.db`)).size;
  assert.ok(size > 12 << 20, `remote ${size} bytes`);

  const t = await connect({ path: path.join(root, "tp.db"), url, authToken: TOKEN, clientName: "partial",
    partialSyncExperimental: { bootstrapStrategy: { kind: "prefix", length: 256 * 1024 }, segmentSize: 64 * 1024 } });
  const boot = (await t.stats()).networkReceivedBytes;
  assert.ok(boot < 512 * 1024, `Turso's prefix bootstrap received ${boot} of ${size} bytes`);
  // The remote changes f5 after that bootstrap: Turso's client still
  // reads its revision (pages from the server's history) until it pulls.
  await ok(src, ["fs", id, "write", "/d/f5", "changed"]);
  await ok(src, ["sync", id, "push"]);
  const ta = await AgentFS.openWith(adapt(t));
  assert.deepEqual(Buffer.from(await ta.fs.readFile("/d/f3")), files[3]);
  assert.deepEqual(Buffer.from(await ta.fs.readFile("/d/f5")), files[5]);
  const lazy = (await t.stats()).networkReceivedBytes - boot;
  assert.ok(lazy < 6 << 20, `two 1 MiB files read lazily: ${lazy} bytes`);
  tc.diagnostic(`remote ${size} bytes; Turso's client: prefix bootstrap ${boot} bytes received, two 1 MiB files read ${lazy} more`);
  await t.pull();
  assert.equal((await ta.fs.readFile("/d/f5")).toString(), "changed");
  await t.close();

  // Ours: a prefix bootstrap, a lazy read, then a push.
  const dst = path.join(root, "p-dst");
  await ok(dst, ["init", id, "--sync-remote-url", url, "--sync-partial-bootstrap-length", "262144", "--sync-partial-prefetch"]);
  const st = JSON.parse((await ok(dst, ["sync", id, "stats"])).toString());
  assert.ok(st.network_received_bytes < 512 * 1024 && st.partial_missing_pages > 0, JSON.stringify(st));
  assert.deepEqual(await ok(dst, ["fs", id, "cat", "/d/f7"]), files[7]);
  await ok(dst, ["fs", id, "write", "/d/ours", "from a partial agent"]);
  await ok(dst, ["sync", id, "push"]);
  await fsckClean(dst, id);
  await ok(src, ["sync", id, "pull"]);
  assert.equal((await ok(src, ["fs", id, "cat", "/d/ours"])).toString(), "from a partial agent");
});

test("an agent Turso's client created first: ours bootstraps it, adds its own tables, pushes back", async () => {
  const { db, agent } = await turso("first.db", "theirs");
  const blob = randomBytes(9000);
  await agent.fs.writeFile("/made-by-turso.bin", blob);
  await agent.kv.set("origin", "turso");
  await db.push();

  const c = path.join(root, "theirs");
  await ok(c, ["init", "theirs", "--sync-remote-url", `${base}/theirs`]);
  assert.deepEqual(await ok(c, ["fs", "theirs", "cat", "/made-by-turso.bin"]), blob);
  assert.equal((await ok(c, ["kv", "theirs", "get", "origin"])).toString().trim(), '"turso"');
  await ok(c, ["fs", "theirs", "write", "/ours.txt", "ours\n"]);
  await ok(c, ["sync", "theirs", "push"]);
  await fsckClean(c, "theirs");

  assert.equal(await db.pull(), true);
  assert.equal((await agent.fs.readFile("/ours.txt")).toString(), "ours\n");
  assert.deepEqual(Buffer.from(await agent.fs.readFile("/made-by-turso.bin")), blob);
  await db.close();
});

test("long poll: Turso's client waits in pull until our CLI pushes", async () => {
  const c = path.join(root, "lp");
  await ok(c, ["init", "lp", "--sync-remote-url", `${base}/lp`]);
  await ok(c, ["sync", "lp", "push"]);
  const db = await connect({ path: path.join(root, "lp.db"), url: `${base}/lp`, authToken: TOKEN, longPollTimeoutMs: 60_000 });
  const agent = await AgentFS.openWith(adapt(db));
  const waiting = db.pull(); // held by the server until a change arrives
  await ok(c, ["fs", "lp", "write", "/wake.txt", "wake up\n"]);
  await ok(c, ["sync", "lp", "push"]);
  assert.equal(await waiting, true);
  assert.equal((await agent.fs.readFile("/wake.txt")).toString(), "wake up\n");
  await db.close();
});

test("agentfs-sdk/serverless on the remote database over HTTP (hrana v3), @tursodatabase/serverless as the oracle", async () => {
  const a = path.join(root, "sl");
  const blob = randomBytes(120_000);
  await ok(a, ["init", "sl", "--sync-remote-url", `${base}/sl`]);
  await ok(a, ["fs", "sl", "write", "/ours.bin"], { input: blob });
  await ok(a, ["sync", "sl", "push"]);

  const conn = serverless({ url: `${base}/sl`, authToken: TOKEN });
  const agent = await AgentFS.openWith(createServerlessAdapter(conn));
  assert.deepEqual(Buffer.from(await agent.fs.readFile("/ours.bin")), blob);
  const blob2 = randomBytes(70_000);
  await agent.fs.writeFile("/remote.bin", blob2);
  await agent.kv.set("where", "remote");

  // The oracle reads the chunks of /remote.bin straight from the tables.
  const oracle = serverless({ url: `${base}/sl`, authToken: TOKEN });
  const rows = await oracle.all("SELECT data FROM fs_data WHERE ino = (SELECT ino FROM fs_dentry WHERE parent_ino = 1 AND name = ?) ORDER BY chunk_index", "remote.bin");
  assert.deepEqual(Buffer.concat(rows.map((r) => Buffer.from(r.data))), blob2);
  // A transaction that fails leaves nothing behind (batons keep it on one stream).
  await assert.rejects(oracle.transaction(async () => {
    await oracle.run("INSERT INTO kv_store(key, value) VALUES ('tx', '1')");
    throw new Error("abort");
  })());
  assert.equal(await oracle.get("SELECT value FROM kv_store WHERE key = 'tx'"), undefined);
  await oracle.close();
  await conn.close();

  await ok(a, ["sync", "sl", "pull"]);
  assert.deepEqual(await ok(a, ["fs", "sl", "cat", "/remote.bin"]), blob2);
  assert.equal((await ok(a, ["kv", "sl", "get", "where"])).toString().trim(), '"remote"');
  await fsckClean(a, "sl");
});

test("conflicts: the later push wins a file and a kv key; both machines' tool calls and new files survive", async () => {
  const a = path.join(root, "ca"), b = path.join(root, "cb");
  await ok(a, ["init", "c", "--sync-remote-url", `${base}/c`]);
  await ok(a, ["fs", "c", "write", "/same.txt", "base\n"]);
  await ok(a, ["kv", "c", "set", "k", '"base"']);
  await ok(a, ["sync", "c", "push"]);
  await ok(b, ["init", "c", "--sync-remote-url", `${base}/c`]);

  // Both change the same file and key, each creates a file of its own
  // (the same new inode number on both sides) and records a tool call.
  await ok(a, ["fs", "c", "write", "/same.txt", "from A, a longer version of the file\n"]);
  await ok(b, ["fs", "c", "write", "/same.txt", "from B\n"]);
  await ok(a, ["kv", "c", "set", "k", '"A"']);
  await ok(b, ["kv", "c", "set", "k", '"B"']);
  await ok(a, ["fs", "c", "write", "/only-a.txt", "A's own\n"]);
  await ok(b, ["fs", "c", "write", "/only-b.txt", "B's own\n"]);
  await ok(a, ["tools", "c", "record", "search", "--started", "1767366245", "--completed", "1767366246", "--result", '"A"']);
  await ok(b, ["tools", "c", "record", "fetch", "--started", "1767366245", "--completed", "1767366247", "--result", '"B"']);

  await ok(a, ["sync", "c", "push"]);
  await ok(b, ["sync", "c", "push"]); // merges A's changes first: B's own win
  await ok(a, ["sync", "c", "pull"]);

  for (const d of [a, b]) {
    assert.equal((await ok(d, ["fs", "c", "cat", "/same.txt"])).toString(), "from B\n");
    assert.equal((await ok(d, ["kv", "c", "get", "k"])).toString().trim(), '"B"');
    assert.equal((await ok(d, ["fs", "c", "cat", "/only-a.txt"])).toString(), "A's own\n");
    assert.equal((await ok(d, ["fs", "c", "cat", "/only-b.txt"])).toString(), "B's own\n");
    const tl = (await ok(d, ["timeline", "c", "--format", "json"])).toString();
    assert.match(tl, /search/);
    assert.match(tl, /fetch/);
    await fsckClean(d, "c");
  }
});

// A TCP proxy that forwards to the server and cuts every connection after
// `limit` bytes from the server.
function cuttingProxy(limit) {
  const [host, port] = server.addr.split(":");
  const srv = net.createServer((c) => {
    const up = net.connect(Number(port), host);
    let n = 0;
    c.pipe(up);
    up.on("data", (d) => {
      n += d.length;
      if (n > limit) { c.destroy(); up.destroy(); return; }
      c.write(d);
    });
    up.on("error", () => c.destroy());
    c.on("error", () => up.destroy());
  });
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv)));
}

test("faults: a connection cut mid-transfer, kill -9 during push and pull, a server restart", async () => {
  const a = path.join(root, "fa"), b = path.join(root, "fb");
  const big = randomBytes(2_000_000);
  await ok(a, ["init", "f", "--sync-remote-url", `${base}/f`]);
  await ok(a, ["fs", "f", "write", "/big.bin"], { input: big });
  await ok(a, ["sync", "f", "push"]);

  // b bootstraps through a proxy that cuts the page stream: a clear
  // error, no half database left behind; then directly.
  const proxy = await cuttingProxy(200_000);
  const cut = await af(b, ["init", "f", "--sync-remote-url", `http://127.0.0.1:${proxy.address().port}/f`]);
  assert.notEqual(cut.status, 0);
  assert.match(cut.err, /cut|EIO|unreachable/);
  assert.equal(existsSync(path.join(b, ".agentfs/f.db")), false);
  await ok(b, ["init", "f", "--sync-remote-url", `${base}/f`]);
  assert.deepEqual(await ok(b, ["fs", "f", "cat", "/big.bin"]), big);

  // a pull cut mid-stream leaves b untouched; the next pull completes.
  const big2 = randomBytes(1_000_000);
  await ok(a, ["fs", "f", "write", "/big2.bin"], { input: big2 });
  await ok(a, ["sync", "f", "push"]);
  const meta = path.join(b, ".agentfs/f.db-sync.json");
  const m = JSON.parse(readFileSync(meta));
  const direct = m.remote_url;
  m.remote_url = `http://127.0.0.1:${proxy.address().port}/f`;
  writeJSON(meta, m);
  const cutPull = await af(b, ["sync", "f", "pull"]);
  assert.notEqual(cutPull.status, 0);
  assert.match(cutPull.err, /unchanged/);
  assert.equal((await af(b, ["fs", "f", "cat", "/big2.bin"])).status, 1);
  await fsckClean(b, "f");
  // and a push through it: the answer may be cut after the server
  // committed; the next push must neither lose nor duplicate anything.
  await ok(b, ["fs", "f", "write", "/from-b.txt", "b\n"]);
  await af(b, ["sync", "f", "push"]);
  proxy.close();
  m.remote_url = direct;
  writeJSON(meta, { ...JSON.parse(readFileSync(meta)), remote_url: direct });
  await ok(b, ["sync", "f", "push"]);
  assert.deepEqual(await ok(b, ["fs", "f", "cat", "/big2.bin"]), big2);
  await ok(a, ["sync", "f", "pull"]);
  assert.equal((await ok(a, ["fs", "f", "cat", "/from-b.txt"])).toString(), "b\n");
  await fsckClean(a, "f");

  // kill -9 of a push and of a pull at a few points in their run.
  for (const delay of [5, 40, 120]) {
    const data = randomBytes(400_000);
    await ok(a, ["fs", "f", "write", `/k${delay}.bin`], { input: data });
    await killAfter(a, ["sync", "f", "push"], delay);
    await fsckClean(a, "f");
    await ok(a, ["sync", "f", "push"]);
    await killAfter(b, ["sync", "f", "pull"], delay);
    await fsckClean(b, "f");
    await ok(b, ["sync", "f", "pull"]);
    assert.deepEqual(await ok(b, ["fs", "f", "cat", `/k${delay}.bin`]), data);
  }

  // The server restarts (killed, then again on the same data and port):
  // clients of the old run get everything again and go on.
  await stopServer(server, "SIGKILL");
  server = await startServer(server.addr);
  await ok(a, ["fs", "f", "write", "/after-restart.txt", "still here\n"]);
  await ok(a, ["sync", "f", "push"]);
  await ok(b, ["sync", "f", "pull"]);
  assert.equal((await ok(b, ["fs", "f", "cat", "/after-restart.txt"])).toString(), "still here\n");
  assert.deepEqual(await ok(b, ["fs", "f", "cat", "/big.bin"]), big);
  await fsckClean(a, "f");
  await fsckClean(b, "f");
});

function writeJSON(p, v) { spawnSync("sh", ["-c", `cat > '${p}'`], { input: JSON.stringify(v) }); }

function killAfter(dir, args, ms) {
  return new Promise((resolve) => {
    const p = spawn(BIN, args, { cwd: dir, env: { ...process.env, TURSO_DB_AUTH_TOKEN: TOKEN }, stdio: "ignore" });
    const t = setTimeout(() => p.kill("SIGKILL"), ms);
    p.on("exit", () => { clearTimeout(t); resolve(); });
  });
}

test("bad URL, bad token, unreachable server: one-line errors, local data untouched", async () => {
  const d = path.join(root, "bad");
  let r = await af(d, ["init", "x", "--sync-remote-url", "ftp://nowhere/x"]);
  assert.notEqual(r.status, 0);
  assert.match(r.err, /bad sync URL/);
  r = await af(d, ["init", "x", "--sync-remote-url", `${base}/x`], { token: "wrong" });
  assert.notEqual(r.status, 0);
  assert.match(r.err, /EACCES/);
  assert.match(r.err, /TURSO_DB_AUTH_TOKEN/);
  assert.equal(existsSync(path.join(d, ".agentfs/x.db")), false);

  await ok(d, ["init", "y", "--sync-remote-url", `${base}/y`]);
  await ok(d, ["fs", "y", "write", "/keep.txt", "keep\n"]);
  const db = path.join(d, ".agentfs/y.db");
  await ok(d, ["sync", "y", "checkpoint"]);
  const before = readFileSync(db);
  r = await af(d, ["sync", "y", "push"], { token: "wrong" });
  assert.notEqual(r.status, 0);
  assert.match(r.err, /EACCES/);
  const meta = path.join(d, ".agentfs/y.db-sync.json");
  const m = JSON.parse(readFileSync(meta));
  writeJSON(meta, { ...m, remote_url: "http://127.0.0.1:1/y" });
  r = await af(d, ["sync", "y", "pull"]);
  assert.notEqual(r.status, 0);
  assert.match(r.err, /unreachable/);
  assert.match(r.err, /unchanged/);
  assert.deepEqual(readFileSync(db), before);
  assert.equal((await ok(d, ["fs", "y", "cat", "/keep.txt"])).toString(), "keep\n");
});
