// The engine as WebAssembly (transport "wasm"): the whole API suite, and
// databases moving between it and the native engine as files and as bytes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { ENGINE, failure, tempDir } from "./helpers.mjs";
import { apiSuite } from "./api-suite.mjs";

const wasm = { transport: "wasm" };
const agentfs = (...args) => execFileSync(ENGINE, args, { encoding: "utf8" });
/** Creates the database .agentfs/ID.db in dir with the native CLI; returns its path. */
const nativeInit = (dir, id) => {
  execFileSync(ENGINE, ["init", id], { cwd: dir });
  return join(dir, ".agentfs", `${id}.db`);
};

apiSuite("wasm", async (t) => AgentFS.open({ ...wasm, path: join(tempDir(t), "a.db") }));

test("wasm: a file goes native -> wasm -> native, and passes fsck", async (t) => {
  const db = nativeInit(tempDir(t), "n");
  agentfs("fs", db, "write", "/from-native.txt", "native");
  agentfs("kv", db, "set", "who", '"native"');

  const a = await AgentFS.open({ ...wasm, path: db });
  assert.equal(a.transport.inProcess, true);
  assert.equal(await a.fs.readFile("/from-native.txt", "utf8"), "native");
  assert.equal(await a.kv.get("who"), "native");
  await a.fs.writeFile("/dir/from-wasm.txt", "wasm");
  await a.fs.symlink("/dir/from-wasm.txt", "/link");
  await a.kv.set("who", "wasm");
  await a.tools.record("search", 1000, 1002, { q: "x" }, { hits: 3 });
  await a.close();

  assert.equal(agentfs("fs", db, "cat", "/dir/from-wasm.txt"), "wasm");
  assert.match(agentfs("fs", db, "stat", "/link"), /File: \/link -> \/dir\/from-wasm\.txt/);
  assert.match(agentfs("kv", db, "get", "who"), /"wasm"/);
  assert.match(agentfs("timeline", db), /search/);
  agentfs("fsck", db); // exits non-zero on any inconsistency
});

test("wasm: by id, temporary, and from and to bytes", async (t) => {
  const dir = tempDir(t);
  const a = await AgentFS.open({ ...wasm, id: "w1", cwd: dir });
  await a.fs.writeFile("/x", "1");
  await a.close();
  assert.ok(existsSync(join(dir, ".agentfs", "w1.db")));
  assert.equal(agentfs("fs", join(dir, ".agentfs", "w1.db"), "cat", "/x"), "1");

  // Temporary: nothing on disk; the bytes are the database.
  const tmp = await AgentFS.open(wasm);
  await tmp.fs.writeFile("/doc.md", "# hi");
  await tmp.kv.set("n", 7);
  const bytes = await tmp.exportDatabase();
  await tmp.close();
  assert.equal(Buffer.from(bytes.subarray(0, 16)).toString("latin1"), "SQLite format 3\0");
  const file = join(dir, "exported.db");
  writeFileSync(file, bytes);
  assert.equal(agentfs("fs", file, "cat", "/doc.md"), "# hi");
  agentfs("fsck", file);

  // The native engine's file, as bytes, into a new in-memory agent.
  const again = await AgentFS.open({ ...wasm, data: readFileSync(file) });
  assert.equal(await again.kv.get("n"), 7);
  await again.fs.writeFile("/doc.md", "# changed");
  assert.equal(await again.fs.readFile("/doc.md", "utf8"), "# changed");
  await again.close();
  // data is copied: the file is unchanged.
  assert.equal(agentfs("fs", file, "cat", "/doc.md"), "# hi");
});

test("wasm: read-only, noCreate, and a file whose WAL holds changes", async (t) => {
  const dir = tempDir(t);
  const missing = await failure(() => AgentFS.open({ ...wasm, path: join(dir, "missing.db"), noCreate: true }));
  assert.equal(missing.code, "ERR_AGENTFS_NOT_FOUND", missing.message);
  const db = nativeInit(dir, "r");
  agentfs("fs", db, "write", "/f", "v");
  const before = readFileSync(db);
  const ro = await AgentFS.open({ ...wasm, path: db, readOnly: true });
  assert.equal(await ro.fs.readFile("/f", "utf8"), "v");
  assert.equal((await failure(() => ro.fs.writeFile("/g", "x"))).code, "EROFS");
  await ro.close();
  assert.ok(readFileSync(db).equals(before), "a read-only open rewrote the file");

  // Another engine holds the file with a change only in its WAL (no
  // checkpoint yet): a read-only open sees it, the file is left alone.
  const live = await AgentFS.open({ transport: "inprocess", path: db });
  await live.fs.writeFile("/g", "in the WAL");
  assert.ok(readFileSync(`${db}-wal`).length > 0);
  const peek = await AgentFS.open({ ...wasm, path: db, readOnly: true });
  assert.equal(await peek.fs.readFile("/g", "utf8"), "in the WAL");
  await peek.close();
  await live.close();
  // Rewritten at close: the new file stands alone (no stale -wal next to it).
  const rw = await AgentFS.open({ ...wasm, path: db });
  await rw.fs.writeFile("/h", "from wasm");
  await rw.close();
  assert.ok(!existsSync(`${db}-wal`) && !existsSync(`${db}-shm`));
  assert.equal(agentfs("fs", db, "cat", "/g"), "in the WAL");
  assert.equal(agentfs("fs", db, "cat", "/h"), "from wasm");
  agentfs("fsck", db);
});

test("wasm: exportDatabase is for the wasm transport only", async (t) => {
  const a = await AgentFS.open({ transport: "inprocess", path: join(tempDir(t), "x.db") });
  t.after(() => a.close());
  assert.match((await failure(() => a.exportDatabase())).message, /only the wasm transport/);
});

// Encryption at rest in the WebAssembly engine: for every cipher, an
// agent made encrypted by the wasm transport is, once closed, a file in
// the native engine's format (the CLI reads it with the key, which names
// no cipher: the file does), and a file the CLI changed with the key opens
// in wasm again. No key and a wrong key refuse with the CLI's one line.
const CIPHERS = { aes128gcm: 16, aes256gcm: 32, aegis128l: 16, aegis128x2: 16, aegis128x4: 16, aegis256: 32, aegis256x2: 32, aegis256x4: 32 };
test("wasm: encrypted agents, every cipher, wasm -> CLI -> wasm", async (t) => {
  const dir = tempDir(t);
  for (const [cipher, n] of Object.entries(CIPHERS)) {
    const key = "5a".repeat(n);
    const db = join(dir, `${cipher}.db`);
    const a = await AgentFS.open({ ...wasm, path: db, encryptionKey: key, cipher });
    await a.fs.writeFile("/secret.txt", `MARKER-WASM-${cipher}`);
    await a.kv.set("who", `MARKER-KV-${cipher}`);
    await a.close();
    const file = readFileSync(db);
    assert.equal(file.subarray(0, 5).toString(), "Turso", `${cipher}: the file is not in Turso's format`);
    for (const m of [`MARKER-WASM-${cipher}`, `MARKER-KV-${cipher}`, "SQLite format 3"]) {
      assert.equal(file.includes(m), false, `${cipher}: the file holds ${m} in the clear`);
    }
    const env = { ...process.env, AGENTFS_KEY: key };
    delete env.AGENTFS_CIPHER;
    const cli = (...args) => execFileSync(ENGINE, args, { encoding: "utf8", env });
    assert.equal(cli("fs", db, "cat", "/secret.txt"), `MARKER-WASM-${cipher}`);
    assert.match(cli("kv", db, "get", "who"), new RegExp(`MARKER-KV-${cipher}`));
    cli("fs", db, "write", "/from-cli.txt", `CLI-${cipher}`);
    cli("fsck", db);
    const b = await AgentFS.open({ ...wasm, path: db, encryptionKey: key });
    assert.equal(await b.fs.readFile("/from-cli.txt", "utf8"), `CLI-${cipher}`);
    assert.equal(await b.fs.readFile("/secret.txt", "utf8"), `MARKER-WASM-${cipher}`);
    await b.close();
  }
});

test("wasm: the CLI's encrypted agent opens in wasm; no key and a wrong key fail as in the CLI", async (t) => {
  const dir = tempDir(t);
  const key = "c3".repeat(32);
  const env = { ...process.env, AGENTFS_KEY: key, AGENTFS_CIPHER: "aes256gcm" };
  execFileSync(ENGINE, ["init", "enc"], { cwd: dir, env });
  const db = join(dir, ".agentfs", "enc.db");
  execFileSync(ENGINE, ["fs", db, "write", "/n.txt", "from the CLI"], { env });
  // A native agent still open: its change is in the -wal only, with
  // encrypted pages; the wasm engine applies it with the key.
  const live = await AgentFS.open({ transport: "inprocess", path: db, encryptionKey: key });
  await live.fs.writeFile("/wal.txt", "in the WAL");
  assert.ok(readFileSync(`${db}-wal`).length > 0);
  const peek = await AgentFS.open({ ...wasm, path: db, encryptionKey: key, readOnly: true });
  assert.equal(await peek.fs.readFile("/wal.txt", "utf8"), "in the WAL");
  await peek.close();
  await live.close();

  const a = await AgentFS.open({ ...wasm, path: db, encryptionKey: Buffer.from(key, "hex") });
  assert.equal(await a.fs.readFile("/n.txt", "utf8"), "from the CLI");
  assert.equal(a.info.path !== undefined, true);
  const exported = await a.exportDatabase();
  assert.equal(Buffer.from(exported.subarray(0, 5)).toString(), "Turso");
  await a.close();
  const before = readFileSync(db);

  const cliError = (e) => {
    try {
      execFileSync(ENGINE, ["fs", db, "cat", "/n.txt"], { encoding: "utf8", env: { ...process.env, ...e }, stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      return err.stderr.trim();
    }
    throw new Error("the CLI opened it");
  };
  // The CLI prints its error line, then a line with a hint: the SDK's
  // error is that first line.
  const wrongCli = cliError({ AGENTFS_KEY: "d4".repeat(32) }).split("\n");
  const wrong = await failure(() => AgentFS.open({ ...wasm, path: db, encryptionKey: "d4".repeat(32) }));
  assert.match(wrongCli[0], /wrong key: the database does not decrypt with it/);
  assert.equal(wrong.message, wrongCli[0].replace(/^agentfs: /, ""));
  const noneCli = cliError({ AGENTFS_KEY: "" }).split("\n");
  const none = await failure(() => AgentFS.open({ ...wasm, path: db }));
  assert.match(noneCli[0], /the database is encrypted: give its key/);
  assert.equal(none.message, noneCli[0].replace(/^agentfs: /, ""));
  assert.ok(readFileSync(db).equals(before), "refused opens changed the file");
  // From bytes too (data), as exportDatabase gave them.
  const c = await AgentFS.open({ ...wasm, data: exported, encryptionKey: key });
  assert.equal(await c.fs.readFile("/wal.txt", "utf8"), "in the WAL");
  await c.close();
});
