//! Ready-made agent tools: `read_file`, `write_file`, `edit_file`, `list`,
//! `search`, `bash`, `kv_get` and `kv_set` over an agent, with the names,
//! descriptions and JSON Schemas of spec/tools/agent-tools.json and the
//! behaviour that spec/tools/README.md describes and spec/tools/cases.json
//! checks in every SDK. Each call is recorded in the agent's tool-call log
//! under the tool's name, with its arguments and result.
//!
//! ```no_run
//! use agentfs::agent_tools::{AgentTools, ToolOptions};
//! let agent = agentfs::AgentFS::open(agentfs::Options::default())?;
//! let tools = AgentTools::new(&agent, ToolOptions::default());
//! for s in tools.specs() { /* offer s.name, s.description, s.input_schema to the model */ }
//! let result = tools.call("write_file", &serde_json::json!({"path": "/a.txt", "content": "hi"}))?;
//! assert_eq!(result["size"], 2);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Failures are `io::Error`s whose [`ErrorExt::code`](crate::ErrorExt::code)
//! is the POSIX code: `EINVAL` for an input the schema refuses or an edit
//! that cannot apply, the filesystem's own code (`ENOENT`, `ENOTDIR`...)
//! otherwise. A `bash` script's non-zero exit code is a result, not a
//! failure.

use std::io;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::clients::SandboxServiceClient;
use crate::error::posix;
use crate::transport::Transport;
use crate::{pb, AgentFS, FileType, Fs, Kv, ToolRecord, Tools};

#[rustfmt::skip]
#[path = "gen/agent_tools.rs"]
mod specs_gen;

/// The longest string kept in the tool-call log per field (bash output).
const LOG_STRING_MAX: usize = 4096;

/// One tool as a model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    pub description: String,
    /// Whether the tool changes the agent (files, kv).
    pub writes: bool,
    /// JSON Schema of the input (an object of flat properties).
    pub input_schema: Value,
}

/// Every tool, in the order of spec/tools/agent-tools.json.
pub fn specs() -> Vec<Spec> {
    let all: Vec<Value> = serde_json::from_str(specs_gen::SPECS_JSON).expect("generated specs are JSON");
    all.into_iter()
        .map(|s| Spec {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            description: s["description"].as_str().unwrap_or_default().to_string(),
            writes: s["writes"].as_bool().unwrap_or(false),
            input_schema: s["input_schema"].clone(),
        })
        .collect()
}

/// Which tools to offer and the sandbox of `bash` and `search`.
#[derive(Debug, Clone, Default)]
pub struct ToolOptions {
    /// Offer only these tools (default: all eight).
    pub only: Option<Vec<String>>,
    /// Leave out the tools that change the agent.
    pub read_only: bool,
    /// Limits profile of the scripts: "normal" (default), "hardened" or
    /// "none".
    pub limits: Option<String>,
    /// Commands the scripts may run (empty: all) and may not.
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    /// Skip the tool-call records.
    pub no_log: bool,
}

/// The tool set over one agent (blocking). Cheap to clone; usable from
/// many threads at once.
#[derive(Clone)]
pub struct AgentTools {
    fs: Fs,
    kv: Kv,
    log: Tools,
    t: Arc<dyn Transport>,
    opts: ToolOptions,
    all: Arc<Vec<Spec>>,
    offered: Arc<Vec<Spec>>,
}

impl AgentTools {
    /// The tools over `agent`, as `opts` choose.
    pub fn new(agent: &AgentFS, opts: ToolOptions) -> AgentTools {
        let all = specs();
        let offered = all
            .iter()
            .filter(|s| opts.only.as_ref().is_none_or(|o| o.contains(&s.name)) && !(opts.read_only && s.writes))
            .cloned()
            .collect();
        AgentTools {
            fs: agent.fs(),
            kv: agent.kv(),
            log: agent.tools(),
            t: agent.transport(),
            opts,
            all: Arc::new(all),
            offered: Arc::new(offered),
        }
    }

    /// The offered tools, in the spec's order.
    pub fn specs(&self) -> &[Spec] {
        &self.offered
    }

    /// Runs one tool with its JSON input (checked against its schema, the
    /// defaults filled in) and records the call. The result is the tool's
    /// JSON object.
    pub fn call(&self, name: &str, input: &Value) -> io::Result<Value> {
        if !self.offered.iter().any(|s| s.name == name) {
            let names: Vec<&str> = self.offered.iter().map(|s| s.name.as_str()).collect();
            return Err(invalid(format!("unknown tool {name:?} (tools: {})", names.join(", "))));
        }
        let started = now();
        let res = self.validate(name, input).and_then(|args| self.run(name, &args));
        if self.opts.no_log {
            return res;
        }
        let mut rec = ToolRecord {
            name: name.into(),
            started_at: started,
            completed_at: now(),
            parameters: Some(for_log(input)),
            ..Default::default()
        };
        match &res {
            Err(e) => rec.error = Some(e.to_string()),
            Ok(r) => {
                rec.result = Some(for_log(&log_result(name, r)));
                if name == "bash" && r["exit_code"] != 0 {
                    // The log marks a failing script, as the engine's exec
                    // record does.
                    let mut msg = format!("exit status {}", r["exit_code"]);
                    if let Some(l) = r.get("limit").and_then(Value::as_str) {
                        msg += &format!(": {l}");
                    }
                    rec.error = Some(msg);
                }
            }
        }
        match self.log.record(&rec) {
            Err(e) if res.is_ok() => Err(io::Error::new(e.kind(), format!("agent_tools: recording {name}: {e}"))),
            _ => res,
        }
    }

    /// Checks the input against the tool's schema and fills the defaults.
    fn validate(&self, name: &str, input: &Value) -> io::Result<Map<String, Value>> {
        let Some(mut args) = input.as_object().cloned() else {
            return Err(invalid(format!("{name}: the input must be a JSON object")));
        };
        let spec = self.all.iter().find(|s| s.name == name).expect("an offered tool has a spec");
        let empty = Map::new();
        let props = spec.input_schema["properties"].as_object().unwrap_or(&empty);
        for (k, v) in args.iter() {
            let Some(p) = props.get(k) else {
                let keys: Vec<&str> = props.keys().map(String::as_str).collect();
                return Err(invalid(format!("{name}: unknown argument {k:?} (arguments: {})", keys.join(", "))));
            };
            let ok = match p["type"].as_str() {
                Some("string") => v.is_string(),
                Some("boolean") => v.is_boolean(),
                Some("integer") => v.is_i64() || v.is_u64(),
                Some("number") => v.is_number(),
                _ => true,
            };
            if !ok {
                let what = if p["type"] == "integer" {
                    "an integer".to_string()
                } else {
                    format!("a {}", p["type"].as_str().unwrap_or(""))
                };
                return Err(invalid(format!("{name}: argument {k} must be {what}")));
            }
            if let Some(n) = v.as_f64().filter(|_| v.is_number()) {
                let (lo, hi) = (p["minimum"].as_f64(), p["maximum"].as_f64());
                if lo.is_some_and(|lo| n < lo) || hi.is_some_and(|hi| n > hi) {
                    return Err(invalid(format!(
                        "{name}: argument {k} must be between {} and {}",
                        p["minimum"], p["maximum"]
                    )));
                }
            }
        }
        for r in spec.input_schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            if !args.contains_key(r) {
                return Err(invalid(format!("{name}: missing argument {r}")));
            }
        }
        for (k, p) in props {
            if let (false, Some(d)) = (args.contains_key(k), p.get("default")) {
                args.insert(k.clone(), d.clone());
            }
        }
        Ok(args)
    }

    fn run(&self, name: &str, a: &Map<String, Value>) -> io::Result<Value> {
        let s = |k: &str| a.get(k).and_then(Value::as_str).unwrap_or_default();
        let flag = |k: &str| a.get(k).and_then(Value::as_bool).unwrap_or(false);
        match name {
            "read_file" => {
                let p = agent_path(s("path"))?;
                let data = self.fs.read_file(&p)?;
                Ok(json!({"path": p, "content": String::from_utf8_lossy(&data), "size": data.len()}))
            }
            "write_file" => {
                let p = agent_path(s("path"))?;
                let data = s("content").as_bytes();
                self.fs.write_file_with(
                    &p,
                    data,
                    &crate::WriteOptions { create_parents: true, ..Default::default() },
                )?;
                Ok(json!({"path": p, "size": data.len()}))
            }
            "edit_file" => {
                self.edit_file(agent_path(s("path"))?, s("old_string"), s("new_string"), flag("replace_all"))
            }
            "list" => {
                let p = agent_path(s("path"))?;
                let mut ents = self.fs.readdir_plus(&p)?;
                // Byte order of the UTF-8 names, as every SDK sorts.
                ents.sort_by(|x, y| x.name.as_bytes().cmp(y.name.as_bytes()));
                let entries: Vec<Value> = ents
                    .iter()
                    .map(
                        |e| json!({"name": e.name, "type": type_name(e.metadata.file_type()), "size": e.metadata.size}),
                    )
                    .collect();
                Ok(json!({"path": p, "entries": entries}))
            }
            "search" => {
                let max = a.get("max_results").and_then(Value::as_u64).unwrap_or(100);
                let glob = a.get("glob").and_then(Value::as_str);
                self.search(s("pattern"), agent_path(s("path"))?, glob, flag("ignore_case"), max as usize)
            }
            "bash" => {
                let r = self.exec(s("command"), agent_path(s("cwd"))?)?;
                let mut out = json!({
                    "exit_code": r.exit_code,
                    "stdout": String::from_utf8_lossy(&r.stdout),
                    "stderr": String::from_utf8_lossy(&r.stderr),
                });
                if !r.limit.is_empty() {
                    out["limit"] = Value::String(r.limit);
                }
                Ok(out)
            }
            "kv_get" => {
                let key = s("key");
                Ok(match self.kv.get::<Value>(key)? {
                    Some(v) => json!({"key": key, "found": true, "value": v}),
                    None => json!({"key": key, "found": false, "value": null}),
                })
            }
            "kv_set" => {
                let key = s("key");
                self.kv.set(key, a.get("value").unwrap_or(&Value::Null))?;
                Ok(json!({ "key": key }))
            }
            _ => Err(invalid(format!("unknown tool {name:?}"))),
        }
    }

    fn edit_file(&self, p: String, old: &str, new: &str, all: bool) -> io::Result<Value> {
        if old.is_empty() {
            return Err(invalid(format!(
                "edit_file {p}: old_string is empty; use write_file to create or replace a file"
            )));
        }
        if old == new {
            return Err(invalid(format!(
                "edit_file {p}: old_string and new_string are the same; nothing would change"
            )));
        }
        let data = self.fs.read_file(&p)?;
        let text = String::from_utf8_lossy(&data);
        // str::matches counts non-overlapping occurrences left to right, as
        // the other SDKs do; replace/replacen take new literally.
        let n = text.matches(old).count();
        if n == 0 {
            return Err(invalid(format!(
                "edit_file {p}: old_string was not found; read the file and copy the exact text, whitespace included"
            )));
        }
        if n > 1 && !all {
            return Err(invalid(format!(
                "edit_file {p}: old_string appears {n} times; include more surrounding lines to make it unique, or set replace_all"
            )));
        }
        let (out, count) = if all { (text.replace(old, new), n) } else { (text.replacen(old, new, 1), 1) };
        self.fs.write_file(&p, out)?;
        Ok(json!({"path": p, "replacements": count}))
    }

    fn search(&self, pattern: &str, p: String, glob: Option<&str>, ignore_case: bool, max: usize) -> io::Result<Value> {
        // The engine's grep does the matching, as in every SDK; -Z ends each
        // file name with NUL (names may hold ':').
        let flags = if ignore_case { "-rnHZEi" } else { "-rnHZE" };
        let include = glob.map(|g| format!(" --include={}", shell_quote(g))).unwrap_or_default();
        let script =
            format!("grep {flags}{include} -e {} -- {} | head -n {}", shell_quote(pattern), shell_quote(&p), max + 1);
        let r = self.exec(&script, "/".into())?;
        // With the pipe the status is head's; grep's complaints come on
        // stderr.
        let msg = String::from_utf8_lossy(&r.stderr).trim().to_string();
        if !msg.is_empty() {
            return Err(if msg.to_lowercase().contains("no such file") {
                posix("ENOENT", 2, format!("search: {msg}"))
            } else {
                invalid(format!("search: {msg}"))
            });
        }
        let mut matches: Vec<Value> = String::from_utf8_lossy(&r.stdout)
            .split('\n')
            .filter_map(|rec| {
                let (path, rest) = rec.split_once('\0')?;
                let (num, text) = rest.split_once(':')?;
                Some(json!({"path": path, "line": num.parse::<u64>().ok()?, "text": text}))
            })
            .collect();
        let truncated = matches.len() > max;
        matches.truncate(max);
        Ok(json!({"pattern": pattern, "path": p, "matches": matches, "truncated": truncated}))
    }

    /// Runs a script in the engine's sandbox, without the engine's own
    /// "exec" record: the tool's record is the one entry of the call.
    fn exec(&self, script: &str, dir: String) -> io::Result<pb::ExecResponse> {
        SandboxServiceClient::new(Arc::clone(&self.t)).exec(&pb::ExecRequest {
            script: script.into(),
            dir,
            allow: self.opts.allow.clone(),
            deny: self.opts.deny.clone(),
            limits: self.opts.limits.clone().unwrap_or_default(),
            no_audit: true,
            ..Default::default()
        })
    }
}

fn invalid(message: String) -> io::Error {
    posix("EINVAL", 22, message)
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Makes a path absolute in the agent's filesystem, as the MCP tools do.
fn agent_path(p: &str) -> io::Result<String> {
    match p {
        "" => Err(posix("ENOENT", 2, "empty path".into())),
        _ if p.starts_with('/') => Ok(p.into()),
        _ => Ok(format!("/{p}")),
    }
}

fn type_name(t: FileType) -> &'static str {
    match t {
        FileType::File => "file",
        FileType::Dir => "dir",
        FileType::Symlink => "symlink",
        _ => "other",
    }
}

/// Quotes a word for the sandbox's shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What the log keeps of a result: a file read is in the file already.
fn log_result(name: &str, r: &Value) -> Value {
    if name == "read_file" {
        return json!({"path": r["path"], "size": r["size"]});
    }
    r.clone()
}

/// Cuts long strings so a large output does not bloat the log.
fn for_log(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > LOG_STRING_MAX => {
            let mut cut = LOG_STRING_MAX;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            Value::String(format!("{}…[{} more bytes]", &s[..cut], s.len() - cut))
        }
        Value::Array(a) => Value::Array(a.iter().map(for_log).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), for_log(x))).collect()),
        _ => v.clone(),
    }
}
