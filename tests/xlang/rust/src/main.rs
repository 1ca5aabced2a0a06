//! agentfs-xlang write DB | dump DB (see tests/xlang/README.md).
use std::collections::HashMap;
use std::io::Write;

use agentfs::{AgentFS, FileType, Options, ToolQuery, ToolRecord, ToolStatus};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

fn content(op: &Value) -> Vec<u8> {
    if let Some(s) = op["text"].as_str() {
        return s.as_bytes().to_vec();
    }
    let n = op["pattern"].as_u64().expect("writeFile op without content");
    (0..n).map(|i| (i % 256) as u8).collect()
}

fn opt(op: &Value, k: &str) -> Option<Value> {
    op.get(k).cloned()
}

fn write(db: &str) -> std::io::Result<()> {
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{db}{s}"));
    }
    let ops_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../compat/fixture-ops.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(ops_path)?)?;
    let agent = AgentFS::open(Options::path(db))?;
    let (fs, kv, tools) = (agent.fs(), agent.kv(), agent.tools());
    let mut ids: HashMap<String, i64> = HashMap::new();
    for op in doc["ops"].as_array().unwrap() {
        let s = |k: &str| op[k].as_str().unwrap().to_string();
        match op["op"].as_str().unwrap() {
            "mkdir" => fs.mkdir(s("path"))?,
            "writeFile" => fs.write_file(s("path"), content(op))?,
            "symlink" => fs.symlink(s("target"), s("path"))?,
            "kvSet" => kv.set(s("key"), &op["value"])?,
            "toolStart" => {
                let id = tools.start(s("name"), opt(op, "parameters").as_ref())?;
                ids.insert(s("as"), id);
            }
            "toolSuccess" => tools.success(ids[&s("ref")], opt(op, "result").as_ref())?,
            "toolError" => tools.error(ids[&s("ref")], s("error"))?,
            "toolRecord" => {
                tools.record(&ToolRecord {
                    name: s("name"),
                    started_at: op["startedAt"].as_i64().unwrap(),
                    completed_at: op["completedAt"].as_i64().unwrap(),
                    parameters: opt(op, "parameters"),
                    result: opt(op, "result"),
                    error: op.get("error").and_then(|e| e.as_str()).map(String::from),
                })?;
            }
            other => panic!("unknown op {other}"),
        }
    }
    agent.close()
}

fn walk(fs: &agentfs::Fs, dir: &str, out: &mut Vec<Value>) -> std::io::Result<()> {
    for name in fs.readdir(dir)? {
        let path = if dir == "/" { format!("/{name}") } else { format!("{dir}/{name}") };
        let st = fs.lstat(&path)?;
        let mut e = Map::new();
        e.insert("path".into(), json!(path));
        e.insert("mode".into(), json!(st.mode & 0o7777));
        match st.file_type() {
            FileType::Dir => {
                e.insert("type".into(), json!("dir"));
                out.push(Value::Object(e));
                walk(fs, &path, out)?;
            }
            FileType::File => {
                let data = fs.read_file(&path)?;
                e.insert("type".into(), json!("file"));
                e.insert("size".into(), json!(st.size));
                e.insert("sha256".into(), json!(format!("{:x}", Sha256::digest(&data))));
                if data.len() as u64 != st.size {
                    e.insert("content_length".into(), json!(data.len()));
                }
                out.push(Value::Object(e));
            }
            FileType::Symlink => {
                e.insert("type".into(), json!("symlink"));
                e.insert("target".into(), json!(fs.readlink(&path)?));
                out.push(Value::Object(e));
            }
            _ => {
                e.insert("type".into(), json!("other"));
                e.insert("raw_mode".into(), json!(st.mode));
                out.push(Value::Object(e));
            }
        }
    }
    Ok(())
}

fn dump(db: &str) -> std::io::Result<()> {
    let agent = AgentFS::open(Options::path(db))?;
    let (fs, kv, tools) = (agent.fs(), agent.kv(), agent.tools());
    let mut files = Vec::new();
    walk(&fs, "/", &mut files)?;
    files.sort_by(|a, b| a["path"].as_str().unwrap().as_bytes().cmp(b["path"].as_str().unwrap().as_bytes()));
    let mut kvs: Vec<Value> = kv.list("")?.into_iter().map(|e| json!({"key": e.key, "value": e.value})).collect();
    kvs.sort_by(|a, b| a["key"].as_str().unwrap().as_bytes().cmp(b["key"].as_str().unwrap().as_bytes()));
    let mut user: Vec<String> = kv.list("user:")?.into_iter().map(|e| e.key).collect();
    user.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut calls = tools.list(&ToolQuery { ascending: true, ..Default::default() })?;
    calls.sort_by_key(|c| c.id);
    let tools_json: Vec<Value> = calls
        .into_iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("id".into(), json!(c.id));
            m.insert("name".into(), json!(c.name));
            let status = match c.status {
                ToolStatus::Pending => "pending",
                ToolStatus::Success => "success",
                ToolStatus::Error => "error",
            };
            m.insert("status".into(), json!(status));
            if let Some(p) = c.parameters {
                m.insert("parameters".into(), p);
            }
            if let Some(r) = c.result {
                m.insert("result".into(), r);
            }
            if let Some(e) = c.error {
                m.insert("error".into(), json!(e));
            }
            Value::Object(m)
        })
        .collect();
    let doc = json!({"files": files, "kv": kvs, "kv_prefix_user": user, "tools": tools_json});
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, &doc)?;
    writeln!(stdout)?;
    agent.close()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let res = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("write"), Some(db)) => write(db),
        (Some("dump"), Some(db)) => dump(db),
        _ => {
            eprintln!("usage: agentfs-xlang write DB | dump DB");
            std::process::exit(2);
        }
    };
    if let Err(e) = res {
        eprintln!("agentfs-xlang: {e}");
        std::process::exit(1);
    }
}
