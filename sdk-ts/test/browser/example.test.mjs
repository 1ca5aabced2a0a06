// examples/browser driven as a user would, in headless Chromium: open the
// agent, edit a file, make one, run shell commands, reload, download the
// database (read by the CLI), and a second tab refused.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ENGINE, launch, serve } from "./harness.mjs";

let server, ctx, profile;
before(async () => {
  server = await serve();
  profile = mkdtempSync(join(tmpdir(), "agentfs-chromium-"));
  ctx = await launch(profile);
});
after(async () => {
  await ctx?.close();
  await server?.stop();
  rmSync(profile, { recursive: true, force: true });
});

const opened = (page) => page.waitForFunction(() => /agent "demo" open/.test(document.getElementById("status").textContent), null, { timeout: 120000 });

test("examples/browser: edit, create, shell, reload, download, second tab", async (t) => {
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.setViewportSize({ width: 1100, height: 720 });
  await page.goto(server.origin + "/examples/browser/");
  await opened(page);

  // A new agent starts with a README; open it and edit it.
  await page.click('#tree li[data-path="/README.md"]');
  assert.match(await page.inputValue("#content"), /^# demo\n/);
  await page.fill("#content", "# demo\n\nedited in the page\n");
  await page.click("#save");
  await page.waitForFunction(() => document.getElementById("status").textContent === "saved /README.md");

  // A new file in a new directory.
  await page.fill("#new-path", "/notes/todo.md");
  await page.click("#new-file");
  await page.waitForFunction(() => document.getElementById("editing").textContent === "/notes/todo.md");
  await page.fill("#content", "buy milk\ncall ada\n");
  await page.click("#save");
  await page.waitForFunction(() => document.getElementById("status").textContent === "saved /notes/todo.md");

  // Shell commands run in the engine's sandbox over the agent's files.
  await page.fill("#command", "grep -rn milk / && echo done > /done.txt && wc -l /notes/todo.md");
  await page.click("#run");
  await page.waitForFunction(() => document.querySelector('#tree li[data-path="/done.txt"]'));
  const out = await page.textContent("#output");
  assert.match(out, /\$ grep -rn milk \//);
  assert.match(out, /\/notes\/todo\.md:1:buy milk/);
  assert.match(out, /2 \/notes\/todo\.md/);
  await page.fill("#command", "cat /nope");
  await page.click("#run");
  await page.waitForFunction(() => /\[exit 1\]/.test(document.getElementById("output").textContent));
  assert.deepEqual(await page.$$eval("#tree li", (lis) => lis.map((li) => li.textContent)), ["README.md", "done.txt", "notes/", "todo.md"]);

  const shots = process.env.AGENTFS_ARTIFACTS;
  if (shots) {
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: join(shots, "examples-browser.png") });
  }

  // A second tab on the same agent is refused while this one has it.
  const second = await ctx.newPage();
  await second.goto(server.origin + "/examples/browser/");
  await second.waitForFunction(() => /^EBUSY/.test(document.getElementById("status").textContent), null, { timeout: 120000 });
  await second.close();

  // After a reload the edits are still there.
  await page.reload();
  await opened(page);
  await page.click('#tree li[data-path="/README.md"]');
  assert.equal(await page.inputValue("#content"), "# demo\n\nedited in the page\n");

  // Download the database; the CLI reads it.
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
  assert.equal(download.suggestedFilename(), "demo.db");
  const dir = mkdtempSync(join(tmpdir(), "agentfs-dl-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, "demo.db");
  await download.saveAs(db);
  assert.equal(execFileSync(ENGINE, ["fs", db, "cat", "/notes/todo.md"], { encoding: "utf8" }), "buy milk\ncall ada\n");
  assert.equal(execFileSync(ENGINE, ["fs", db, "cat", "/done.txt"], { encoding: "utf8" }), "done\n");
  execFileSync(ENGINE, ["fsck", db]);
  assert.deepEqual(errors, []);
  await page.close();
});
