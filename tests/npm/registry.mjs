// A real npm registry for the tests and the benchmark: Verdaccio (pinned in
// this directory's package.json) on 127.0.0.1 at a free port, its storage
// in a temporary directory. Our names (agentfs-sdk, @agentfs-sdk/*) live
// only there: no uplink, so nothing of ours can come from the internet.
// Every other package (@bufbuild/protobuf) is proxied from npmjs.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * startRegistry starts Verdaccio and returns its url, the environment
 * for npm commands against it (a user config with a publish token, a
 * fresh npm cache, no AGENTFS_* variables, no agentfs on PATH), and stop().
 */
export async function startRegistry() {
  const dir = mkdtempSync(join(tmpdir(), "agentfs-npm-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `storage: ${join(dir, "storage")}
auth:
  htpasswd:
    file: ${join(dir, "htpasswd")}
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
    timeout: 60s
packages:
  "agentfs-sdk":
    access: $all
    publish: $authenticated
  "@agentfs-sdk/*":
    access: $all
    publish: $authenticated
  "**":
    access: $all
    proxy: npmjs
# The linux-x64 engine package carries two ~50 MiB binaries.
max_body_size: 500mb
web:
  enable: false
log: { type: stdout, format: pretty, level: warn }
`,
  );
  const bin = join(HERE, "node_modules", "verdaccio", "bin", "verdaccio");
  if (!existsSync(bin)) throw new Error(`no Verdaccio at ${bin}: run npm ci in tests/npm`);
  const child = spawn(process.execPath, [bin, "--config", config, "--listen", `127.0.0.1:${port}`], { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (b) => (log += b));
  child.stderr.on("data", (b) => (log += b));
  const stop = () => {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Ready when it answers its ping; a loaded machine may take a while.
    for (let i = 0; ; i++) {
      if (child.exitCode !== null) throw new Error(`verdaccio exited ${child.exitCode}: ${log}`);
      try {
        if ((await fetch(`${url}-/ping`)).ok) break;
      } catch {
        // not listening yet
      }
      if (i > 600) throw new Error(`verdaccio did not answer on ${url} in 60 s: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // A user, for the token npm publish wants.
    const res = await fetch(`${url}-/user/org.couchdb.user:agentfs`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "agentfs", password: "agentfs-test-password" }),
    });
    if (!res.ok) throw new Error(`verdaccio adduser: ${res.status} ${await res.text()}`);
    const { token } = await res.json();
    const npmrc = join(dir, "npmrc");
    writeFileSync(npmrc, `registry=${url}\n//127.0.0.1:${port}/:_authToken=${token}\naudit=false\nfund=false\nupdate-notifier=false\n`);
    mkdirSync(join(dir, "cache"));
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith("AGENTFS_") || k.startsWith("npm_")) delete env[k];
    env.npm_config_userconfig = npmrc;
    env.npm_config_cache = join(dir, "cache");
    // The engine must come from the packages, not from a PATH of the host.
    env.PATH = (env.PATH ?? "")
      .split(delimiter)
      .filter((d) => d && !existsSync(join(d, "agentfs")))
      .join(delimiter);
    return { url, dir, env, stop, log: () => log };
  } catch (e) {
    stop();
    throw e;
  }
}

/** A fresh npm cache directory in the registry's temporary directory (for timing cold installs). */
export function freshCache(reg, name) {
  const c = join(reg.dir, `cache-${name}`);
  rmSync(c, { recursive: true, force: true });
  mkdirSync(c);
  return c;
}

