// Runs the example as a user would, then checks the notes, sources, kv
// summary and one tool-call record per function call.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentFS } from "agentfs-sdk";

test("the OpenAI Agents research assistant saves notes and sources", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-openai-agents-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "research.db");
  const out = execFileSync(process.execPath, ["research.mjs", db], { encoding: "utf8" });
  assert.match(out, /answer: Saved notes to \/research\/notes\.md/);

  const a = await AgentFS.open({ path: db, noCreate: true });
  try {
    assert.match(await a.fs.readFile("/research/sources.md", "utf8"), /\[SQLite WAL mode\]\(https:\/\/sqlite\.org\/wal\.html\)/);
    assert.match(await a.fs.readFile("/research/notes.md", "utf8"), /One SQLite file/);
    assert.deepEqual(await a.kv.get("research:topic"), { question: "How does AgentFS store state?", notes: "/research/notes.md", sources: 2, mentions: 2 });
    const calls = (await a.tools.getRecent(0)).reverse();
    assert.deepEqual(calls.map((c) => `${c.name}:${c.status}`), ["kv_get:success", "write_file:success", "write_file:success", "search:success", "kv_set:success"]);
    assert.deepEqual(calls[0].result, { key: "research:topic", found: false, value: null });
    assert.equal(calls[3].result.matches.length, 2);
  } finally {
    await a.close();
  }
});
