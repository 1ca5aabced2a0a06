// A Durable Object's storage filled by agentfs-sdk 0.6.4's own cloudflare
// integration (npm, in bench/cloudflare as turso-agentfs) is opened by
// agentfs-sdk/cloudflare as it is - same AgentFS 0.4 tables - and what
// ours writes there reads back through 0.6.4 (bench/cloudflare/compat.ts).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { config, freePort, ROOT, start } from "./workerd.mjs";

const pkg = join(ROOT, "bench", "cloudflare");
const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-compat-"));
execFileSync(join(pkg, "node_modules", ".bin", "esbuild"), [
  "compat.ts", "--bundle", "--format=esm", "--platform=neutral", "--target=es2022",
  "--external:cloudflare:workers", "--external:*.wasm", `--outfile=${join(dir, "compat.js")}`, "--log-level=warning",
], { cwd: pkg, stdio: "inherit" });
const port = await freePort();
const file = config(join(dir, "conf"), join(dir, "storage"), port, [{
  name: "compat",
  // 0.6.4's integration uses Node's Buffer.
  flags: ["nodejs_compat"],
  modules: [["build/worker.js", join(dir, "compat.js"), "esModule"], ["wasm/agentfs-workers.wasm", join(ROOT, "sdk-ts", "wasm", "agentfs-workers.wasm"), "wasm"]],
  classes: ["Agent"],
  bindings: [["AGENT", "Agent"]],
}]);

test("storage written by agentfs-sdk 0.6.4's cloudflare integration opens in ours, and back", async (t) => {
  const w = await start(file, port);
  t.after(async () => {
    await w.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal((await fetch(`http://127.0.0.1:${port}/turso`, { method: "PUT" })).status, 204);
  const r = await fetch(`http://127.0.0.1:${port}/ours`);
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.deepEqual(JSON.parse(text), {
    read: "written by 0.6.4\n",
    link: "/dir/from-turso.txt",
    shell: { exitCode: 0, stdout: "from-ours.txt\nfrom-turso.txt\nwritten by 0.6.4\n", stderr: "" },
    back: "written by agentfs-sdk/cloudflare\n",
  });
});
