// Runs examples/cloudflare's Worker in workerd, the Workers runtime (npm
// `workerd`, installed by the example's lockfile), with its Durable
// Objects' SQLite storage on a local directory, so a stop and a start on
// the same directory is an object evicted and brought back.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const EXAMPLE = join(ROOT, "examples", "cloudflare");
const WORKERD = join(EXAMPLE, "node_modules", "@cloudflare", "workerd-linux-64", "bin", "workerd");

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

/**
 * config writes workerd's configuration for the Worker bundles into dir
 * (each {name, file, modules: [[name, path, kind]], classes, compat}) and
 * returns its path. Every Durable Object class is SQLite-backed.
 */
export function config(dir, persist, port, workers) {
  mkdirSync(dir, { recursive: true });
  mkdirSync(persist, { recursive: true });
  const services = [];
  const defs = [];
  for (const [i, w] of workers.entries()) {
    const mods = w.modules.map(([name, path, kind]) => {
      const local = `m${i}-${name.replace(/[^A-Za-z0-9.]/g, "_")}`;
      copyFileSync(path, join(dir, local));
      return `(name = "${name}", ${kind} = embed "${local}")`;
    });
    services.push(`(name = "${w.name}", worker = .w${i})`);
    defs.push(`const w${i} :Workerd.Worker = (
  modules = [ ${mods.join(", ")} ],
  compatibilityDate = "2025-09-01",
  compatibilityFlags = [ ${(w.flags ?? []).map((f) => `"${f}"`).join(", ")} ],
  durableObjectNamespaces = [ ${w.classes.map((c) => `(className = "${c}", uniqueKey = "${w.name}-${c}", enableSql = true)`).join(", ")} ],
  durableObjectStorage = (localDisk = "disk"),
  bindings = [ ${w.bindings.map(([b, c]) => `(name = "${b}", durableObjectNamespace = "${c}")`).join(", ")} ],
);`);
  }
  const sockets = workers.map((w, i) => `(name = "s${i}", address = "127.0.0.1:${port + i}", http = (), service = "${w.name}")`);
  const text = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ ${services.join(", ")}, (name = "disk", disk = (path = "${persist}", writable = true)) ],
  sockets = [ ${sockets.join(", ")} ],
);
${defs.join("\n")}
`;
  const file = join(dir, "config.capnp");
  writeFileSync(file, text);
  return file;
}

/** The example's Worker: build/worker.js and the engine it imports. */
export function exampleWorker() {
  return {
    name: "example",
    modules: [
      ["build/worker.js", join(EXAMPLE, "build", "worker.js"), "esModule"],
      ["wasm/agentfs-workers.wasm", join(ROOT, "sdk-ts", "wasm", "agentfs-workers.wasm"), "wasm"],
    ],
    classes: ["Agent"],
    bindings: [["AGENT", "Agent"]],
  };
}

/**
 * start runs workerd on the configuration and resolves once port answers
 * HTTP; stop() ends it (SIGTERM, then SIGKILL) and resolves when it is gone.
 */
export async function start(file, port) {
  const child = spawn(WORKERD, ["serve", file, "--verbose"], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise((r) => child.on("exit", r));
  let gone = false;
  exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`workerd exited at start:\n${log}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`);
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    log: () => log,
    async stop() {
      if (!gone) {
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}
