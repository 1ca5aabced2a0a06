// Runs the example as a user would (node agent.mjs DB), then checks what
// the agent left: the fixed script, the changelog, and a timeline with one
// record per tool call in order (read back through the SDK and through
// `agentfs timeline`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentFS } from "agentfs-sdk";

test("the AI SDK coding agent fixes the project, and the timeline shows every step", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-ai-sdk-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "coder.db");
  const out = execFileSync(process.execPath, ["agent.mjs", db], { encoding: "utf8" });
  assert.match(out, /steps: 7/);
  assert.match(out, /answer: Fixed greet\.sh/);

  const agent = await AgentFS.open({ path: db, noCreate: true });
  try {
    assert.equal(await agent.fs.readFile("/project/greet.sh", "utf8"), '#!/bin/sh\n# Prints a greeting for $1.\necho "Hello, $1!"\n');
    assert.match(await agent.fs.readFile("/project/CHANGES.md", "utf8"), /greet\.sh/);
    // The test passes in the sandbox now.
    const r = await agent.exec("sh test.sh", { dir: "/project" });
    assert.equal(r.stdout, "PASS\n");

    const calls = (await agent.tools.getRecent(0)).reverse().filter((c) => c.name !== "exec");
    assert.deepEqual(
      calls.map((c) => [c.name, c.status]),
      [
        ["list", "success"],
        ["bash", "error"], // the failing test: exit status 1
        ["read_file", "success"],
        ["edit_file", "success"],
        ["bash", "success"],
        ["write_file", "success"],
      ],
    );
    assert.equal(calls[1].error, "exit status 1");
    assert.match(calls[1].result.stdout, /FAIL: got 'Hello, world'/);
    assert.deepEqual(calls[3].result, { path: "/project/greet.sh", replacements: 1 });
  } finally {
    await agent.close();
  }

  // The CLI shows the same timeline (newest first).
  const cli = JSON.parse(execFileSync(process.env.AGENTFS_BIN ?? "agentfs", ["timeline", db, "--format", "json"], { encoding: "utf8" }));
  const names = cli.map((c) => c.name).filter((n) => n !== "exec");
  assert.deepEqual(names, ["write_file", "bash", "edit_file", "read_file", "bash", "list"]);
});
