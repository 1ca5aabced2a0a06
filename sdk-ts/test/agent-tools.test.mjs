// The ready-made agent tools against the shared cases of
// spec/tools/cases.json (the same cases run in every SDK), through the
// real engine: each case on a fresh agent, then the result or error code,
// the files and kv afterwards, and the one tool-call record per call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS, agentTools, agentToolSpecs, callAgentTool } from "../dist/index.js";
import { ROOT, failure, tempDir } from "./helpers.mjs";

const { cases } = JSON.parse(readFileSync(join(ROOT, "spec", "tools", "cases.json"), "utf8"));
const spec = JSON.parse(readFileSync(join(ROOT, "spec", "tools", "agent-tools.json"), "utf8"));

/** Every key of want is deep-equal in got (arrays element by element). */
function assertSubset(got, want, where) {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got), `${where}: want an array, got ${JSON.stringify(got)}`);
    assert.equal(got.length, want.length, `${where}: length of ${JSON.stringify(got)}`);
    want.forEach((w, i) => assertSubset(got[i], w, `${where}[${i}]`));
  } else if (want && typeof want === "object") {
    assert.ok(got && typeof got === "object", `${where}: want an object, got ${JSON.stringify(got)}`);
    for (const [k, w] of Object.entries(want)) assertSubset(got[k], w, `${where}.${k}`);
  } else {
    assert.deepEqual(got, want, where);
  }
}

async function fresh(t) {
  const agent = await AgentFS.open({ path: join(tempDir(t), "a.db") });
  t.after(() => agent.close());
  return agent;
}

for (const c of cases) {
  test(`agent tools: ${c.name}`, async (t) => {
    const agent = await fresh(t);
    for (const [p, content] of Object.entries(c.files ?? {})) {
      await agent.fs.writeFile(p, content, { createParents: true });
    }
    for (const [k, v] of Object.entries(c.kv ?? {})) await agent.kv.set(k, v);
    if (c.error) {
      const e = await failure(() => callAgentTool(agent, c.call.tool, c.call.input));
      assert.equal(e.code, c.error, `error ${e.message}`);
    } else {
      const r = await callAgentTool(agent, c.call.tool, c.call.input);
      assertSubset(r, c.result, "result");
    }
    for (const [p, content] of Object.entries(c.files_after ?? {})) {
      assert.equal(await agent.fs.readFile(p, "utf8"), content, p);
    }
    for (const [k, v] of Object.entries(c.kv_after ?? {})) assert.deepEqual(await agent.kv.get(k), v, k);
    // One record per call, under the tool's name, with its arguments; the
    // engine's own "exec" record is not added for bash and search.
    const log = await agent.tools.getRecent(0);
    assert.deepEqual(log.map((x) => x.name), [c.call.tool]);
    assert.deepEqual(log[0].parameters, c.call.input);
    assert.equal(log[0].status, c.error ? "error" : c.call.tool === "bash" && c.result.exit_code !== 0 ? "error" : "success");
  });
}

test("agent tools: specs are the generated copy of spec/tools/agent-tools.json", () => {
  assert.deepEqual(JSON.parse(JSON.stringify(agentToolSpecs)), spec.tools);
});

test("agent tools: options select tools, readOnly drops writers, log keeps a read's size only", async (t) => {
  const agent = await fresh(t);
  assert.deepEqual(agentTools(agent).map((x) => x.name), spec.tools.map((x) => x.name));
  assert.deepEqual(agentTools(agent, { readOnly: true }).map((x) => x.name), ["read_file", "list", "search", "kv_get"]);
  const [rf] = agentTools(agent, { only: ["read_file"] });
  await agent.fs.writeFile("/big.txt", "x".repeat(10000));
  const r = await rf.execute({ path: "/big.txt" });
  assert.equal(r.content.length, 10000);
  const [call] = await agent.tools.getByName("read_file");
  assert.deepEqual(call.result, { path: "/big.txt", size: 10000 });

  // bash output is cut in the log (not in the result).
  const [bash] = agentTools(agent, { only: ["bash"], sandbox: { deny: ["rm"] } });
  const out = await bash.execute({ command: "cat /big.txt" });
  assert.equal(out.stdout.length, 10000);
  const [bc] = await agent.tools.getByName("bash");
  assert.ok(bc.result.stdout.length < 5000 && bc.result.stdout.includes("more characters"));
  // The sandbox policy applies: a denied command fails with 127 or 126.
  const denied = await bash.execute({ command: "rm /big.txt" });
  assert.notEqual(denied.exit_code, 0);
  assert.ok(await agent.fs.exists("/big.txt"));

  // noLog leaves the log alone.
  const before = (await agent.tools.getRecent(0)).length;
  await callAgentTool(agent, "kv_set", { key: "k", value: 1 }, { noLog: true });
  assert.equal((await agent.tools.getRecent(0)).length, before);
});
