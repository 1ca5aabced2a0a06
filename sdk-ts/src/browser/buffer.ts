// Injected by the browser build (scripts/build-browser.mjs) wherever the
// SDK names the global Buffer: the API returns Buffers as under Node
// (readFile without an encoding), so browser code written against
// agentfs-sdk's Node API behaves the same.
export { Buffer } from "buffer";
