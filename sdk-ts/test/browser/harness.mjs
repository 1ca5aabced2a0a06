// The browser suite's real components: Debian's chromium driven by
// playwright-core (no browser download: executablePath), and a static
// server on 127.0.0.1 serving the built SDK (dist/browser.js), the engine
// (bin/agentfs.wasm with Go's wasm_exec.js), the test pages and
// examples/browser. OPFS and Web Locks need a secure context, which
// http://127.0.0.1 is.
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const SDK = join(here, "..", "..");
export const ROOT = join(SDK, "..");
export const WASM = process.env.AGENTFS_WASM || join(ROOT, "bin", "agentfs.wasm");
export const ENGINE = process.env.AGENTFS_BIN || join(ROOT, "bin", "agentfs");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json" };

/** Where a URL path is served from. */
function fileFor(path) {
  // The package's layout: dist/ and wasm/ side by side, at / (the test
  // pages) and at /agentfs-sdk/ (the example's import map).
  if (path === "/wasm/agentfs.wasm" || path === "/agentfs-sdk/wasm/agentfs.wasm") return WASM;
  if (path === "/wasm/wasm_exec.js" || path === "/agentfs-sdk/wasm/wasm_exec.js") return join(dirname(WASM), "wasm_exec.js");
  const mounts = [
    ["/dist/", join(SDK, "dist")],
    ["/agentfs-sdk/dist/", join(SDK, "dist")],
    ["/test/", join(here, "pages")],
    ["/examples/browser/", join(ROOT, "examples", "browser")],
  ];
  for (const [prefix, dir] of mounts) {
    if (path.startsWith(prefix)) {
      const rel = normalize(path.slice(prefix.length));
      if (rel.startsWith("..")) return undefined;
      return join(dir, rel === "." || rel === "" ? "index.html" : rel);
    }
  }
  return undefined;
}

/** Starts the static server on 127.0.0.1 (a free port); resolves with its origin and a stop function. */
export async function serve() {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = fileFor(path.endsWith("/") ? path + "index.html" : path);
    try {
      if (!file) throw new Error("not found");
      const body = await readFile(file);
      // The engine may be cached (Chromium then reuses its compiled code
      // on the next load); pages and the SDK are always fresh.
      const cache = extname(file) === ".wasm" ? "max-age=3600" : "no-store";
      res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream", "cache-control": cache });
      res.end(body);
    } catch {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`not found: ${path}`);
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return { origin, stop: () => new Promise((r) => server.close(r)) };
}

/**
 * Launches headless chromium with a profile directory of its own (so OPFS
 * survives closing and relaunching it with the same dir). V8 runs the
 * engine with Liftoff only: optimizing the 35 MB module in the background
 * competes for a loaded 2-core machine's CPU and makes a page's engine
 * start 10-20 s instead of ~4 s (bench/wasm-coldstart.mjs); the suite
 * tests behaviour, not speed.
 */
export async function launch(userDataDir, extraArgs = []) {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM`);
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--js-flags=--liftoff-only", ...extraArgs],
  });
}

/** A fresh profile directory, removed when the test ends. */
export function profileDir(t) {
  const d = mkdtempSync(join(tmpdir(), "agentfs-chromium-"));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Opens path on the server in a new page and waits until the SDK is loaded (window.sdk). */
export async function openPage(ctx, origin, path = "/test/index.html") {
  const page = await ctx.newPage();
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  await page.goto(origin + path);
  await page.waitForFunction(() => globalThis.sdkReady === true || globalThis.sdkError);
  const err = await page.evaluate(() => globalThis.sdkError && String(globalThis.sdkError));
  if (err) throw new Error(`the page could not load the SDK: ${err}`);
  return page;
}
