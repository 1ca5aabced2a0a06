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
