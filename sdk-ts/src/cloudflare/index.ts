// agentfs-sdk/cloudflare: AgentFS in a Cloudflare Durable Object, its
// database the object's SQLite storage. See agentfs.ts.

export { AgentFS, type CreateOptions } from "./agentfs.js";
export type { CloudflareStorage, SqlStorage, SqlStorageCursor } from "./host.js";
export { Filesystem, FileHandle, Stats, type DirEntry, type FilesystemStats } from "../fs.js";
// agentfs-sdk 0.6.4 names the filesystem interface FileSystem.
export type { Filesystem as FileSystem } from "../fs.js";
export { KvStore } from "../kv.js";
export { ToolCalls, type ToolCall, type ToolCallStats } from "../tools.js";
export type { Binding, ExecOptions, ExecResult } from "../sandbox.js";
export { AgentFSError } from "../errors.js";
