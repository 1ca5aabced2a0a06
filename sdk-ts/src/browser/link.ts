// The browser build's replacement for ../link.ts (scripts/build-browser.mjs
// redirects the import): a page has no processes, so only the in-process
// link exists; a child-process engine is refused with a clear error.

import { kindError } from "../errors.js";

export { LocalLink, type Addon, type Link, type LinkEvents } from "../locallink.js";

export class ChildLink {
  constructor(engine: string) {
    throw kindError("UNAVAILABLE", `cannot start the agentfs engine ${engine} as a process in a browser: the browser build runs the engine as WebAssembly (AgentFS.open({ id }))`);
  }
}
