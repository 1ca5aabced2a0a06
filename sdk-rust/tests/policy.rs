//! The sandbox policy and bindings through this SDK: the shared
//! conformance cases of spec/policy/cases.json (stdio and a real `agentfs
//! serve http`) and spec/bindings/cases.json (stdio: the engine calls
//! back).

mod common;

use std::collections::HashMap;

use agentfs::{AgentFS, Binding, ErrorExt, ExecOptions, NetRule, Options, Policy};
use common::{local, Server};
use serde_json::{json, Value};

fn spec(dir: &str) -> Value {
    let p = format!("{}/../spec/{dir}/cases.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

fn smap(v: &Value) -> HashMap<String, String> {
    v.as_object().unwrap().iter().map(|(k, x)| (k.clone(), x.as_str().unwrap().to_string())).collect()
}

/// The SDK's options of a case's policy (ExecRequest field names).
fn policy_options(c: &Value) -> ExecOptions {
    let mut p = c["policy"].as_object().cloned().unwrap_or_default();
    if let Some(h) = c.get("huge") {
        let prefix = h["prefix"].as_str().unwrap();
        let list: Vec<Value> = (0..h["count"].as_u64().unwrap()).map(|i| json!(format!("{prefix}{i}"))).collect();
        p.insert(h["field"].as_str().unwrap().into(), Value::Array(list));
    }
    let mut o = ExecOptions::default();
    for (k, v) in &p {
        match k.as_str() {
            "readable" => o.readable = Some(strs(v)),
            "writable" => o.writable = Some(strs(v)),
            "allow" => o.allow = strs(v),
            "deny" => o.deny = strs(v),
            "default_deny" => o.default_deny = v.as_bool().unwrap(),
            "env" => o.env = smap(v),
            "limits" => o.limits = Some(v.as_str().unwrap().into()),
            "limit_values" => {
                let mut l = agentfs::pb::SandboxLimits::default();
                for (lk, lv) in v.as_object().unwrap() {
                    let n = lv.as_i64().unwrap();
                    match lk.as_str() {
                        "max_output_bytes" => l.max_output_bytes = n,
                        "wall_time_ms" => l.wall_time_ms = n,
                        _ => panic!("{}: limit_values.{lk}: add it to the harness", c["name"]),
                    }
                }
                o.limit_values = Some(l);
            }
            "net" => {
                o.net = v
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| NetRule {
                        prefix: r["prefix"].as_str().unwrap().into(),
                        methods: r.get("methods").map(strs).unwrap_or_default(),
                        headers: r.get("headers").map(smap).unwrap_or_default(),
                        allow_private: r["allow_private"].as_bool().unwrap_or(false),
                    })
                    .collect()
            }
            _ => panic!("{}: policy field {k}: add it to the harness", c["name"]),
        }
    }
    o
}

/// The JSON form of the policy, proto field names (as protojson writes it).
fn policy_json(p: &Policy) -> Value {
    let l = p.limits.unwrap_or_default();
    json!({
        "default_deny": p.default_deny, "restrict_reads": p.restrict_reads, "readable": p.readable,
        "restrict_writes": p.restrict_writes, "writable": p.writable,
        "restrict_commands": p.restrict_commands, "allow": p.allow, "deny": p.deny, "env": p.env,
        "user": p.user, "uid": p.uid, "gid": p.gid, "hostname": p.hostname, "umask": p.umask,
        "net": p.net.iter().map(|r| json!({"prefix": r.prefix, "methods": r.methods, "header_names": r.header_names, "allow_private": r.allow_private})).collect::<Vec<_>>(),
        "limits_profile": p.limits_profile,
        "limits": {"max_commands": l.max_commands, "max_steps": l.max_steps, "max_call_depth": l.max_call_depth,
            "wall_time_ms": l.wall_time_ms, "max_output_bytes": l.max_output_bytes, "max_stream_bytes": l.max_stream_bytes,
            "max_fs_write_bytes": l.max_fs_write_bytes, "max_response_bytes": l.max_response_bytes,
            "net_timeout_ms": l.net_timeout_ms, "max_memory_bytes": l.max_memory_bytes, "max_background": l.max_background},
        "bindings": p.bindings,
    })
}

/// got has every key of want (recursively); lists and scalars are equal.
fn contains(got: &Value, want: &Value) -> bool {
    match want {
        Value::Object(w) => w.iter().all(|(k, wv)| contains(&got[k], wv)),
        Value::Array(w) => {
            got.as_array().is_some_and(|g| g.len() == w.len() && g.iter().zip(w).all(|(a, b)| contains(a, b)))
        }
        _ => got == want,
    }
}

fn policy_cases(a: &AgentFS) {
    let s = spec("policy");
    assert_eq!(a.exec(s["setup"].as_str().unwrap(), &ExecOptions::default()).unwrap().exit_code, 0);
    for c in s["cases"].as_array().unwrap() {
        let name = &c["name"];
        let o = policy_options(c);
        if let Some(code) = c["error"].as_str() {
            let e = a.exec(c["script"].as_str().unwrap(), &o).unwrap_err();
            assert_eq!(e.code(), Some(code), "{name}: {e}");
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{name}");
            assert!(e.to_string().contains("invalid sandbox policy"), "{name}: {e}");
            assert_eq!(a.policy(&o).unwrap_err().code(), Some(code), "{name}: policy()");
            let r = a.exec(c["after"].as_str().unwrap(), &ExecOptions::default()).unwrap();
            assert_eq!(
                String::from_utf8(r.stdout).unwrap(),
                c["after_stdout"].as_str().unwrap(),
                "{name}: nothing ran"
            );
        } else if let Some(want) = c.get("effective") {
            let js = policy_json(&a.policy(&o).unwrap());
            assert!(contains(&js, want), "{name}: policy() = {js}");
            for t in c["absent_text"].as_array().into_iter().flatten() {
                assert!(!js.to_string().contains(t.as_str().unwrap()), "{name}");
            }
        } else {
            let r = a.exec(c["script"].as_str().unwrap(), &o).unwrap();
            let e = &c["expect"];
            let (out, err) = (String::from_utf8(r.stdout).unwrap(), String::from_utf8(r.stderr).unwrap());
            assert_eq!(r.exit_code as i64, e["exit_code"].as_i64().unwrap(), "{name}: {out} {err}");
            if let Some(want) = e["stdout"].as_str() {
                assert_eq!(out, want, "{name}");
            }
            assert!(err.contains(e["stderr_contains"].as_str().unwrap_or("")), "{name}: {err}");
        }
    }
}

#[test]
fn policy_cases_stdio() {
    policy_cases(&AgentFS::open(local(Options::default())).unwrap());
}

#[test]
fn policy_cases_http() {
    let srv = Server::start(None);
    policy_cases(&AgentFS::open(srv.agent("p", None)).unwrap());
}

/// The host function a binding case names by fn.
fn binding_fn(b: &Value) -> Binding {
    let f = match b["fn"].as_str().unwrap() {
        "echo" => Binding::new(Ok),
        "fail" => Binding::new(|args: Value| Err(args["message"].as_str().unwrap_or("").to_string())),
        "sum" => {
            Binding::new(|args: Value| Ok(json!({"sum": args["a"].as_i64().unwrap() + args["b"].as_i64().unwrap()})))
        }
        "null" => Binding::new(|_| Ok(Value::Null)),
        other => panic!("unknown fn {other}"),
    };
    let mut f = Binding { description: b["description"].as_str().unwrap_or("").into(), ..f };
    if let Some(s) = b.get("schema") {
        f = f.schema(s.clone());
    }
    f
}

#[test]
fn binding_cases() {
    let a = AgentFS::open(local(Options::default())).unwrap();
    for c in spec("bindings")["cases"].as_array().unwrap() {
        let mut o = policy_options(c);
        for b in c["bindings"].as_array().unwrap() {
            o.bindings.insert(b["name"].as_str().unwrap().into(), binding_fn(b));
        }
        let r = a.exec(c["script"].as_str().unwrap(), &o).unwrap();
        let e = &c["expect"];
        let (out, err) = (String::from_utf8(r.stdout).unwrap(), String::from_utf8(r.stderr).unwrap());
        assert_eq!(
            (r.exit_code as i64, out.as_str()),
            (e["exit_code"].as_i64().unwrap(), e["stdout"].as_str().unwrap()),
            "{}: {err}",
            c["name"]
        );
        assert!(err.contains(e["stderr_contains"].as_str().unwrap()), "{}: {err}", c["name"]);
    }
}
