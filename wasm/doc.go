// Command wasm is the AgentFS engine as WebAssembly (GOOS=js
// GOARCH=wasm), for JavaScript hosts without the native engine: a
// browser, a Cloudflare Worker or Durable Object, Deno, or Node.js.
//
// It speaks the engine's stdio protocol (spec/PROTOCOL.md) over memory,
// as the Node.js addon does (core/cmd/agentfs-node), so sdk-ts drives it
// with the same client code: AgentFS.open({ transport: "wasm" }). Its
// databases live in memory (SQLite compiled to Go by ncruces/go-sqlite3,
// memdb VFS): they come in and go out as the bytes of an AgentFS database
// file, which the native engine and Turso's AgentFS open as they are.
//
// Build: GOOS=js GOARCH=wasm go build -o agentfs.wasm . (go tool task
// build-wasm), and run it with Go's wasm_exec.js; main_js.go lists what it
// hands to JavaScript.
package main
