// The conformance vectors of spec/vectors (format in its README), each on a
// fresh agent through this SDK's idiomatic API, over stdio and over HTTP.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ROOT, serveHttp, tempDir } from "./helpers.mjs";

const DIR = join(ROOT, "spec", "vectors");
const vectors = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort().map((f) => [f, JSON.parse(readFileSync(join(DIR, f), "utf8"))]);
assert.ok(vectors.length > 0, `no vectors in ${DIR}`);

const bytes = (a) => (a.data_b64 !== undefined ? Buffer.from(a.data_b64, "base64") : Buffer.from(a.data, "utf8"));
function typeOf(s) {
  if (s.isFile()) return "file";
  if (s.isDirectory()) return "dir";
  if (s.isSymbolicLink()) return "symlink";
  if (s.isFIFO()) return "fifo";
  return "other";
}
const statResult = (s) => ({ size: s.size, type: typeOf(s), perm: s.mode & 0o7777, nlink: s.nlink });

// run performs one step and returns its result fields.
async function run(a, op, x) {
  switch (op) {
    // The vectors expect node:fs's writeFile (ENOENT for a missing parent);
    // this SDK's default creates parents, as agentfs-sdk.
    case "writeFile": await a.fs.writeFile(x.path, bytes(x), { createParents: false }); return {};
    case "appendFile": await a.fs.appendFile(x.path, bytes(x), { createParents: false }); return {};
    case "readFile": { const b = await a.fs.readFile(x.path); return { data: b.toString("utf8"), data_b64: b.toString("base64"), _bytes: b }; }
    case "stat": return statResult(await a.fs.stat(x.path));
    case "lstat": return statResult(await a.fs.lstat(x.path));
    case "mkdir": await a.fs.mkdir(x.path, { recursive: !!x.recursive }); return {};
    case "rmdir": await a.fs.rmdir(x.path); return {};
    case "unlink": await a.fs.unlink(x.path); return {};
    case "rm": await a.fs.rm(x.path, { recursive: !!x.recursive, force: !!x.force }); return {};
    case "rename": await a.fs.rename(x.from, x.to); return {};
    case "copyFile": await a.fs.copyFile(x.from, x.to); return {};
    case "symlink": await a.fs.symlink(x.target, x.path); return {};
    case "readlink": return { target: await a.fs.readlink(x.path) };
    case "link": await a.fs.link(x.from, x.to); return {};
    case "chmod": await a.fs.chmod(x.path, x.mode); return {};
    case "truncate": await a.fs.truncate(x.path, x.size); return {};
    case "access": await a.fs.access(x.path); return {};
    case "readdir": return { names: await a.fs.readdir(x.path) };
    case "exists": return { value: await a.fs.exists(x.path) };
    case "kvSet": await a.kv.set(x.key, x.value); return {};
    case "kvGet": { const v = await a.kv.get(x.key); return v === undefined ? { missing: true } : { value: v }; }
    case "kvList": return { keys: (await a.kv.list(x.prefix)).map((e) => e.key) };
    case "kvDelete": await a.kv.delete(x.key); return {};
    case "toolRecord": await a.tools.record(x.name, x.started_at, x.completed_at, x.parameters, x.result, x.error); return {};
    case "toolStats": {
      // getStats orders by calls, as agentfs-sdk; the vectors list by name.
      const s = await a.tools.getStats();
      return { stats: s.map(({ name, total_calls, successful, failed }) => ({ name, total_calls, successful, failed })).sort((p, q) => (p.name < q.name ? -1 : p.name > q.name ? 1 : 0)) };
    }
    default: throw new Error(`unknown op ${op}`);
  }
}

async function runVector(a, file, v) {
  for (const [i, step] of v.steps.entries()) {
    const where = `${file} step ${i} ${step.op} ${JSON.stringify(step.args)}`;
    let got, err;
    try {
      got = await run(a, step.op, step.args);
    } catch (e) {
      err = e;
    }
    if (step.expect.error) {
      assert.ok(err, `${where}: succeeded, want ${step.expect.error}`);
      assert.equal(err.code, step.expect.error, `${where}: ${err.message}`);
      continue;
    }
    if (err) throw new Error(`${where}: ${err.code} ${err.message}`);
    for (const [k, want] of Object.entries(step.expect)) {
      if (k === "data_b64") assert.ok(got._bytes.equals(Buffer.from(want, "base64")), `${where}: data differs`);
      else assert.deepEqual(got[k], want, `${where}: ${k}`);
    }
  }
}

for (const transport of ["process", "inprocess"]) {
  test(`vectors over stdio (${transport})`, async (t) => {
    for (const [file, v] of vectors) {
      const a = await AgentFS.open({ transport, path: join(tempDir(t), "v.db") });
      try {
        await runVector(a, file, v);
      } finally {
        await a.close();
      }
    }
  });
}

test("vectors over http", async (t) => {
  const url = await serveHttp(t, { data: tempDir(t) });
  let n = 0;
  for (const [file, v] of vectors) {
    const a = await AgentFS.open({ id: `v${n++}`, url });
    await runVector(a, file, v);
    await a.close();
  }
});
