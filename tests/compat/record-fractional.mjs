#!/usr/bin/env node
// Usage: node record-fractional.mjs DBPATH
// Records tool calls with agentfs-sdk 0.6.4 the way its callers often do,
// with fractional seconds (Date.now() / 1000): the SDK stores them as
// REAL, which every reader of the format must accept.
import { AgentFS } from "turso-agentfs";

const dbPath = process.argv[2];
if (!dbPath) {
  console.error("usage: node record-fractional.mjs DBPATH");
  process.exit(2);
}
const agent = await AgentFS.open({ path: dbPath });
try {
  await agent.tools.record("fetch", 1700000000.25, 1700000001.75, { url: "https://example.com/" }, { status: 200 });
  await agent.tools.record("exec", 1700000005.5, 1700000006.125, ["ls"], undefined, "exit status 2");
} finally {
  await agent.close();
}
