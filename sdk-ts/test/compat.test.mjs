// Cross-language: what this SDK writes, Turso's agentfs-sdk 0.6.4 (npm,
// installed in tests/compat) reads byte-identical, and the other way round.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AgentFS } from "../dist/index.js";
import { ROOT, tempDir } from "./helpers.mjs";

const TURSO = join(ROOT, "tests", "compat", "node_modules", "turso-agentfs", "dist", "index_node.js");
if (!existsSync(TURSO)) throw new Error(`${TURSO} missing: run \`go tool task compat-deps\``);
const { AgentFS: Turso } = await import(pathToFileURL(TURSO).href);

function payload(n, seed) {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

const files = {
  "/notes/hello.txt": Buffer.from("hello, wörld\n"),
  "/notes/empty": Buffer.alloc(0),
  "/data/one-chunk.bin": payload(4096, 1),
  "/data/chunks.bin": payload(3 * 4096 + 17, 2),
  "/data/deep/er/big.bin": payload(300000, 3),
};

test("compat: written here, read by agentfs-sdk 0.6.4", async (t) => {
  const db = join(tempDir(t), "ours.db");
  const a = await AgentFS.open({ path: db });
  for (const [p, d] of Object.entries(files)) await a.fs.writeFile(p, d);
  await a.fs.mkdir("/emptydir");
  await a.fs.symlink("/notes/hello.txt", "/notes/link");
  await a.kv.set("user:1", { name: "ada", tags: ["x"] });
  await a.kv.set("count", 42);
  const id = await a.tools.record("search", 1700000000, 1700000002, { q: "x" }, { hits: 1 });
  await a.close();

  const r = await Turso.open({ path: db });
  for (const [p, d] of Object.entries(files)) {
    const got = await r.fs.readFile(p);
    assert.ok(got.equals(d), `${p}: ${got.length} bytes, want ${d.length}`);
    assert.equal((await r.fs.stat(p)).size, d.length);
  }
  assert.deepEqual(await r.fs.readdir("/notes"), ["empty", "hello.txt", "link"]);
  assert.deepEqual(await r.fs.readdir("/emptydir"), []);
  assert.equal(await r.fs.readlink("/notes/link"), "/notes/hello.txt");
  assert.deepEqual(await r.kv.get("user:1"), { name: "ada", tags: ["x"] });
  assert.equal(await r.kv.get("count"), 42);
  const c = await r.tools.get(id);
  assert.deepEqual({ ...c }, {
    id, name: "search", parameters: { q: "x" }, result: { hits: 1 }, error: undefined,
    status: "success", started_at: 1700000000, completed_at: 1700000002, duration_ms: 2000,
  });
  await r.close();
});

test("compat: written by agentfs-sdk 0.6.4, read here", async (t) => {
  const db = join(tempDir(t), "turso.db");
  const w = await Turso.open({ path: db });
  for (const [p, d] of Object.entries(files)) await w.fs.writeFile(p, d);
  await w.fs.mkdir("/emptydir");
  await w.fs.symlink("/notes/hello.txt", "/notes/link");
  await w.kv.set("user:1", { name: "ada" });
  const id = await w.tools.record("fetch", 1700000000, 1700000003, { u: 1 }, undefined, "timeout");
  await w.close(); // leaves its data in the WAL

  const a = await AgentFS.open({ path: db });
  for (const [p, d] of Object.entries(files)) {
    const got = await a.fs.readFile(p);
    assert.ok(got.equals(d), `${p}: ${got.length} bytes, want ${d.length}`);
  }
  assert.deepEqual(await a.fs.readdir("/notes"), ["empty", "hello.txt", "link"]);
  assert.ok((await a.fs.lstat("/notes/link")).isSymbolicLink());
  assert.ok((await a.fs.stat("/emptydir")).isDirectory());
  assert.deepEqual(await a.kv.get("user:1"), { name: "ada" });
  const c = await a.tools.get(id);
  assert.equal(c.status, "error");
  assert.equal(c.error, "timeout");
  assert.deepEqual(c.parameters, { u: 1 });
  assert.equal(c.duration_ms, 3000);
  await a.close();
});
