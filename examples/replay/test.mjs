// Makes the demo run, inspects it, restores the state before each step
// and checks it: before step 4 (the one that went wrong) the files are
// those of steps 1..3, replaying every step gives the run's final state,
// and the restored database's timeline is the replayed prefix.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentFS } from "agentfs-sdk";

const node = (...args) => execFileSync(process.execPath, ["replay.mjs", ...args], { encoding: "utf8" });

async function files(db) {
  const a = await AgentFS.open({ path: db, noCreate: true, readOnly: true });
  try {
    const out = {};
    for (const p of (await a.exec("find / -type f | sort", { noAudit: true })).stdout.split("\n").filter(Boolean)) {
      out[p] = await a.fs.readFile(p, "utf8");
    }
    return { files: out, kv: await a.kv.get("status"), steps: (await a.tools.getRecent(0)).map((c) => c.name).reverse() };
  } finally {
    await a.close();
  }
}

test("replay: inspect a run, restore the files as they were before step N", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-replay-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "run.db");
  node("demo", db);

  const report = node("inspect", db);
  assert.match(report, /snapshots: run-start/);
  assert.match(report, /step 4: bash \{"command":"rm -r \/docs/);
  assert.match(report, /files now:\n\/docs\/README\.md\n$/);

  node("restore", db, "4", join(dir, "before4.db"));
  const before4 = await files(join(dir, "before4.db"));
  assert.deepEqual(before4.files, {
    "/docs/intro.md": "# Intro\n\nAgentFS keeps an agent's files, kv and tool calls.\n",
    "/docs/lines.txt": "6\n",
    "/docs/usage.md": "# Usage\n\nagentfs init my-agent\n",
  });
  assert.deepEqual(before4.steps, ["write_file", "edit_file", "bash"]);
  assert.equal(before4.kv, undefined);

  // Before step 1: the snapshot itself.
  const before1 = await files((node("restore", db, "1", join(dir, "before1.db")), join(dir, "before1.db")));
  assert.deepEqual(Object.keys(before1.files), ["/docs/intro.md"]);
  assert.deepEqual(before1.steps, []);

  // Replaying every step reproduces the run's end.
  node("restore", db, "6", join(dir, "all.db"));
  const [all, orig] = [await files(join(dir, "all.db")), await files(db)];
  assert.deepEqual(all.files, orig.files);
  assert.equal(all.kv, "done");
  assert.deepEqual(all.steps, orig.steps);
});
