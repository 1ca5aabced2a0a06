// The HTTP transport against a real `agentfs serve http` started here: the
// API suite, authentication, concurrency and agents on the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { AgentFS } from "../dist/index.js";
import { failure, serveHttp, tempDir } from "./helpers.mjs";
import { apiSuite } from "./api-suite.mjs";

const TOKEN = "t0ken-for-tests";
let n = 0;

apiSuite("http", async (t) => {
  const url = await serveHttp(t, { token: TOKEN, data: tempDir(t) });
  return AgentFS.open({ id: `agent${n++}`, url, token: TOKEN });
});

test("http: a wrong or missing token is refused", async (t) => {
  const url = await serveHttp(t, { token: TOKEN, data: tempDir(t) });
  for (const token of ["wrong", undefined]) {
    const e = await failure(() => AgentFS.open({ id: "a", url, token }));
    assert.equal(e.code, "ERR_AGENTFS_PERMISSION_DENIED", e.message);
    assert.ok(!e.message.includes(TOKEN));
  }
  // an agent opened with the right token works; the same calls with a bad one do not
  const a = await AgentFS.open({ id: "a", url, token: TOKEN });
  await a.fs.writeFile("/x", "1");
  const bad = await failure(async () => {
    const b = await AgentFS.open({ id: "a", url, token: TOKEN });
    b.transport.headers.Authorization = "Bearer nope";
    await b.fs.readFile("/x");
  });
  assert.equal(bad.code, "ERR_AGENTFS_PERMISSION_DENIED");
  await a.close();
});

test("http: agents are separate; a missing agent is not found with noCreate", async (t) => {
  const url = await serveHttp(t, { data: tempDir(t) }); // loopback: no token needed
  const a = await AgentFS.open({ id: "one", url });
  const b = await AgentFS.open({ id: "two", url });
  await a.fs.writeFile("/who", "one");
  await b.fs.writeFile("/who", "two");
  assert.equal(await a.fs.readFile("/who", "utf8"), "one");
  assert.equal(await b.fs.readFile("/who", "utf8"), "two");
  const e = await failure(() => AgentFS.open({ id: "three", url, noCreate: true }));
  assert.equal(e.code, "ERR_AGENTFS_NOT_FOUND", e.message);
  // many calls in flight
  await Promise.all(Array.from({ length: 300 }, (_, i) => a.kv.set(`k${i}`, i)));
  const vals = await Promise.all(Array.from({ length: 300 }, (_, i) => a.kv.get(`k${i}`)));
  assert.deepEqual(vals, Array.from({ length: 300 }, (_, i) => i));
  await a.close();
  await b.close();
  await assert.rejects(() => a.fs.stat("/"), { code: "ERR_AGENTFS_UNAVAILABLE" });
});

test("http: a server that is not there is a clear error", async () => {
  const e = await failure(() => AgentFS.open({ id: "a", url: "http://127.0.0.1:1" }));
  assert.equal(e.code, "ERR_AGENTFS_UNAVAILABLE");
  assert.match(e.message, /127\.0\.0\.1:1/);
});

test("http: exec runs scripts; bindings are refused (the server cannot call back)", async (t) => {
  const url = await serveHttp(t, { token: TOKEN, data: tempDir(t) });
  const a = await AgentFS.open({ id: "sh", url, token: TOKEN });
  const r = await a.exec("echo hi > /f; cat /f");
  assert.equal(r.stdout, "hi\n");
  const e = await failure(() => a.exec("x", { bindings: { x: () => 1 } }));
  assert.equal(e.code, "ERR_AGENTFS_FAILED_PRECONDITION");
  await a.close();
});

test("http: an AbortSignal ends the request", async (t) => {
  const url = await serveHttp(t, { token: TOKEN, data: tempDir(t) });
  const a = await AgentFS.open({ id: "abort", url, token: TOKEN });
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const started = Date.now();
  const e = await failure(() => a.exec("sleep 1; echo late > /late", { signal: ac.signal }));
  assert.equal(e.name, "AbortError");
  assert.ok(Date.now() - started < 900);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await a.fs.exists("/late"), false, "the server stopped the script");
  await a.close();
});
