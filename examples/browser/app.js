// A small agent workspace: browse and edit an agent's files, run shell
// commands in the engine's in-process sandbox, download the database.
// Everything runs in this page: the engine is WebAssembly, the agent's
// database is kept in this origin's private file system (OPFS), so it is
// still there after a reload.
import { AgentFS } from "agentfs-sdk";

const $ = (id) => document.getElementById(id);
let agent; // the open AgentFS
let current; // path of the file in the editor

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

/** Every path under dir, depth first, with its kind. */
async function walk(dir, depth = 0, out = []) {
  for (const e of await agent.fs.readdirPlus(dir)) {
    const path = (dir === "/" ? "" : dir) + "/" + e.name;
    const kind = e.stats.isDirectory() ? "dir" : e.stats.isSymbolicLink() ? "link" : "file";
    out.push({ path, name: e.name, kind, depth, size: e.stats.size });
    if (kind === "dir") await walk(path, depth + 1, out);
  }
  return out;
}

async function refreshTree() {
  const tree = $("tree");
  tree.replaceChildren();
  for (const e of await walk("/")) {
    const li = document.createElement("li");
    li.className = e.kind + (e.path === current ? " selected" : "");
    li.style.paddingLeft = `${4 + e.depth * 14}px`;
    li.textContent = e.kind === "dir" ? `${e.name}/` : e.name;
    li.dataset.path = e.path;
    li.title = e.kind === "file" ? `${e.path} (${e.size} bytes)` : e.path;
    if (e.kind === "file") li.onclick = () => openFile(e.path);
    tree.append(li);
  }
}

async function openFile(path) {
  const text = await agent.fs.readFile(path, "utf8");
  current = path;
  $("editing").textContent = path;
  $("content").value = text;
  for (const id of ["content", "save", "delete"]) $(id).disabled = false;
  await refreshTree();
}

async function open(id) {
  if (agent) await agent.close();
  agent = undefined;
  current = undefined;
  status(`opening ${id}…`);
  try {
    agent = await AgentFS.open({ id });
  } catch (e) {
    // EBUSY: another tab has this agent open.
    status(`${e.code}: ${e.message}`, true);
    return;
  }
  if ((await agent.fs.readdir("/")).length === 0) {
    await agent.fs.writeFile("/README.md", `# ${id}\n\nThis agent lives in your browser. Edit me, or try the shell:\n\n    grep -rn agent /\n`);
  }
  for (const id of ["download", "command", "run"]) $(id).disabled = false;
  $("editing").textContent = "No file open";
  $("content").value = "";
  for (const id of ["content", "save", "delete"]) $(id).disabled = true;
  await refreshTree();
  status(`agent "${id}" open (kept in this browser)`);
}

$("open-form").onsubmit = (ev) => {
  ev.preventDefault();
  void open($("agent-id").value.trim() || "demo");
};

$("save").onclick = async () => {
  await agent.fs.writeFile(current, $("content").value);
  status(`saved ${current}`);
  await refreshTree();
};

$("delete").onclick = async () => {
  await agent.fs.unlink(current);
  status(`deleted ${current}`);
  current = undefined;
  $("editing").textContent = "No file open";
  $("content").value = "";
  for (const id of ["content", "save", "delete"]) $(id).disabled = true;
  await refreshTree();
};

$("new-form").onsubmit = async (ev) => {
  ev.preventDefault();
  const path = $("new-path").value.trim();
  if (!path.startsWith("/")) return status("a new file's path starts with /", true);
  try {
    await agent.fs.writeFile(path, "", { flag: "wx" });
  } catch (e) {
    return status(`${e.code}: ${e.message}`, true);
  }
  $("new-path").value = "";
  await openFile(path);
};

$("shell-form").onsubmit = async (ev) => {
  ev.preventDefault();
  const cmd = $("command").value;
  if (!cmd.trim()) return;
  const out = $("output");
  out.textContent += `$ ${cmd}\n`;
  const r = await agent.exec(cmd);
  out.textContent += r.stdout + r.stderr + (r.exitCode !== 0 ? `[exit ${r.exitCode}]\n` : "");
  out.scrollTop = out.scrollHeight;
  $("command").value = "";
  await refreshTree();
  if (current && (await agent.fs.exists(current))) $("content").value = await agent.fs.readFile(current, "utf8");
};

$("download").onclick = async () => {
  const bytes = await agent.exportDatabase();
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([bytes], { type: "application/vnd.sqlite3" }));
  a.download = `${$("agent-id").value.trim() || "demo"}.db`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  status(`downloaded ${a.download} (${bytes.length} bytes): open it with \`agentfs fs ${a.download} ls /\``);
};

void open($("agent-id").value);
