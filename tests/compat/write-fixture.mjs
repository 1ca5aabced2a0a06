#!/usr/bin/env node
// Usage: node write-fixture.mjs DBPATH
// Creates a fresh AgentFS database at DBPATH with the real agentfs-sdk (0.6.4)
// and replays the deterministic operations listed in fixture-ops.json.
import { readFileSync, rmSync, existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { isAbsolute } from "node:path";

// AGENTFS_SDK picks another package with agentfs-sdk's API (a name, or the
// path of its entry file): tests/xlang runs these scripts on this
// project's TypeScript SDK too.
const sdk = process.env.AGENTFS_SDK || "turso-agentfs";
const { AgentFS } = await import(isAbsolute(sdk) ? pathToFileURL(sdk).href : sdk);

const dbPath = process.argv[2];
if (!dbPath) {
  console.error("usage: node write-fixture.mjs DBPATH");
  process.exit(2);
}
// Start from a fresh database (remove stale WAL/SHM side files too).
for (const suffix of ["", "-wal", "-shm"]) {
  if (existsSync(dbPath + suffix)) rmSync(dbPath + suffix);
}

const fixture = JSON.parse(
  readFileSync(new URL("./fixture-ops.json", import.meta.url), "utf8"),
);

/** Content of a writeFile op: {"text": S} or {"pattern": N} (byte i = i % 256). */
function opContent(op) {
  if (typeof op.text === "string") return Buffer.from(op.text, "utf8");
  if (typeof op.pattern === "number") {
    const buf = Buffer.alloc(op.pattern);
    for (let i = 0; i < op.pattern; i++) buf[i] = i % 256;
    return buf;
  }
  throw new Error(`writeFile op without content: ${JSON.stringify(op)}`);
}

const agent = await AgentFS.open({ path: dbPath });
const toolIds = new Map();
try {
  for (const op of fixture.ops) {
    switch (op.op) {
      case "mkdir":
        await agent.fs.mkdir(op.path);
        break;
      case "writeFile":
        await agent.fs.writeFile(op.path, opContent(op));
        break;
      case "symlink":
        await agent.fs.symlink(op.target, op.path);
        break;
      case "kvSet":
        await agent.kv.set(op.key, op.value);
        break;
      case "toolStart": {
        const id = await agent.tools.start(op.name, op.parameters);
        toolIds.set(op.as, id);
        break;
      }
      case "toolSuccess":
        await agent.tools.success(toolIds.get(op.ref), op.result);
        break;
      case "toolError":
        await agent.tools.error(toolIds.get(op.ref), op.error);
        break;
      case "toolRecord":
        await agent.tools.record(
          op.name, op.startedAt, op.completedAt, op.parameters, op.result, op.error,
        );
        break;
      default:
        throw new Error(`unknown op: ${JSON.stringify(op)}`);
    }
  }
} finally {
  await agent.close();
}
