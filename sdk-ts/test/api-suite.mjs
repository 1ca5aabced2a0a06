// The API behaviour, run over each transport (stdio.test.mjs, http.test.mjs):
// agentfs-sdk 0.6.4's method shapes and node:fs style errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { failure } from "./helpers.mjs";

/** Asserts a node:fs style error. */
export function assertErrno(e, code, errno, syscall, path) {
  assert.ok(e instanceof Error, `not an Error: ${e}`);
  assert.equal(e.code, code, e.message);
  assert.equal(e.errno, -errno);
  if (syscall) assert.equal(e.syscall, syscall);
  if (path) assert.equal(e.path, path);
  assert.match(e.message, new RegExp(`^${code}: `));
}

export function apiSuite(name, openAgent) {
  test(`${name}: files, directories and errno codes`, async (t) => {
    const a = await openAgent(t);
    const fs = a.fs;
    // writeFile creates parents, as agentfs-sdk; strings, encodings and Buffers
    await fs.writeFile("/a/b/c.txt", "héllo");
    assert.equal(await fs.readFile("/a/b/c.txt", "utf8"), "héllo");
    assert.equal(await fs.readFile("/a/b/c.txt", { encoding: "utf8" }), "héllo");
    const buf = await fs.readFile("/a/b/c.txt");
    assert.ok(Buffer.isBuffer(buf));
    assert.deepEqual(buf, Buffer.from("héllo"));
    await fs.writeFile("/hex.bin", "00ff10", "hex");
    assert.deepEqual(await fs.readFile("/hex.bin"), Buffer.from([0, 255, 16]));
    await fs.writeFile("/b64.bin", "AAEC", { encoding: "base64" });
    assert.deepEqual(await fs.readFile("/b64.bin"), Buffer.from([0, 1, 2]));
    const bin = Buffer.alloc(70000);
    for (let i = 0; i < bin.length; i++) bin[i] = (i * 7) & 255;
    await fs.writeFile("/bin", bin);
    assert.ok((await fs.readFile("/bin")).equals(bin));
    await fs.writeFile("/empty", Buffer.alloc(0));
    assert.equal((await fs.readFile("/empty")).length, 0);
    await fs.appendFile("/empty", "xy");
    await fs.appendFile("/empty", "z");
    assert.equal(await fs.readFile("/empty", "utf8"), "xyz");

    // stat: agentfs-sdk's fields (seconds) and node:fs's extras
    const before = Math.floor(Date.now() / 1000) - 5;
    const s = await fs.stat("/a/b/c.txt");
    assert.equal(s.size, Buffer.byteLength("héllo"));
    assert.ok(s.isFile() && !s.isDirectory() && !s.isSymbolicLink());
    assert.equal(s.mode & 0o777, 0o644);
    assert.equal(s.nlink, 1);
    assert.ok(Number.isInteger(s.ino) && s.ino > 1);
    for (const k of ["atime", "mtime", "ctime"]) {
      assert.ok(Number.isInteger(s[k]) && s[k] >= before, `${k}=${s[k]}`);
      assert.equal(Math.floor(s[k + "Ms"] / 1000), s[k]);
    }
    const d = await fs.stat("/a/b");
    assert.ok(d.isDirectory());
    assert.equal(d.mode & 0o777, 0o755);

    // directories
    await fs.mkdir("/dir");
    assertErrno(await failure(() => fs.mkdir("/dir")), "EEXIST", 17, "mkdir", "/dir");
    assertErrno(await failure(() => fs.mkdir("/no/such")), "ENOENT", 2, "mkdir");
    await fs.mkdir("/p/q/r", { recursive: true });
    await fs.mkdir("/p/q/r", { recursive: true });
    await fs.writeFile("/dir/z", "1");
    await fs.writeFile("/dir/a", "2");
    await fs.mkdir("/dir/m");
    assert.deepEqual(await fs.readdir("/dir"), ["a", "m", "z"]);
    const plus = await fs.readdirPlus("/dir");
    assert.deepEqual(plus.map((e) => e.name), ["a", "m", "z"]);
    assert.ok(plus[1].stats.isDirectory() && plus[0].stats.isFile() && plus[0].stats.size === 1);
    assertErrno(await failure(() => fs.readdir("/nope")), "ENOENT", 2, "scandir", "/nope");
    assertErrno(await failure(() => fs.readdir("/dir/a")), "ENOTDIR", 20, "scandir");
    assertErrno(await failure(() => fs.rmdir("/dir")), "ENOTEMPTY", 39, "rmdir", "/dir");
    assertErrno(await failure(() => fs.readFile("/dir")), "EISDIR", 21);
    assertErrno(await failure(() => fs.readFile("/missing")), "ENOENT", 2, "open", "/missing");
    assertErrno(await failure(() => fs.stat("/missing")), "ENOENT", 2, "stat", "/missing");
    assertErrno(await failure(() => fs.unlink("/dir")), "EISDIR", 21, "unlink");
    assertErrno(await failure(() => fs.writeFile("/dir/a/x", "1")), "ENOTDIR", 20);
    await fs.rmdir("/dir/m");
    await fs.unlink("/dir/z");
    assert.deepEqual(await fs.readdir("/dir"), ["a"]);

    // rm
    assertErrno(await failure(() => fs.rm("/nope")), "ENOENT", 2, "rm");
    await fs.rm("/nope", { force: true });
    assertErrno(await failure(() => fs.rm("/p")), "EISDIR", 21, "rm");
    await fs.rm("/p", { recursive: true });
    assert.equal(await fs.exists("/p"), false);

    // rename, copyFile, links
    await fs.rename("/dir/a", "/dir/b");
    assert.deepEqual(await fs.readdir("/dir"), ["b"]);
    assertErrno(await failure(() => fs.rename("/nope", "/x")), "ENOENT", 2, "rename");
    await fs.copyFile("/dir/b", "/copy");
    assert.equal(await fs.readFile("/copy", "utf8"), "2");
    assertErrno(await failure(() => fs.copyFile("/nope", "/x")), "ENOENT", 2, "copyfile");
    await fs.symlink("/dir/b", "/link");
    assert.equal(await fs.readlink("/link"), "/dir/b");
    assert.ok((await fs.lstat("/link")).isSymbolicLink());
    assert.ok((await fs.stat("/link")).isFile());
    assert.equal(await fs.readFile("/link", "utf8"), "2");
    assertErrno(await failure(() => fs.symlink("/x", "/link")), "EEXIST", 17);
    assertErrno(await failure(() => fs.readlink("/copy")), "EINVAL", 22, "readlink");
    await fs.link("/copy", "/hard");
    assert.equal((await fs.stat("/copy")).nlink, 2);
    assert.equal((await fs.stat("/hard")).ino, (await fs.stat("/copy")).ino);

    // access, chmod, chown, utimes, truncate
    await fs.access("/copy");
    assertErrno(await failure(() => fs.access("/nope")), "ENOENT", 2, "access", "/nope");
    await fs.chmod("/copy", 0o600);
    assert.equal((await fs.stat("/copy")).mode & 0o777, 0o600);
    await fs.chown("/copy", 1000, 1001);
    const o = await fs.stat("/copy");
    assert.equal(o.uid, 1000);
    assert.equal(o.gid, 1001);
    await fs.chown("/copy", -1, 7);
    assert.equal((await fs.stat("/copy")).uid, 1000);
    await fs.utimes("/copy", 1000000000, new Date(1500000000500));
    const u = await fs.stat("/copy");
    assert.equal(u.atime, 1000000000);
    assert.equal(u.mtime, 1500000000);
    assert.equal(u.mtimeMs, 1500000000500);
    await fs.truncate("/copy", 5);
    assert.deepEqual(await fs.readFile("/copy"), Buffer.from([0x32, 0, 0, 0, 0]));

    const st = await fs.statfs();
    assert.ok(st.inodes > 5 && st.bytesUsed > 70000, JSON.stringify(st));
    await a.close();
  });

  test(`${name}: file handles`, async (t) => {
    const a = await openAgent(t);
    const fs = a.fs;
    await fs.writeFile("/f", "0123456789");
    const fh = await fs.open("/f");
    assert.deepEqual(await fh.pread(2, 3), Buffer.from("234"));
    assert.deepEqual(await fh.pread(8, 100), Buffer.from("89"));
    assert.equal((await fh.pread(100, 10)).length, 0);
    await fh.pwrite(12, Buffer.from("ab"));
    assert.deepEqual(await fs.readFile("/f"), Buffer.from("0123456789\0\0ab"));
    assert.equal((await fh.fstat()).size, 14);
    await fh.truncate(4);
    assert.equal(await fs.readFile("/f", "utf8"), "0123");
    await fh.fsync();
    // the handle outlives the name
    await fs.unlink("/f");
    assert.deepEqual(await fh.pread(0, 4), Buffer.from("0123"));
    await fh.close();
    assertErrno(await failure(() => fh.pread(0, 1)), "EBADF", 9);
    assertErrno(await failure(() => fs.open("/nope")), "ENOENT", 2, "open", "/nope");
    const w = await fs.open("/new", "w+");
    await w.pwrite(0, "fresh");
    assert.equal((await w.fstat()).size, 5);
    await w.close();
    assert.equal(await fs.readFile("/new", "utf8"), "fresh");
    assertErrno(await failure(() => fs.open("/new", "wx")), "EEXIST", 17, "open");
    await a.close();
  });

  test(`${name}: kv`, async (t) => {
    const a = await openAgent(t);
    await a.kv.set("user:1", { name: "ada", n: [1, 2] });
    await a.kv.set("user:2", "two");
    await a.kv.set("other", 3);
    await a.kv.set("user:1", { name: "ada", n: [1, 2, 3] });
    assert.deepEqual(await a.kv.get("user:1"), { name: "ada", n: [1, 2, 3] });
    assert.equal(await a.kv.get("nope"), undefined);
    assert.deepEqual(await a.kv.list("user:"), [
      { key: "user:1", value: { name: "ada", n: [1, 2, 3] } },
      { key: "user:2", value: "two" },
    ]);
    await a.kv.delete("user:2");
    await a.kv.delete("user:2");
    assert.deepEqual((await a.kv.list("user:")).map((e) => e.key), ["user:1"]);
    await assert.rejects(() => a.kv.set("k", undefined), TypeError);
    await a.close();
  });

  test(`${name}: tool calls`, async (t) => {
    const a = await openAgent(t);
    const tools = a.tools;
    const id = await tools.start("search", { q: "x" });
    assert.equal(typeof id, "number");
    let c = await tools.get(id);
    assert.equal(c.status, "pending");
    assert.deepEqual(c.parameters, { q: "x" });
    assert.equal(c.completed_at, undefined);
    await tools.success(id, { hits: 3 });
    c = await tools.get(id);
    assert.equal(c.status, "success");
    assert.deepEqual(c.result, { hits: 3 });
    assert.ok(c.completed_at >= c.started_at && c.duration_ms >= 0);
    const id2 = await tools.start("search");
    await tools.error(id2, "boom");
    c = await tools.get(id2);
    assert.equal(c.status, "error");
    assert.equal(c.error, "boom");
    assert.equal(c.parameters, undefined);
    const r = await tools.record("fetch", 100, 102, { url: "u" }, { ok: true });
    assert.deepEqual(await tools.get(r), {
      id: r, name: "fetch", parameters: { url: "u" }, result: { ok: true }, error: undefined,
      status: "success", started_at: 100, completed_at: 102, duration_ms: 2000,
    });
    const r2 = await tools.record("fetch", 200, 201, undefined, undefined, "timeout");
    assert.equal((await tools.get(r2)).status, "error");
    await tools.start("pending-only");
    assert.equal(await tools.get(999999), undefined);
    assert.deepEqual((await tools.getByName("fetch")).map((x) => x.id), [r2, r]);
    assert.deepEqual((await tools.getByName("fetch", 1)).map((x) => x.id), [r2]);
    assert.deepEqual((await tools.getRecent(100)).map((x) => x.id).includes(r), false);
    assert.deepEqual((await tools.getRecent(99)).map((x) => x.id).includes(r), true);
    assert.equal((await tools.getRecent(0, 2)).length, 2);
    const stats = await tools.getStats();
    assert.deepEqual(stats.map((s) => s.name), ["fetch", "search"]);
    assert.deepEqual(stats[0], { name: "fetch", total_calls: 2, successful: 1, failed: 1, avg_duration_ms: 1500 });
    assert.equal(stats[1].total_calls, 2);
    await a.close();
  });

  // record, get and the listings encode and decode their messages by
  // hand (src/toolwire.ts): every shape of value the engine keeps.
  test(`${name}: tool call values`, async (t) => {
    const a = await openAgent(t);
    const tools = a.tools;
    const params = { path: "/données/日本.txt", emoji: "🦀", nested: [1, { x: null }], big: 2 ** 52 };
    const r1 = await tools.record("読み込み ツール", -86400, 2 ** 33, params, "", "échec: ⏱");
    assert.deepEqual(await tools.get(r1), {
      id: r1, name: "読み込み ツール", parameters: params, result: "", error: "échec: ⏱",
      status: "error", started_at: -86400, completed_at: 2 ** 33, duration_ms: (2 ** 33 + 86400) * 1000,
    });
    const r2 = await tools.record("zero", 0, 0, null, 0);
    assert.deepEqual(await tools.get(r2), {
      id: r2, name: "zero", parameters: null, result: 0, error: undefined,
      status: "success", started_at: 0, completed_at: 0, duration_ms: 0,
    });
    // A lone surrogate is written as U+FFFD, as TextEncoder does.
    const r3 = await tools.record("x\ud800y", 5, 6);
    assert.equal((await tools.get(r3)).name, "x\ufffdy");
    const recent = await tools.getRecent(-100000);
    assert.deepEqual(recent.map((c) => c.id), [r3, r2, r1]);
    assert.deepEqual(recent[2], await tools.get(r1));
    assert.deepEqual((await tools.getByName("読み込み ツール")).map((c) => c.id), [r1]);
    assert.deepEqual(await tools.getByName("nobody"), []);
    await assert.rejects(() => tools.record("bad", 1.5e300, 1), RangeError);
    await assert.rejects(() => tools.get(0.5), RangeError);
    await a.close();
  });
}
