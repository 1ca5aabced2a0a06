// What only the in-process transport does: short calls answered on this
// thread, large file data read and written where it lies (no copy), and
// the engine sharing this process's memory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { failure, tempDir } from "./helpers.mjs";

const sha = (b) => createHash("sha256").update(b).digest("hex");

test("inprocess: large files both ways, in place, alongside short calls", async (t) => {
  const a = await AgentFS.open({ transport: "inprocess", path: join(tempDir(t), "big.db") });
  t.after(() => a.close());
  assert.equal(a.transport.inProcess, true);
  assert.equal(a.transport.pid, undefined);
  const big = Buffer.alloc(24 << 20);
  for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
  // A write in flight (through the engine's goroutines) while short calls
  // run synchronously on this thread.
  const writing = a.fs.writeFile("/big.bin", big);
  const small = await Promise.all(Array.from({ length: 50 }, (_, i) => a.fs.writeFile(`/s${i}`, `v${i}`)));
  assert.equal(small.length, 50);
  await writing;
  const got = await a.fs.readFile("/big.bin");
  assert.equal(got.length, big.length);
  assert.equal(sha(got), sha(big));
  assert.ok(Buffer.isBuffer(got));
  // pwrite of a large buffer through a handle, then pread it back.
  const h = await a.fs.open("/big.bin", "r+");
  const patch = Buffer.alloc(200 << 10, 0xab);
  await h.pwrite(4096 * 3 + 5, patch);
  const back = await h.pread(4096 * 3 + 5, patch.length);
  assert.equal(sha(back), sha(patch));
  await h.close();
  assert.equal((await a.fs.stat("/big.bin")).size, big.length);
  assert.equal(await a.fs.readFile("/s49", "utf8"), "v49");
});

test("inprocess: aborting a large write keeps its data valid until the engine is done", async (t) => {
  const a = await AgentFS.open({ transport: "inprocess", path: join(tempDir(t), "abort.db") });
  t.after(() => a.close());
  for (let i = 0; i < 3; i++) {
    const ac = new AbortController();
    const data = Buffer.alloc(32 << 20, i + 1);
    const p = a.fs.writeFile(`/w${i}`, data, { signal: ac.signal });
    ac.abort();
    assert.equal((await failure(() => p)).name, "AbortError");
  }
  // The connection still works; whatever a cancelled write left is whole.
  await a.fs.writeFile("/after", "ok");
  assert.equal(await a.fs.readFile("/after", "utf8"), "ok");
  for (let i = 0; i < 3; i++) {
    try {
      const got = await a.fs.readFile(`/w${i}`);
      assert.ok(got.length === 0 || (got.length === 32 << 20 && got.every((b) => b === i + 1)), `/w${i} is partial`);
    } catch (e) {
      assert.equal(e.code, "ENOENT");
    }
  }
});

test("inprocess: two agents in one process, and errors keep their codes", async (t) => {
  const dir = tempDir(t);
  const a = await AgentFS.open({ transport: "inprocess", path: join(dir, "a.db") });
  const b = await AgentFS.open({ transport: "inprocess", path: join(dir, "b.db") });
  await a.fs.writeFile("/x", "a");
  await b.fs.writeFile("/x", "b");
  assert.equal(await a.fs.readFile("/x", "utf8"), "a");
  assert.equal(await b.fs.readFile("/x", "utf8"), "b");
  const e = await failure(() => a.fs.readdir("/x"));
  assert.equal(e.code, "ENOTDIR");
  assert.equal(e.syscall, "scandir");
  await a.close();
  await assert.rejects(() => a.fs.stat("/x"), { code: "ERR_AGENTFS_UNAVAILABLE" });
  assert.equal(await b.fs.readFile("/x", "utf8"), "b");
  await b.close();
});

test("inprocess: processes that open, write, close and exit all exit cleanly", async (t) => {
  // The engine's goroutine released the addon's thread-safe function after
  // its last message, racing Node's teardown, which deletes the function:
  // about one exit in 16-200 aborted (SIGABRT in uv_mutex_lock).
  const { spawnSync } = await import("node:child_process");
  const dir = tempDir(t);
  const script = `const { AgentFS } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
const a = await AgentFS.open({ path: process.env.DB, transport: "inprocess" });
await a.fs.writeFile("/hello.txt", "hello");
await a.close();`;
  const bad = [];
  for (let i = 0; i < 40; i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, DB: join(dir, `p${i}.db`) }, encoding: "utf8" });
    if (r.status !== 0) bad.push(`run ${i}: status ${r.status} signal ${r.signal} ${r.stderr.slice(-300)}`);
  }
  assert.deepEqual(bad, []);
});
