// Agent sessions (SessionService) against the scripted model server
// (core/cmd/fakemodel, bin/fakemodel): the shared case of
// spec/sessions/case.json for both wire formats, over stdio and in-process.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ROOT, tempDir } from "./helpers.mjs";

const FAKEMODEL = process.env.AGENTFS_FAKEMODEL || join(ROOT, "bin", "fakemodel");
if (!existsSync(FAKEMODEL)) throw new Error(`no fake model server at ${FAKEMODEL}: run \`go tool task build\` or set AGENTFS_FAKEMODEL`);
const CASE = JSON.parse(readFileSync(join(ROOT, "spec", "sessions", "case.json"), "utf8"));

/** Starts bin/fakemodel with the case's script for provider; resolves with its base URL. */
async function fakeModel(t, dir, provider) {
  const file = join(dir, `script-${provider}.json`);
  writeFileSync(file, JSON.stringify({ ...CASE.script, provider }));
  const p = spawn(FAKEMODEL, [file], { stdio: ["pipe", "pipe", "inherit"] });
  t.after(() => { p.stdin.end(); return new Promise((r) => (p.exitCode !== null ? r() : p.on("exit", r))); });
  return new Promise((resolve, reject) => {
    let out = "";
    p.stdout.setEncoding("utf8").on("data", (d) => {
      out += d;
      const i = out.indexOf("\n");
      if (i >= 0) resolve(out.slice(0, i));
    });
    p.on("exit", (code) => reject(new Error(`fakemodel exited with ${code}`)));
  });
}

for (const transport of ["process", "inprocess"]) {
  for (const provider of ["openai", "anthropic"]) {
    test(`session case, ${provider}, ${transport}`, async (t) => {
      const dir = tempDir(t);
      const url = await fakeModel(t, dir, provider);
      const path = join(dir, "a.db");
      let agent = await AgentFS.open({ path, transport });
      try {
        for (const [i, p] of CASE.prompts.entries()) {
          if (i > 0) {
            // Resume after reopening: the history must reach the model.
            await agent.close();
            agent = await AgentFS.open({ path, transport });
          }
          const session = await agent.openSession({
            id: CASE.session_id, provider, model: CASE.script.model, baseUrl: url, apiKey: CASE.script.api_key,
            writable: p.writable,
          });
          assert.equal(session.id, CASE.session_id);
          const events = [];
          let text = "";
          for await (const ev of session.prompt(p.text)) {
            events.push(ev);
            if (ev.type === "text") text += ev.text;
          }
          assert.equal(text, p.want_text, JSON.stringify(events));
          assert.equal(events.at(-1).type, "done");
          assert.deepEqual(events.filter((e) => e.type === "tool_call").map((e) => e.toolName), p.want_tools);
          const results = events.filter((e) => e.type === "tool_result");
          if (p.want_tool_error) {
            assert.ok(results.some((e) => e.isError && String(e.result.error).includes(p.want_tool_error)), JSON.stringify(results));
          } else {
            assert.ok(results.every((e) => !e.isError), JSON.stringify(results));
          }
          for (const [f, content] of Object.entries(p.want_files)) {
            assert.equal(await agent.fs.readFile(f, "utf8"), content);
          }
          if (p.want_log) {
            // Newest first; the first prompt's steps are the whole log.
            const calls = (await agent.tools.getRecent(0)).map((c) => c.name).reverse();
            assert.deepEqual(calls, p.want_log);
          }
        }
        const list = await agent.sessions.list();
        assert.deepEqual(list.map((s) => s.id), [CASE.session_id]);
        assert.equal(list[0].provider, provider);
        const status = await (await fetch(`${url}/_fakemodel/failures`)).json();
        assert.deepEqual(status.failures, []);
        assert.equal(status.turns_left, 0);
      } finally {
        await agent.close();
      }
    });
  }
}

test("session errors", async (t) => {
  const agent = await AgentFS.open({ transport: "process" });
  t.after(() => agent.close());
  await assert.rejects(agent.openSession({ provider: "openai" }), /no model/);
  const s = await agent.openSession({ provider: "openai", model: "m", baseUrl: "http://127.0.0.1:1" });
  const events = [];
  for await (const ev of s.prompt("hi")) events.push(ev);
  assert.deepEqual(events.map((e) => e.type), ["error", "done"]);
  assert.match(events[0].error, /connection refused/);
  await assert.rejects(s.run("again"), /prompt failed/);
});
