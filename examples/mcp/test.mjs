// Drives `agentfs serve mcp` with a real MCP client, the MCP Inspector in
// CLI mode (tests/mcp pins it), started exactly as the configurations of
// this folder say: .mcp.json (Claude Code, the agent by id) over stdio,
// claude_desktop_config.json (by absolute path), and the streamable HTTP
// transport. Then the CLI's timeline shows the calls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const inspector = join(here, "..", "..", "tests", "mcp", "node_modules", ".bin", "mcp-inspector");

function inspect(cwd, target, ...args) {
  const out = execFileSync(inspector, ["--cli", ...target, ...args], { cwd, encoding: "utf8" });
  return JSON.parse(out);
}

function call(cwd, target, tool, toolArgs) {
  const args = ["--method", "tools/call", "--tool-name", tool];
  for (const [k, v] of Object.entries(toolArgs)) args.push("--tool-arg", `${k}=${v}`);
  const r = inspect(cwd, target, ...args);
  assert.notEqual(r.isError, true, JSON.stringify(r));
  return r.structuredContent;
}

test("an MCP client uses the agent through the configurations of this folder", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-mcp-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync("agentfs", ["init", "notes"], { cwd: dir });

  // Claude Code's project configuration: the agent by id, in the project.
  const code = JSON.parse(readFileSync(join(here, ".mcp.json"), "utf8")).mcpServers.agentfs;
  const stdio = [code.command, ...code.args];
  const names = inspect(dir, stdio, "--method", "tools/list").tools.map((x) => x.name);
  for (const n of ["read_file", "write_file", "readdir", "exec", "kv_set", "timeline"]) assert.ok(names.includes(n), n);

  assert.equal(call(dir, stdio, "write_file", { path: "/notes/mcp.md", content: "MCP puts the agent in any client", create_dirs: "true" }).written, 32);
  const x = call(dir, stdio, "exec", { command: "grep -c agent /notes/mcp.md && ls /notes" });
  assert.equal(x.exit_code, 0);
  assert.equal(x.stdout, "1\nmcp.md\n");

  // Claude Desktop's configuration: an absolute path and a limits profile.
  const desktop = JSON.parse(readFileSync(join(here, "claude_desktop_config.json"), "utf8")).mcpServers.agentfs;
  const db = join(dir, ".agentfs", "notes.db");
  const byPath = [desktop.command, ...desktop.args.map((a) => a.replace("/ABSOLUTE/PATH/TO/.agentfs/notes.db", db))];
  assert.equal(call(dir, byPath, "read_file", { path: "/notes/mcp.md" }).content, "MCP puts the agent in any client");
  const res = inspect(dir, byPath, "--method", "resources/read", "--uri", "agentfs:///notes/mcp.md");
  assert.equal(res.contents[0].text, "MCP puts the agent in any client");

  // Streamable HTTP: one server, clients connect by URL.
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const srv = spawn("agentfs", ["serve", "mcp", db, "--http", `127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => srv.kill("SIGTERM"));
  await new Promise((resolve, reject) => {
    let log = "";
    const on = (d) => {
      log += d;
      if (log.includes(String(port))) resolve();
    };
    srv.stdout.on("data", on);
    srv.stderr.on("data", on);
    srv.on("exit", (c) => reject(new Error(`serve mcp --http exited ${c}: ${log}`)));
  });
  const url = [`http://127.0.0.1:${port}/mcp`];
  call(dir, url, "kv_set", { key: "source", value: "http" });
  assert.equal(call(dir, url, "kv_get", { key: "source" }).value, "http");
  srv.kill("SIGTERM");
  await new Promise((r) => (srv.exitCode !== null ? r() : srv.on("exit", r)));

  // Every call is in the agent's tool-call log as mcp:<tool>.
  const tl = JSON.parse(execFileSync("agentfs", ["timeline", db, "--format", "json"], { encoding: "utf8" }));
  const logged = tl.map((c) => c.name).reverse();
  assert.deepEqual(logged, ["mcp:write_file", "mcp:exec", "mcp:read_file", "mcp:kv_set", "mcp:kv_get"]);
});
