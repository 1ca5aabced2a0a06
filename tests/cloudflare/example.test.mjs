// examples/cloudflare in workerd, the Workers runtime: agentfs-sdk/cloudflare
// keeps an agent in a Durable Object's SQLite storage. Files, kv and tool
// calls written through the Worker, the shell run inside the object, and
// concurrent requests to one object; then workerd is stopped and started
// again on the same storage directory (the object evicted and brought
// back) and everything reads back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { config, exampleWorker, freePort, start } from "./workerd.mjs";

const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-"));
const persist = join(dir, "storage");
const port = await freePort();
const file = config(join(dir, "conf"), persist, port, [exampleWorker()]);
const base = `http://127.0.0.1:${port}`;

async function req(method, path, body) {
  const r = await fetch(base + path, { method, body });
  return { status: r.status, text: await r.text() };
}
async function json(method, path, body) {
  const r = await req(method, path, body);
  assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
  return JSON.parse(r.text);
}

const big = Buffer.alloc(1 << 20);
for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 12)) & 0xff;

test("agentfs-sdk/cloudflare in workerd: write, shell, concurrency, restart", async (t) => {
  let w = await start(file, port);
  t.after(async () => {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  await t.test("files, kv and tool calls land in the object's SQLite tables", async () => {
    assert.equal((await req("PUT", "/alice/fs/notes/hello.txt", "hello from a Durable Object\n")).status, 204);
    assert.equal((await req("GET", "/alice/fs/notes/hello.txt")).text, "hello from a Durable Object\n");
    assert.equal((await req("PUT", "/alice/fs/big.bin", big)).status, 204);
    const r = await fetch(`${base}/alice/fs/big.bin`);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(big), "1 MiB file reads back byte for byte");
    assert.equal((await req("PUT", "/alice/kv/config", JSON.stringify({ model: "m", steps: [1, 2] }))).status, 204);
    assert.deepEqual(await json("GET", "/alice/kv/config"), { model: "m", steps: [1, 2] });
    const id = await json("POST", "/alice/tools", JSON.stringify({ name: "search", parameters: { q: "x" }, result: { hits: 3 } }));
    assert.equal(typeof id, "number");
    const tables = await json("GET", "/alice/tables");
    for (const name of ["fs_config", "fs_inode", "fs_dentry", "fs_data", "fs_symlink", "kv_store", "tool_calls"]) assert.ok(tables.includes(name), `${name} in ${tables}`);
  });

  await t.test("errors carry POSIX codes", async () => {
    const r = await req("GET", "/alice/fs/missing.txt");
    assert.equal(r.status, 404);
    assert.match(r.text, /^ENOENT/);
    const d = await req("GET", "/alice/fs/notes");
    assert.equal(d.status, 400);
    assert.match(d.text, /^EISDIR/);
  });

  await t.test("the shell runs inside the object over the agent's files", async () => {
    const r = await json("POST", "/alice/exec", "mkdir -p /work && echo made by the shell > /work/out.txt && cat /notes/hello.txt | wc -c && ls /work && grep -c shell /work/out.txt");
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, "28\nout.txt\n1\n");
    assert.equal((await req("GET", "/alice/fs/work/out.txt")).text, "made by the shell\n");
    // The Workers build leaves the sandbox's node command out (size).
    const n = await json("POST", "/alice/exec", "node -e 1");
    assert.equal(n.exitCode, 127);
  });

  await t.test("concurrent requests to one object", async () => {
    const n = 24;
    const puts = await Promise.all(Array.from({ length: n }, (_, i) => req("PUT", `/alice/fs/par/f${i}.txt`, `content ${i}\n`.repeat(100 + i))));
    assert.deepEqual(puts.map((r) => r.status), Array(n).fill(204));
    // Readers, writers of one file and the shell at once.
    const mixed = await Promise.all([
      ...Array.from({ length: n }, (_, i) => req("GET", `/alice/fs/par/f${i}.txt`)),
      ...Array.from({ length: 8 }, (_, i) => req("PUT", "/alice/fs/par/same.txt", `writer ${i}\n`.repeat(500))),
      json("POST", "/alice/exec", "ls /par | wc -l"),
    ]);
    for (let i = 0; i < n; i++) assert.equal(mixed[i].text, `content ${i}\n`.repeat(100 + i));
    const same = (await req("GET", "/alice/fs/par/same.txt")).text;
    assert.match(same, /^(writer \d\n)\1{499}$/, "one writer's whole content, never a mix");
    assert.equal((await json("GET", "/alice/ls/par")).length, n + 1);
  });

  await t.test("objects are separate agents", async () => {
    assert.equal((await req("GET", "/bob/fs/notes/hello.txt")).status, 404);
    assert.equal((await req("PUT", "/bob/fs/notes/hello.txt", "bob's\n")).status, 204);
  });

  await t.test("after workerd restarts on the same storage, everything reads back", async () => {
    await w.stop();
    w = await start(file, port);
    assert.equal((await req("GET", "/alice/fs/notes/hello.txt")).text, "hello from a Durable Object\n");
    assert.equal((await req("GET", "/bob/fs/notes/hello.txt")).text, "bob's\n");
    const r = await fetch(`${base}/alice/fs/big.bin`);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(big));
    assert.deepEqual(await json("GET", "/alice/kv/config"), { model: "m", steps: [1, 2] });
    // The shell's runs are in the log too, beside the recorded call.
    const calls = await json("GET", "/alice/tools");
    const search = calls.filter((c) => c.name === "search");
    assert.equal(search.length, 1, JSON.stringify(calls));
    assert.deepEqual(search[0].parameters, { q: "x" });
    assert.deepEqual(search[0].result, { hits: 3 });
    assert.equal((await req("GET", "/alice/fs/work/out.txt")).text, "made by the shell\n");
    assert.equal((await json("GET", "/alice/ls/par")).length, 25);
    const s = await json("POST", "/alice/exec", "cat /work/out.txt; ls /");
    assert.equal(s.stdout, "made by the shell\nbig.bin\nnotes\npar\nwork\n");
  });
});
