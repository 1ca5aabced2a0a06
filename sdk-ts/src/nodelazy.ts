// Node built-ins loaded at their first use instead of at import. node:crypto
// and node:child_process (with the stream modules under them) take about
// 3 ms to load, a tenth of this package's cold start (node started to the
// first writeFile done), and the default transport, the engine in this
// process, needs neither: only the "process" transport (spawn), the WASM
// engine's temporary names (randomUUID) and mountSandbox (execFile) do.
// node:fs is loaded already, but an ES import of it builds its module
// facade, which reads every export, lazy ones included: fs.ReadStream
// loads the stream modules (0.6 ms); require() returns it as it is.
// require() of a built-in is synchronous, so callers stay as they were.

import { createRequire } from "node:module";

let req: NodeJS.Require | undefined;

function load<T>(name: string): T {
  req ??= createRequire(import.meta.url);
  return req(name) as T;
}

/** node:fs, without its ES module facade. */
export function fs(): typeof import("node:fs") {
  return load("node:fs");
}

/** node:child_process, loaded now. */
export function childProcess(): typeof import("node:child_process") {
  return load("node:child_process");
}

/** crypto.randomUUID from node:crypto, loaded now. */
export function randomUUID(): string {
  return load<typeof import("node:crypto")>("node:crypto").randomUUID();
}
