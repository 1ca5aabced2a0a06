// agentfs-sdk 0.6.4's browser build over @tursodatabase/database-wasm 0.7.2
// (Turso's WebAssembly database, OPFS through its own worker), bundled by
// bench/browser.mjs with esbuild for the side-by-side run.
import { connect } from "@tursodatabase/database-wasm/bundle";
import { AgentFS } from "turso-agentfs";

globalThis.turso = { connect, AgentFS };
