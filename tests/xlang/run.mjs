#!/usr/bin/env node
// Cross-language matrix (README.md): every writer replays
// tests/compat/fixture-ops.json into a new database; every reader dumps a
// copy of it; every dump must equal tests/compat/expected-fixture.json.
// Usage: node run.mjs   (run.sh builds what it needs and sets the commands)
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const compat = path.join(here, "..", "compat");
const expected = JSON.parse(readFileSync(path.join(compat, "expected-fixture.json"), "utf8"));

// Each SDK: [command, ...args] to which "write DB" / "dump DB" is appended.
const node = (sdk) => ({ env: sdk ? { AGENTFS_SDK: sdk } : {}, write: ["node", path.join(compat, "write-fixture.mjs")], dump: ["node", path.join(compat, "dump.mjs")] });
const cli = (cmd) => ({ env: {}, write: [...cmd, "write"], dump: [...cmd, "dump"] });
const sdks = {
  "agentfs-sdk 0.6.4 (Turso)": node(null),
  typescript: node(process.env.XLANG_TS),
  // The same SDK with the engine as WebAssembly: the database in memory,
  // read from and written back to the file.
  "typescript-wasm": { ...node(process.env.XLANG_TS), env: { AGENTFS_SDK: process.env.XLANG_TS, AGENTFS_TRANSPORT: "wasm", AGENTFS_WASM: process.env.XLANG_WASM } },
  python: cli(process.env.XLANG_PY.split(" ")),
  rust: cli([process.env.XLANG_RS]),
  go: cli([process.env.XLANG_GO]),
};

function run(cmd, db, extraEnv) {
  const [exe, ...args] = cmd;
  return execFileSync(exe, [...args, db], { env: { ...process.env, ...extraEnv }, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "agentfs-xlang-"));
let failures = 0;
try {
  for (const [wname, w] of Object.entries(sdks)) {
    const db = path.join(tmp, `${wname.split(" ")[0]}.db`);
    run(w.write, db, w.env);
    for (const [rname, r] of Object.entries(sdks)) {
      // Opening a database writes to it (schema version, atime): read a copy.
      const copy = path.join(tmp, `copy-${Math.random().toString(36).slice(2)}.db`);
      for (const s of ["", "-wal"]) if (existsSync(db + s)) copyFileSync(db + s, copy + s);
      const got = JSON.parse(run(r.dump, copy, r.env));
      const ok = isDeepStrictEqual(got, expected);
      console.log(`${ok ? "ok  " : "FAIL"} written by ${wname.padEnd(26)} read by ${rname}`);
      if (!ok) {
        failures++;
        for (const k of Object.keys(expected)) {
          if (!isDeepStrictEqual(got[k], expected[k])) console.log(`     ${k} differs: got ${JSON.stringify(got[k]).slice(0, 400)}`);
        }
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
if (failures) {
  console.log(`${failures} of ${Object.keys(sdks).length ** 2} combinations differ`);
  process.exit(1);
}
console.log(`all ${Object.keys(sdks).length ** 2} writer/reader combinations read the fixture byte-identically`);
