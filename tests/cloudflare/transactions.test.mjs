// The Workers build's transactions (core/store/driver_host.go): an engine
// operation is one ctx.storage.transactionSync, rolled back when it fails.
// faults.ts makes the object's SQL fail on the Nth chunk insert of a
// multi-chunk writeFile, after the inode, the directory entry and earlier
// chunks were written: the file must not exist afterwards, no row of it
// may remain, and the agent must go on working.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { config, EXAMPLE, freePort, ROOT, start } from "./workerd.mjs";

const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-tx-"));
execFileSync(join(EXAMPLE, "node_modules", ".bin", "esbuild"), [
  join(ROOT, "tests", "cloudflare", "faults.ts"), "--bundle", "--format=esm", "--platform=neutral", "--target=es2022",
  "--external:cloudflare:workers", "--external:*.wasm", `--outfile=${join(dir, "faults.js")}`, "--log-level=warning",
], { cwd: EXAMPLE, stdio: "inherit" });
const port = await freePort();
const file = config(join(dir, "conf"), join(dir, "storage"), port, [{
  name: "faults",
  modules: [["build/worker.js", join(dir, "faults.js"), "esModule"], ["wasm/agentfs-workers.wasm", join(ROOT, "sdk-ts", "wasm", "agentfs-workers.wasm"), "wasm"]],
  classes: ["Agent"],
  bindings: [["AGENT", "Agent"]],
}]);
const base = `http://127.0.0.1:${port}`;

test("a failed operation leaves nothing in the Durable Object's storage", async (t) => {
  const w = await start(file, port);
  t.after(async () => {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal((await fetch(`${base}/?path=/keep.txt`, { method: "PUT", body: "kept" })).status, 204);
  const before = await (await fetch(`${base}/rows`)).json();

  // 1 MiB in 4 KiB chunks: several chunk INSERTs; the third one fails.
  const big = Buffer.alloc(1 << 20, 7);
  const r = await fetch(`${base}/?path=/dir/big.bin&fail=INTO%20fs_data&nth=3`, { method: "PUT", body: big });
  assert.equal(r.status, 500);
  assert.match(await r.text(), /injected failure/);
  assert.deepEqual(await (await fetch(`${base}/rows`)).json(), before, "no inode, entry or chunk of the failed write remains");
  assert.match(await (await fetch(`${base}/?path=/dir/big.bin`)).text(), /^ENOENT/);

  // An overwrite that fails keeps the old content whole.
  const o = await fetch(`${base}/?path=/keep.txt&fail=fs_data&nth=2`, { method: "PUT", body: Buffer.alloc(300000, 1) });
  assert.equal(o.status, 500);
  assert.equal(await (await fetch(`${base}/?path=/keep.txt`)).text(), "kept");

  // The engine goes on: the same write without a failure.
  assert.equal((await fetch(`${base}/?path=/dir/big.bin`, { method: "PUT", body: big })).status, 204);
  assert.ok(Buffer.from(await (await fetch(`${base}/?path=/dir/big.bin`)).arrayBuffer()).equals(big));
});
