// agentfs-sdk: AgentFS for Node.js through the Go engine.

export { AgentFS, type AgentFSOptions, type SyncPullResult, type SyncPushResult, type SyncStats } from "./agentfs.js";
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
} from "./fs.js";
// agentfs-sdk 0.6.4 names the filesystem interface FileSystem.
export type { Filesystem as FileSystem } from "./fs.js";
export { KvStore } from "./kv.js";
export type { Binding, EffectivePolicy, ExecOptions, ExecResult, LimitValues, NetRule, SpawnOptions, OutputChunk, ProcessResult } from "./sandbox.js";
export type { MountSandboxOptions, SandboxMount } from "./mount.js";
export { Process, Shell } from "./sandbox.js";
/** The schema of EffectivePolicy, for its JSON form: `toJson(EffectivePolicySchema, await agent.policy(), { useProtoFieldName: true })` (@bufbuild/protobuf). */
export { EffectivePolicySchema } from "./gen/agentfs/v1/sandbox_pb.js";
export type { ProcessInfo } from "./gen/agentfs/v1/process_pb.js";
export { Session, Sessions, type SessionOptions, type SessionEvent, type SessionInfo } from "./session.js";
export { ToolCalls, type ToolCall, type ToolCallStats } from "./tools.js";
export { AgentFSError } from "./errors.js";
export { findEngine, bundledEngine, bundledAddon, enginePackage, enginePlatforms, type EngineMode } from "./engine.js";
export { StdioTransport } from "./stdio.js";
export { loadWasm, bundledWasm, type WasmEngine } from "./wasm.js";
export { HttpTransport, type HttpOptions } from "./http.js";
export type { Transport } from "./transport.js";
export {
  agentTools,
  callAgentTool,
  agentToolSpecs,
  type AgentTool,
  type AgentToolsOptions,
  type AgentToolName,
  type AgentToolSpec,
  type AgentToolInputs,
  type AgentToolResults,
} from "./agent-tools.js";
