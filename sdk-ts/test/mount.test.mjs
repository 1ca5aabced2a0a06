// agent.mountSandbox(): the agent's files on a real FUSE mount (served by
// `agentfs mount`), used by real programs (git, tar), then back in the
// agent. Fails instead of skipping when AGENTFS_REQUIRE_FUSE=1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { AgentFS } from "../dist/index.js";
import { tempDir } from "./helpers.mjs";

function fuseMissing() {
  if (process.platform !== "linux") return "FUSE mounts are Linux only";
  if (!existsSync("/dev/fuse")) return "no /dev/fuse";
  return "";
}

const why = fuseMissing();
if (why && process.env.AGENTFS_REQUIRE_FUSE === "1") throw new Error(`FUSE unavailable: ${why} (AGENTFS_REQUIRE_FUSE=1)`);

function sh(dir, script) {
  return execFileSync("sh", ["-c", script], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, HOME: dir, GIT_CONFIG_NOSYSTEM: "1", GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" },
  });
}

for (const transport of ["process", "inprocess"]) {
  test(`${transport}: mountSandbox hands the agent to git and tar, and back`, { skip: why || false }, async (t) => {
    const a = await AgentFS.open({ path: join(tempDir(t), "a.db"), transport });
    t.after(() => a.close());
    await a.fs.writeFile("/src/hello.txt", "hello\n");
    const m = await a.mountSandbox();
    const home = tempDir(t);
    sh(m.path, `HOME=${home} git init -q -b main && HOME=${home} git add -A && HOME=${home} git commit -qm first && tar cf snap.tar src`);
    assert.equal(sh(m.path, `HOME=${home} git status --porcelain --untracked-files=no`), "");
    assert.equal(sh(m.path, "tar tf snap.tar"), "src/\nsrc/hello.txt\n");
    await m.unmount();
    assert.ok(!existsSync(m.path), "the temporary mount point is removed");
    await m.unmount(); // a second unmount does nothing

    // Back in the agent (the engine of this SDK reads what the mount wrote).
    assert.equal(await a.fs.readFile("/.git/HEAD", "utf8"), "ref: refs/heads/main\n");
    assert.ok((await a.fs.stat("/snap.tar")).size >= 512);
    assert.equal((await a.exec("ls /.git/refs/heads")).stdout, "main\n");

    // Out again on the caller's directory; close() unmounts it.
    const dir = join(tempDir(t), "mnt");
    mkdirSync(dir);
    const m2 = await a.mountSandbox({ dir });
    assert.equal(m2.path, dir);
    assert.equal(sh(dir, `HOME=${home} git log --format=%s && cat src/hello.txt`), "first\nhello\n");
    await a.close();
    assert.deepEqual(readdirSync(dir), [], "close() unmounted the caller's directory and left it");
  });
}

test("http: mountSandbox is refused with what to do instead", { skip: why || false }, async (t) => {
  const { serveHttp } = await import("./helpers.mjs");
  const a = await AgentFS.open({ id: "m", url: await serveHttp(t, { data: tempDir(t) }) });
  t.after(() => a.close());
  await assert.rejects(a.mountSandbox(), /agentfs mount/);
});

test("a program that exits without unmounting leaves no mount behind", { skip: why || false }, async (t) => {
  const db = join(tempDir(t), "a.db");
  const dir = join(tempDir(t), "mnt");
  mkdirSync(dir);
  const index = new URL("../dist/index.js", import.meta.url).href;
  // The child mounts, writes through the mount, and ends with neither
  // unmount() nor close().
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", `
    import { AgentFS } from ${JSON.stringify(index)};
    import { writeFileSync } from "node:fs";
    const a = await AgentFS.open({ path: ${JSON.stringify(db)} });
    const m = await a.mountSandbox({ dir: ${JSON.stringify(dir)} });
    writeFileSync(m.path + "/left.txt", "written through the mount\\n");
    console.log("mounted");
    process.exit(0);
  `], { encoding: "utf8" });
  assert.equal(out, "mounted\n");
  const mounted = execFileSync("cat", ["/proc/self/mountinfo"], { encoding: "utf8" }).split("\n").some((l) => l.split(" ")[4] === dir);
  assert.equal(mounted, false, "the mount outlived the program that made it");
  const a = await AgentFS.open({ path: db });
  t.after(() => a.close());
  assert.equal(await a.fs.readFile("/left.txt", "utf8"), "written through the mount\n");
});
