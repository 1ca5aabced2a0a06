// AgentFS.openWith(transport): an agent over a transport the caller made.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { AgentFS, StdioTransport, HttpTransport } from "../dist/index.js";
import { ENGINE, tempDir } from "./helpers.mjs";

test("openWith: an agent over a StdioTransport started by the caller", async (t) => {
  const path = join(tempDir(t), "w.db");
  const transport = await StdioTransport.start({ engine: ENGINE, open: { path, chunkSize: 8192n } });
  const a = await AgentFS.openWith(transport);
  assert.equal(a.info.path, path);
  assert.equal(a.fs.getChunkSize(), 8192);
  await a.fs.writeFile("/x", "over my transport");
  assert.equal(await a.fs.readFile("/x", "utf8"), "over my transport");
  await a.kv.set("k", 1);
  assert.equal(await a.kv.get("k"), 1);
  await a.close();
  // The database is the file: a plain open sees what openWith wrote.
  const b = await AgentFS.open({ path, transport: "process", engine: ENGINE });
  assert.equal(await b.fs.readFile("/x", "utf8"), "over my transport");
  assert.equal(b.fs.getChunkSize(), 8192);
  await b.close();
});

test("openWith: a transport that reaches no engine fails with its error", async () => {
  // Port 9 on loopback (discard): nothing listens in this test.
  const e = await AgentFS.openWith(new HttpTransport({ url: "http://127.0.0.1:9", agent: "a" })).catch((x) => x);
  assert.ok(e instanceof Error);
  assert.match(e.code, /^ERR_AGENTFS_/);
});
