// Serves the example on http://127.0.0.1:8080 (PORT to change): this
// folder at /, and the agentfs-sdk package as an app would ship it at
// /agentfs-sdk/ (its browser build in dist/, the engine in wasm/, taken
// from the checkout's sdk-ts/dist and bin/). http://127.0.0.1 is a secure
// context, which OPFS and Web Locks need; so is https, not plain http on
// another host.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..");
const types = { ".js": "text/javascript", ".html": "text/html", ".css": "text/css", ".wasm": "application/wasm" };

function fileFor(path) {
  const rel = normalize(path).replace(/^\/+/, "");
  if (rel.startsWith("..")) return undefined;
  if (rel === "agentfs-sdk/wasm/agentfs.wasm") return process.env.AGENTFS_WASM || join(root, "bin", "agentfs.wasm");
  if (rel === "agentfs-sdk/wasm/wasm_exec.js") return join(dirname(process.env.AGENTFS_WASM || join(root, "bin", "agentfs.wasm")), "wasm_exec.js");
  if (rel.startsWith("agentfs-sdk/dist/")) return join(root, "sdk-ts", rel.slice("agentfs-sdk/".length));
  return join(here, rel === "" ? "index.html" : rel);
}

const server = createServer(async (req, res) => {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const file = fileFor(path);
  try {
    if (!file) throw new Error("outside");
    const body = await readFile(file);
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    res.end(body);
  } catch {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`not found: ${path}\n(build first: go tool task build, and npm run build in sdk-ts)`);
  }
});
const port = Number(process.env.PORT ?? 8080);
server.listen(port, "127.0.0.1", () => console.log(`AgentFS browser example: http://127.0.0.1:${server.address().port}/`));
