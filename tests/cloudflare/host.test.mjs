// sdk-ts src/cloudflare/host.ts's call transaction (SqlHost.inCall), on a
// stand-in for ctx.storage that logs what it is asked: the engine's side
// (core/store/driver_host.go: begin, exec, end) is played here by hand, so
// each path is taken on purpose, the rare ones too (a call that goes on
// after its write rolled back is run again). The engine over real storage
// is in transactions.test.mjs and example.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXAMPLE, ROOT } from "./workerd.mjs";

const dir = mkdtempSync(join(tmpdir(), "agentfs-cf-host-"));
execFileSync(join(EXAMPLE, "node_modules", ".bin", "esbuild"), [
  join(ROOT, "sdk-ts", "src", "cloudflare", "host.ts"), "--bundle", "--format=esm", "--platform=neutral", "--target=es2022",
  `--outfile=${join(dir, "host.mjs")}`, "--log-level=warning",
], { stdio: "inherit" });
const { sqlHost } = await import(join(dir, "host.mjs"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** A storage whose transactions nest and whose statements are logged. */
function fakeStorage() {
  const log = [];
  const storage = {
    sql: {
      exec(q) {
        log.push(q);
        return { columnNames: [], raw: () => [][Symbol.iterator]() };
      },
      databaseSize: 0,
    },
    transactionSync(fn) {
      log.push("tx {");
      try {
        const r = fn();
        log.push("} commit");
        return r;
      } catch (e) {
        log.push("} rollback");
        throw e;
      }
    },
  };
  return { storage, log };
}

// One statement as the engine runs it: its text numbered, no arguments.
const run = (h, q) => h.exec(h.prepare(q), 0);

test("a call's write takes the call's transaction over and commits with it", () => {
  const { storage, log } = fakeStorage();
  const h = sqlHost(storage);
  let calls = 0;
  const r = h.inCall(() => {
    calls++;
    assert.equal(h.begin(), 1);
    assert.equal(run(h, "INSERT 1"), 8); // 0 columns, 0 rows
    assert.equal(h.end(true), 0);
    // A second write of the same call nests a transaction of its own.
    assert.equal(h.begin(), 0);
    return "answer";
  });
  assert.equal(r, "answer");
  assert.equal(calls, 1);
  assert.deepEqual(log, ["tx {", "INSERT 1", "} commit"]);
  // Outside a call there is nothing to take over.
  assert.equal(h.begin(), 0);
  assert.equal(h.end(true), -1);
});

test("a write that rolls back undoes the call, whose answer stands when nothing else ran", () => {
  const { storage, log } = fakeStorage();
  const h = sqlHost(storage);
  let calls = 0;
  const r = h.inCall(() => {
    calls++;
    assert.equal(h.begin(), 1);
    run(h, "INSERT 1");
    assert.equal(h.end(false), 0);
    return "ENOSPC";
  });
  assert.equal(r, "ENOSPC");
  assert.equal(calls, 1);
  assert.deepEqual(log, ["tx {", "INSERT 1", "} rollback"]);
});

test("a call that goes on after its write rolled back is refused, undone and run again", () => {
  const { storage, log } = fakeStorage();
  const h = sqlHost(storage);
  const seen = [];
  const r = h.inCall(() => {
    const took = h.begin();
    seen.push(took);
    if (took === 1) {
      run(h, "INSERT 1");
      h.end(false);
      // Refused: the storage cannot roll back at once.
      assert.match(run(h, "SELECT 2"), /rolled back/);
      assert.equal(h.begin(), -1);
      return "first";
    }
    // Run again: transactions of its own (tx), nothing to take over.
    assert.equal(h.tx(() => run(h, "INSERT 3") === 8), null);
    return "second";
  });
  assert.equal(r, "second");
  assert.deepEqual(seen, [1, 0]);
  assert.deepEqual(log, ["tx {", "INSERT 1", "} rollback", "tx {", "INSERT 3", "} commit"]);
});

test("a write still open when the call returns is undone and the call run again", () => {
  const { storage, log } = fakeStorage();
  const h = sqlHost(storage);
  let calls = 0;
  h.inCall(() => {
    if (calls++ === 0) {
      h.begin();
      run(h, "INSERT 1");
    }
  });
  assert.equal(calls, 2);
  assert.deepEqual(log, ["tx {", "INSERT 1", "} rollback"]);
});

test("a call made inside a call runs in the outer one's transaction", () => {
  const { storage, log } = fakeStorage();
  const h = sqlHost(storage);
  h.inCall(() => h.inCall(() => run(h, "INSERT 1")));
  assert.deepEqual(log, ["tx {", "INSERT 1", "} commit"]);
});
