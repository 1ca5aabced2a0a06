// Ready-made agent tools: read_file, write_file, edit_file, list, search,
// bash, kv_get, kv_set over an AgentFS, with the names, descriptions and
// JSON Schemas of spec/tools/agent-tools.json (generated into
// gen/agent_tools.ts) and the behaviour that spec/tools/README.md
// describes and spec/tools/cases.json checks in every SDK. Each call is
// recorded in the agent's tool-call log under the tool's name. Framework
// adapters (agentfs-sdk/ai, agentfs-sdk/openai-agents) wrap these.

import type { AgentFS } from "./agentfs.js";
import { AgentFSError, errnoError } from "./errors.js";
import { agentToolSpecs, type AgentToolInputs, type AgentToolName, type AgentToolSpec } from "./gen/agent_tools.js";
import type { ExecOptions } from "./sandbox.js";

export { agentToolSpecs, type AgentToolInputs, type AgentToolName, type AgentToolSpec };

/** What a tool returns, per tool (JSON objects, the same in every SDK). */
export interface AgentToolResults {
  read_file: { path: string; content: string; size: number };
  write_file: { path: string; size: number };
  edit_file: { path: string; replacements: number };
  list: { path: string; entries: { name: string; type: string; size: number }[] };
  search: { pattern: string; path: string; matches: { path: string; line: number; text: string }[]; truncated: boolean };
  bash: { exit_code: number; stdout: string; stderr: string; limit?: string };
  kv_get: { key: string; found: boolean; value: unknown };
  kv_set: { key: string };
}

export interface AgentToolsOptions {
  /** Offer only these tools (default: all eight). */
  only?: AgentToolName[];
  /** Leave out the tools that change the agent (write_file, edit_file, bash, kv_set). */
  readOnly?: boolean;
  /** Sandbox settings of the bash and search tools: limits profile, allowed and denied commands, environment. */
  sandbox?: Pick<ExecOptions, "limits" | "allow" | "deny" | "env">;
  /** Do not record the calls in the tool-call log (default: record each). */
  noLog?: boolean;
}

/** One tool, framework-neutral: what adapters turn into their tool type. */
export interface AgentTool<N extends AgentToolName = AgentToolName> {
  name: N;
  description: string;
  /** JSON Schema of the input (an object; additionalProperties false). */
  inputSchema: AgentToolSpec["input_schema"];
  writes: boolean;
  /** Validates the input, runs the tool, records the call; rejects with an AgentFSError (code EINVAL, ENOENT, ...). */
  execute(input: AgentToolInputs[N]): Promise<AgentToolResults[N]>;
}

/** The longest string kept in the tool-call log per field (bash output). */
const LOG_STRING_MAX = 4096;

/**
 * The ready-made tools over an agent. Hand them to a framework through an
 * adapter, or call `tool.execute(input)` from your own loop.
 */
export function agentTools(agent: AgentFS, options: AgentToolsOptions = {}): AgentTool[] {
  return agentToolSpecs
    .filter((s) => (!options.only || options.only.includes(s.name)) && !(options.readOnly && s.writes))
    .map((s) => ({
      name: s.name,
      description: s.description,
      inputSchema: s.input_schema,
      writes: s.writes,
      execute: (input: any) => callAgentTool(agent, s.name, input, options),
    }));
}

/** Runs one tool by name (validated against its schema) and records the call. */
export async function callAgentTool<N extends AgentToolName>(
  agent: AgentFS,
  name: N,
  input: AgentToolInputs[N],
  options: AgentToolsOptions = {},
): Promise<AgentToolResults[N]> {
  const spec = agentToolSpecs.find((s) => s.name === name);
  if (!spec) throw invalid(`unknown tool ${JSON.stringify(name)} (tools: ${agentToolSpecs.map((s) => s.name).join(", ")})`);
  const started = Date.now() / 1000;
  let result: any;
  let error: string | undefined;
  let logError: string | undefined;
  try {
    const args = validate(spec, input);
    result = await run[name](agent, args as any, options);
    if (name === "bash" && result.exit_code !== 0) {
      // The log marks a failing script, as the engine's own exec record does.
      logError = `exit status ${result.exit_code}${result.limit ? `: ${result.limit}` : ""}`;
    }
    return result;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    throw e;
  } finally {
    if (!options.noLog) {
      await agent.tools.record(name, started, Date.now() / 1000, forLog(input), error === undefined ? forLog(logResult(name, result)) : undefined, error ?? logError);
    }
  }
}

function invalid(message: string): AgentFSError {
  const e = errnoError("EINVAL", "tool");
  e.message = `EINVAL: ${message}`;
  return e;
}

/** Checks input against the tool's schema and fills in the defaults. */
function validate(spec: AgentToolSpec, input: unknown): Record<string, any> {
  if (input === null || typeof input !== "object" || Array.isArray(input)) throw invalid(`${spec.name}: the input must be a JSON object`);
  const props = spec.input_schema.properties;
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    const p = props[k];
    if (!p) throw invalid(`${spec.name}: unknown argument ${JSON.stringify(k)} (arguments: ${Object.keys(props).join(", ")})`);
    if (v === undefined) continue;
    const ok =
      p.type === undefined ||
      (p.type === "string" && typeof v === "string") ||
      (p.type === "boolean" && typeof v === "boolean") ||
      (p.type === "integer" && Number.isInteger(v)) ||
      (p.type === "number" && typeof v === "number");
    if (!ok) throw invalid(`${spec.name}: argument ${k} must be ${p.type === "integer" ? "an integer" : `a ${p.type}`}`);
    if (typeof v === "number" && ((p.minimum !== undefined && v < p.minimum) || (p.maximum !== undefined && v > p.maximum))) {
      throw invalid(`${spec.name}: argument ${k} must be between ${p.minimum} and ${p.maximum}`);
    }
    out[k] = v;
  }
  for (const r of spec.input_schema.required ?? []) {
    if (!(r in out)) throw invalid(`${spec.name}: missing argument ${r}`);
  }
  for (const [k, p] of Object.entries(props)) {
    if (!(k in out) && (p as any).default !== undefined) out[k] = (p as any).default;
  }
  return out;
}

/** Makes a path absolute in the agent's filesystem, as the MCP tools do. */
function agentPath(p: string): string {
  if (p === "") throw errnoError("ENOENT", "tool", p);
  return p.startsWith("/") ? p : "/" + p;
}

function typeName(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): string {
  if (st.isDirectory()) return "dir";
  if (st.isSymbolicLink()) return "symlink";
  if (st.isFile()) return "file";
  return "other";
}

/** Counts non-overlapping occurrences, left to right (as String.split). */
function countOccurrences(text: string, sub: string): number {
  let n = 0;
  for (let i = text.indexOf(sub); i !== -1; i = text.indexOf(sub, i + sub.length)) n++;
  return n;
}

/** Quotes a word for the sandbox's shell. */
function shellQuote(s: string): string {
  return "'" + s.replace(/'/g, `'\\''`) + "'";
}

type Runner<N extends AgentToolName> = (agent: AgentFS, a: Required<AgentToolInputs[N]>, o: AgentToolsOptions) => Promise<AgentToolResults[N]>;

const run: { [N in AgentToolName]: Runner<N> } = {
  async read_file(agent, a) {
    const path = agentPath(a.path);
    const data = (await agent.fs.readFile(path)) as Buffer;
    return { path, content: data.toString("utf8"), size: data.length };
  },

  async write_file(agent, a) {
    const path = agentPath(a.path);
    const data = Buffer.from(a.content, "utf8");
    await agent.fs.writeFile(path, data, { createParents: true } as any);
    return { path, size: data.length };
  },

  async edit_file(agent, a) {
    const path = agentPath(a.path);
    if (a.old_string === "") throw invalid(`edit_file ${path}: old_string is empty; use write_file to create or replace a file`);
    if (a.old_string === a.new_string) throw invalid(`edit_file ${path}: old_string and new_string are the same; nothing would change`);
    const text = (await agent.fs.readFile(path, "utf8")) as string;
    const n = countOccurrences(text, a.old_string);
    if (n === 0) throw invalid(`edit_file ${path}: old_string was not found; read the file and copy the exact text, whitespace included`);
    if (n > 1 && !a.replace_all) {
      throw invalid(`edit_file ${path}: old_string appears ${n} times; include more surrounding lines to make it unique, or set replace_all`);
    }
    // split/join: the replacement is literal text ($& and \1 are not special).
    const next = a.replace_all ? text.split(a.old_string).join(a.new_string) : text.replace(a.old_string, () => a.new_string);
    await agent.fs.writeFile(path, next, "utf8");
    return { path, replacements: a.replace_all ? n : 1 };
  },

  async list(agent, a) {
    const path = agentPath(a.path);
    const entries = await agent.fs.readdirPlus(path);
    return {
      path,
      entries: entries
        .map((e) => ({ name: e.name, type: typeName(e.stats), size: e.stats.size }))
        .sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)),
    };
  },

  async search(agent, a, o) {
    const path = agentPath(a.path);
    // The engine's grep does the matching, so every SDK matches alike.
    // -Z ends each file name with NUL: names may hold ':'.
    const flags = "-rnHZE" + (a.ignore_case ? "i" : "");
    const include = a.glob !== undefined ? ` --include=${shellQuote(a.glob)}` : "";
    const script = `grep ${flags}${include} -e ${shellQuote(a.pattern)} -- ${shellQuote(path)} | head -n ${a.max_results + 1}`;
    const r = await agent.exec(script, { ...o.sandbox, noAudit: true } as ExecOptions);
    // With the pipe, the status is head's; grep's complaints come on stderr.
    if (r.stderr.trim() !== "") {
      const msg = r.stderr.trim();
      const code = /no such file/i.test(msg) ? "ENOENT" : "EINVAL";
      const e = errnoError(code, "search", path);
      e.message = `${code}: search: ${msg}`;
      throw e;
    }
    const matches: { path: string; line: number; text: string }[] = [];
    for (const rec of r.stdout.split("\n")) {
      if (rec === "") continue;
      const nul = rec.indexOf("\0");
      const colon = rec.indexOf(":", nul + 1);
      if (nul < 0 || colon < 0) continue;
      matches.push({ path: rec.slice(0, nul), line: Number(rec.slice(nul + 1, colon)), text: rec.slice(colon + 1) });
    }
    const truncated = matches.length > a.max_results;
    return { pattern: a.pattern, path, matches: matches.slice(0, a.max_results), truncated };
  },

  async bash(agent, a, o) {
    // The call is logged once, as "bash" with its output: the engine's own
    // "exec" record is skipped.
    const r = await agent.exec(a.command, { ...o.sandbox, dir: agentPath(a.cwd), noAudit: true } as ExecOptions);
    const out: AgentToolResults["bash"] = { exit_code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    if (r.limit) out.limit = r.limit;
    return out;
  },

  async kv_get(agent, a) {
    const value = await agent.kv.get(a.key);
    return { key: a.key, found: value !== undefined, value: value === undefined ? null : value };
  },

  async kv_set(agent, a) {
    await agent.kv.set(a.key, a.value);
    return { key: a.key };
  },
};

/** What the log keeps of a result: a file read is in the file already. */
function logResult(name: AgentToolName, result: any): unknown {
  if (name === "read_file" && result) return { path: result.path, size: result.size };
  return result;
}

/** Cuts long strings so a large output does not bloat the log. */
function forLog(v: unknown): unknown {
  if (typeof v === "string") {
    return v.length > LOG_STRING_MAX ? v.slice(0, LOG_STRING_MAX) + `…[${v.length - LOG_STRING_MAX} more characters]` : v;
  }
  if (Array.isArray(v)) return v.map(forLog);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, forLog(x)]));
  return v;
}
