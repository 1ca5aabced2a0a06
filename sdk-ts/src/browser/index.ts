// agentfs-sdk in a browser (the package's "browser" export condition): the
// engine as WebAssembly in this page or worker, databases kept in the
// Origin Private File System. Same API as under Node.

export { AgentFS, type AgentFSOptions } from "./agentfs.js";
export {
  Filesystem,
  FileHandle,
  Stats,
  type DirEntry,
  type FilesystemStats,
  S_IFMT,
  S_IFREG,
  S_IFDIR,
  S_IFLNK,
  DEFAULT_FILE_MODE,
  DEFAULT_DIR_MODE,
} from "../fs.js";
// agentfs-sdk 0.6.4 names the filesystem interface FileSystem.
export type { Filesystem as FileSystem } from "../fs.js";
export { KvStore } from "../kv.js";
export type { Binding, ExecOptions, ExecResult } from "../sandbox.js";
export { ToolCalls, type ToolCall, type ToolCallStats } from "../tools.js";
export { AgentFSError } from "../errors.js";
export { StdioTransport } from "../stdio.js";
export { loadWasm, bundledWasm, type WasmEngine } from "./wasm.js";
export { HttpTransport, type HttpOptions } from "../http.js";
export type { Transport } from "../transport.js";
