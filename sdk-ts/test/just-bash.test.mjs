// agentfs-sdk/just-bash: the real just-bash (npm, 3.4.2) runs scripts over
// an agent's filesystem; what they write is in the agent.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { Bash } from "just-bash";
import { AgentFS } from "agentfs-sdk";
import { agentfs, AgentFsWrapper } from "agentfs-sdk/just-bash";
import { tempDir } from "./helpers.mjs";

test("just-bash: a script writes, lists and greps an agent's files", async (t) => {
  const agent = await AgentFS.open({ path: join(tempDir(t), "jb.db") });
  t.after(() => agent.close());
  await agent.fs.writeFile("/notes/seed.txt", "alpha\nbeta\n");
  const fs = await agentfs(agent);
  assert.ok(fs instanceof AgentFsWrapper);
  const bash = new Bash({ fs, cwd: "/" });
  const r = await bash.exec(`
    mkdir -p /work/logs
    echo "error: disk full" > /work/logs/a.log
    printf 'ok\\nerror: timeout\\nok\\n' > /work/logs/b.log
    echo "gamma" >> /notes/seed.txt
    cd /work && ls logs
    grep -rn error /work/logs | sort
    grep -c . /notes/seed.txt
    cat /nope 2>&1 || echo "missing:$?"
  `);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(
    r.stdout,
    "a.log\nb.log\n/work/logs/a.log:1:error: disk full\n/work/logs/b.log:2:error: timeout\n3\ncat: /nope: No such file or directory\nmissing:1\n",
  );
  // The agent holds what the script wrote.
  assert.equal(await agent.fs.readFile("/work/logs/a.log", "utf8"), "error: disk full\n");
  assert.equal(await agent.fs.readFile("/notes/seed.txt", "utf8"), "alpha\nbeta\ngamma\n");
  assert.deepEqual(await agent.fs.readdir("/work/logs"), ["a.log", "b.log"]);
});

test("just-bash: mount point, cp -r, mv, rm -rf, symlinks and realpath through the adapter", async (t) => {
  const agent = await AgentFS.open({ path: join(tempDir(t), "jb2.db") });
  t.after(() => agent.close());
  const fs = await agentfs(agent, "/agent");
  assert.equal(fs.getMountPoint(), "/agent");
  const bash = new Bash({ fs, cwd: "/agent" });
  const r = await bash.exec(`
    mkdir -p /agent/src/sub && echo one > /agent/src/sub/1.txt
    cp -r /agent/src /agent/copy
    mv /agent/copy/sub/1.txt /agent/copy/sub/moved.txt
    ln -s /agent/src/sub /agent/link
    cat /agent/link/1.txt
    ls /agent/copy/sub
    rm -rf /agent/src
    ls /agent
  `);
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, "one\nmoved.txt\ncopy\nlink\n");
  // Inside the agent the mount point is its root.
  assert.equal(await agent.fs.readFile("/copy/sub/moved.txt", "utf8"), "one\n");
  // An absolute link target is stored as the agent's path, and read back as just-bash's.
  assert.equal(await agent.fs.readlink("/link"), "/src/sub");
  assert.equal(await fs.readlink("/agent/link"), "/agent/src/sub");
  await agent.fs.mkdir("/real");
  await agent.fs.symlink("/real", "/alias");
  assert.equal(await fs.realpath("/agent/alias"), "/agent/real");
  const e = await fs.cp("/agent/real", "/agent/r2").catch((x) => x);
  assert.equal(e.code, "EISDIR");
  await assert.rejects(fs.readFile("/agent/none"), (x) => x.code === "ENOENT");
});
