// examples/cloudflare as its README says to run it: `npx wrangler dev`
// (the example's pinned wrangler, local mode: Miniflare over wrangler's
// own workerd, no Cloudflare account or network). wrangler bundles
// src/index.ts with agentfs-sdk/cloudflare and loads agentfs-workers.wasm
// as a compiled module; a file written through the Worker, the shell run
// inside the object, then wrangler stopped and started again on the same
// --persist-to directory reads everything back.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXAMPLE, freePort } from "./workerd.mjs";

const dir = mkdtempSync(join(tmpdir(), "agentfs-wrangler-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

// wrangler dev in the example's directory; resolves once the Worker answers.
async function dev() {
  const child = spawn(join(EXAMPLE, "node_modules", ".bin", "wrangler"), ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", join(dir, "state")], {
    cwd: EXAMPLE,
    // No metrics, no prompts, no update check: there is no network.
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "1", NO_UPDATE_NOTIFIER: "1", XDG_CONFIG_HOME: join(dir, "config") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: stop() ends wrangler and its workerd
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((r) => child.on("exit", r));
  let gone = false;
  exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`wrangler dev exited at start:\n${log}`);
    try {
      await fetch(`${base}/`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    log: () => log,
    async stop() {
      if (gone) return;
      process.kill(-child.pid, "SIGTERM");
      const t = setTimeout(() => !gone && process.kill(-child.pid, "SIGKILL"), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

test("examples/cloudflare under `wrangler dev` (local): files, shell, restart", async (t) => {
  let w = await dev();
  t.after(async () => {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  let r = await fetch(`${base}/alice/fs/notes/a.txt`, { method: "PUT", body: "hi from wrangler\n" });
  assert.equal(r.status, 204, `${await r.text()}\n${w.log()}`);
  r = await fetch(`${base}/alice/exec`, { method: "POST", body: "ls /notes; cat /notes/a.txt | tr a-z A-Z" });
  assert.equal(r.status, 200, w.log());
  assert.deepEqual(await r.json(), { exitCode: 0, stdout: "a.txt\nHI FROM WRANGLER\n", stderr: "" });

  await w.stop();
  w = await dev();
  r = await fetch(`${base}/alice/fs/notes/a.txt`);
  assert.equal(await r.text(), "hi from wrangler\n", "the object's storage kept the file across wrangler restarts");
});
