// What one small writeFile and readFile cost the Durable Object's storage
// (the Workers build, core/store/driver_host.go and sdk-ts
// src/cloudflare/host.ts): each statement is a round trip between the
// engine and the object of tens of microseconds, and each transaction
// one transactionSync, so these counts are the operations' cost. An
// overwrite is one transaction of three statements (the old chunks out,
// the new one in, the inode's size and times); a read of a file just
// written needs its data only (the inode is cached).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { config, EXAMPLE, freePort, ROOT, start } from "./workerd.mjs";

const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-stmts-"));
execFileSync(join(EXAMPLE, "node_modules", ".bin", "esbuild"), [
  join(ROOT, "tests", "cloudflare", "counting.ts"), "--bundle", "--format=esm", "--platform=neutral", "--target=es2022",
  "--external:cloudflare:workers", "--external:*.wasm", `--outfile=${join(dir, "counting.js")}`, "--log-level=warning",
], { cwd: EXAMPLE, stdio: "inherit" });
const port = await freePort();
const file = config(join(dir, "conf"), join(dir, "storage"), port, [{
  name: "counting",
  modules: [["build/worker.js", join(dir, "counting.js"), "esModule"], ["wasm/agentfs-workers.wasm", join(ROOT, "sdk-ts", "wasm", "agentfs-workers.wasm"), "wasm"]],
  classes: ["Agent"],
  bindings: [["AGENT", "Agent"]],
}]);
const base = `http://127.0.0.1:${port}`;

test("a small writeFile and readFile: the statements and transactions they cost", async (t) => {
  const w = await start(file, port);
  t.after(async () => {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const op = async (method, path, body) => {
    const r = await fetch(`${base}/?path=${path}`, { method, body });
    assert.equal(r.status, 200, await r.clone().text());
    return r.json();
  };
  const data = Buffer.alloc(1024, 97);
  await op("PUT", "/d/a.txt", data); // creates the database, /d and the file

  const overwrite = await op("PUT", "/d/a.txt", data);
  assert.deepEqual(overwrite.map((q) => q.split(" (")[0].split(" WHERE")[0].split(" SET")[0]), [
    "transactionSync",
    "DELETE FROM fs_data",
    "INSERT OR FAIL INTO fs_data",
    "UPDATE fs_inode",
  ]);

  const read = await op("GET", "/d/a.txt");
  assert.equal(read.length, 1, `one statement: ${JSON.stringify(read)}`);
  assert.match(read[0], /FROM fs_inode i LEFT JOIN fs_data d/);
});
