// Processes and persistent shells (ProcessService) over stdio and a real
// `agentfs serve http`: the shared conformance cases of
// spec/process/cases.json, then what only an SDK shows (bindings in a
// spawned script, abort, list and kill by pid).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ROOT, serveHttp, tempDir } from "./helpers.mjs";

const { cases } = JSON.parse(readFileSync(join(ROOT, "spec", "process", "cases.json"), "utf8"));

/** Runs one conformance case; returns the result of its wait. */
export async function runCase(agent, c) {
  if (c.shell) {
    const sh = await agent.shell();
    let r;
    for (const s of c.shell) r = await sh.run(s);
    await sh.close();
    return r;
  }
  const proc = await agent.spawn(c.script, { keepStdinOpen: c.write !== undefined });
  let stdout = "", stderr = "";
  const dec = new TextDecoder();
  if (c.wait_for) {
    while (!stdout.includes(c.wait_for)) {
      const { chunks, done } = await proc.read();
      for (const ch of chunks) ch.stream === "stdout" ? (stdout += dec.decode(ch.data)) : (stderr += dec.decode(ch.data));
      assert.ok(!done, `${c.name}: ended before ${JSON.stringify(c.wait_for)}`);
    }
  }
  if (c.write !== undefined) {
    await proc.write(c.write);
    await proc.closeStdin();
  }
  if (c.kill !== undefined) await proc.kill(c.kill || undefined);
  const r = await proc.wait();
  return { ...r, stdout: stdout + r.stdout, stderr: stderr + r.stderr };
}

const transports = {
  stdio: async (t) => AgentFS.open({ path: join(tempDir(t), "a.db") }),
  http: async (t) => AgentFS.open({ id: "p", url: await serveHttp(t, { data: tempDir(t) }) }),
};

for (const [name, open] of Object.entries(transports)) {
  test(`${name}: process conformance cases`, async (t) => {
    const a = await open(t);
    t.after(() => a.close());
    for (const c of cases) {
      const r = await runCase(a, c);
      assert.deepEqual({ exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr }, c.expect, c.name);
    }
  });

  test(`${name}: output streams before the end; list and kill by pid; abort kills`, async (t) => {
    const a = await open(t);
    t.after(() => a.close());
    const p = await a.spawn("echo first; sleep 3600");
    const it = p[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(new TextDecoder().decode(first.value.data), "first\n");
    const list = await a.processes();
    assert.deepEqual(list.map((x) => [Number(x.pid), x.running]), [[p.pid, true]]);
    await a.kill(p.pid, 2);
    assert.equal((await p.wait()).exitCode, 130);
    const ac = new AbortController();
    const q = await a.spawn("sleep 3600", { signal: ac.signal });
    ac.abort();
    const r = await q.wait();
    assert.equal(r.exitCode, 137);
    assert.equal(r.signal, 9);
    assert.deepEqual(await a.processes(), []);
  });
}

test("stdio: a spawned script and a shell call host bindings", async (t) => {
  const a = await transports.stdio(t);
  t.after(() => a.close());
  const p = await a.spawn("double --n 21", { bindings: { double: { schema: { type: "object", properties: { n: { type: "number" } } }, fn: ({ n }) => n * 2 } } });
  assert.equal((await p.wait()).stdout, "42\n");
  const sh = await a.shell({ bindings: { greet: { schema: { type: "object", properties: { who: { type: "string" } } }, fn: ({ who }) => `hi ${who}` } } });
  await sh.run("W=you");
  assert.equal((await sh.run('greet --who "$W"')).stdout, '"hi you"\n');
});

test("http: a streamed process ends with its client (close drops the stream, the server kills it)", async (t) => {
  const url = await serveHttp(t, { data: tempDir(t) });
  const a = await AgentFS.open({ id: "p", url });
  const p = await a.spawn("echo up; while true; do sleep 3600; done # victim-ts");
  const it = p[Symbol.asyncIterator]();
  assert.equal(new TextDecoder().decode((await it.next()).value.data), "up\n");
  await a.close();
  const b = await AgentFS.open({ id: "p", url });
  t.after(() => b.close());
  // The server kills and reaps it when the stream ends; the audit record
  // of the script is written only once it stopped. (Polling, no clock.)
  while ((await b.processes()).length > 0) await new Promise((r) => setImmediate(r));
  const calls = await b.tools.getByName("exec");
  const rec = calls.find((c) => JSON.stringify(c.parameters).includes("victim-ts"));
  assert.ok(rec, "no audit record of the streamed script");
  assert.ok(rec.error, `the killed script's record shows no failure: ${JSON.stringify(rec)}`);
});

test("http: a reader that stops makes the script wait (the stream is read as the caller reads)", async (t) => {
  const a = await transports.http(t);
  t.after(() => a.close());
  // Under the 16 MiB output limit of a process, far over the engine's 1 MiB
  // buffer and the 64 KiB the SDK queues.
  const total = 15 << 20;
  const p = await a.spawn(`yes 0123456789abcdef | head -c ${total}; echo > /done`);
  // Not reading for 2 s: the script must stay blocked in its output. (A
  // negative check: under load it can only pass more easily, never fail.)
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await a.fs.exists("/done"), false, "the script finished while nobody read its output");
  }
  let n = 0;
  for await (const c of p) n += c.data.byteLength;
  assert.equal(n, total);
  assert.equal((await p.wait()).exitCode, 0);
  assert.equal(await a.fs.exists("/done"), true);
});
