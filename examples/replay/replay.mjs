// Inspect and replay a finished agent run from its timeline and a snapshot.
//
//   node replay.mjs demo DB                  make a finished run to look at (5 steps, step 4 goes wrong)
//   node replay.mjs inspect DB               what did the agent do: every step with its arguments and outcome
//   node replay.mjs restore DB N OUT         OUT = the agent's files as they were before step N
//
// How: a run starts with a snapshot (agent.rpc.agent.createSnapshot: a
// consistent copy of the whole database, kept in DB.snapshots/NAME.db).
// The tool-call log keeps every call with its full arguments, so the state
// before step N is the snapshot plus steps 1..N-1 replayed through the same
// tools (callAgentTool). Only the steps that change the agent are replayed;
// the replayed calls are logged again, so OUT's timeline is the first N-1
// steps of the run. bash steps replay exactly when their scripts are
// deterministic (the sandbox has no network and no host programs; `date`
// is the one clock).

import { copyFileSync, existsSync, rmSync } from "node:fs";
import { AgentFS, agentToolSpecs, callAgentTool } from "agentfs-sdk";

const SNAPSHOT = "run-start";
const writes = new Set(agentToolSpecs.filter((s) => s.writes).map((s) => s.name));

/** The run's steps, oldest first (calls of the ready-made tools only). */
async function steps(agent) {
  const names = new Set(agentToolSpecs.map((s) => s.name));
  return (await agent.tools.getRecent(0)).reverse().filter((c) => names.has(c.name));
}

async function demo(db) {
  const agent = await AgentFS.open({ path: db });
  try {
    await agent.fs.writeFile("/docs/intro.md", "# Intro\n\nAgentFS keeps an agent's files.\n", { createParents: true });
    await agent.rpc.agent.createSnapshot({ name: SNAPSHOT });
    const run = [
      ["write_file", { path: "/docs/usage.md", content: "# Usage\n\nagentfs init my-agent\n" }],
      ["edit_file", { path: "/docs/intro.md", old_string: "keeps an agent's files", new_string: "keeps an agent's files, kv and tool calls" }],
      ["bash", { command: "cat /docs/*.md | wc -l > /docs/lines.txt" }],
      ["bash", { command: "rm -r /docs && mkdir /docs && echo oops > /docs/README.md" }], // the step that went wrong
      ["kv_set", { key: "status", value: "done" }],
    ];
    for (const [tool, input] of run) await callAgentTool(agent, tool, input);
  } finally {
    await agent.close();
  }
}

async function inspect(db) {
  const agent = await AgentFS.open({ path: db, noCreate: true, readOnly: true });
  try {
    const snaps = await agent.rpc.agent.listSnapshots({});
    console.log(`snapshots: ${snaps.snapshots.map((s) => s.name).join(", ") || "(none)"}`);
    for (const [i, c] of (await steps(agent)).entries()) {
      const outcome = c.status === "error" ? `error: ${c.error}` : JSON.stringify(c.result);
      console.log(`step ${i + 1}: ${c.name}${writes.has(c.name) ? "" : " (read)"} ${JSON.stringify(c.parameters)}\n         -> ${outcome.slice(0, 160)}`);
    }
    console.log("\nfiles now:");
    const r = await agent.exec("find / -type f | sort", { noAudit: true });
    process.stdout.write(r.stdout);
  } finally {
    await agent.close();
  }
}

async function restore(db, n, out) {
  const snapshot = `${db}.snapshots/${SNAPSHOT}.db`;
  if (!existsSync(snapshot)) throw new Error(`no snapshot ${snapshot}: the run must start with createSnapshot({ name: "${SNAPSHOT}" })`);
  const src = await AgentFS.open({ path: db, noCreate: true, readOnly: true });
  let run;
  try {
    run = await steps(src);
  } finally {
    await src.close();
  }
  if (!(n >= 1 && n <= run.length + 1)) throw new Error(`step ${n}: the run has steps 1..${run.length}`);
  for (const ext of ["", "-wal", "-shm"]) rmSync(out + ext, { force: true });
  copyFileSync(snapshot, out);
  const agent = await AgentFS.open({ path: out, noCreate: true });
  try {
    for (const [i, c] of run.slice(0, n - 1).entries()) {
      if (!writes.has(c.name)) continue;
      try {
        await callAgentTool(agent, c.name, c.parameters);
      } catch (e) {
        // A step that failed in the run fails again and changed nothing then either.
        if (c.status !== "error") throw new Error(`replaying step ${i + 1} (${c.name}): ${e.message}`);
      }
    }
  } finally {
    await agent.close();
  }
  console.log(`${out}: the files as they were before step ${n} (snapshot ${SNAPSHOT} + steps 1..${n - 1})`);
}

const [cmd, db, ...rest] = process.argv.slice(2);
if (cmd === "demo" && db) await demo(db);
else if (cmd === "inspect" && db) await inspect(db);
else if (cmd === "restore" && db && rest.length === 2) await restore(db, Number(rest[0]), rest[1]);
else {
  console.error("usage: node replay.mjs demo DB | inspect DB | restore DB N OUT");
  process.exit(2);
}
