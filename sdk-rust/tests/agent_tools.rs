//! The ready-made agent tools against a real engine: every case of
//! spec/tools/cases.json (the cases every SDK runs) and the options.

mod common;

use agentfs::agent_tools::{specs, AgentTools, ToolOptions};
use agentfs::{ErrorExt, ToolQuery, ToolStatus, WriteOptions};
use serde_json::{json, Value};

fn spec_file(name: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/tools").join(name);
    serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap()
}

/// Where `got` differs from `want` (every key of want equal), or None.
fn subset(got: &Value, want: &Value, at: &str) -> Option<String> {
    match want {
        Value::Object(w) => {
            let Some(g) = got.as_object() else { return Some(format!("{at}: not an object")) };
            w.iter().find_map(|(k, wv)| subset(g.get(k).unwrap_or(&Value::Null), wv, &format!("{at}.{k}")))
        }
        Value::Array(w) => match got.as_array() {
            Some(g) if g.len() == w.len() => g.iter().zip(w).find_map(|(g, w)| subset(g, w, at)),
            _ => Some(format!("{at}: array differs: got {got}, want {want}")),
        },
        // JSON numbers compare by value (1 and 1.0 alike), as in the other SDKs.
        Value::Number(w) if got.as_f64() == w.as_f64() && got.is_number() => None,
        _ if got == want => None,
        _ => Some(format!("{at}: got {got}, want {want}")),
    }
}

#[test]
fn cases() {
    let f = spec_file("cases.json");
    let cases = f["cases"].as_array().unwrap();
    assert!(cases.len() >= 20, "cases.json has {} cases", cases.len());
    // One agent per case, as the other SDKs: each starts from an empty
    // filesystem, kv store and log.
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let a = common::temp_agent();
        for (p, content) in c["files"].as_object().into_iter().flatten() {
            let opts = WriteOptions { create_parents: true, ..Default::default() };
            a.fs().write_file_with(p, content.as_str().unwrap(), &opts).unwrap();
        }
        for (k, v) in c["kv"].as_object().into_iter().flatten() {
            a.kv().set(k, v).unwrap();
        }
        let (tool, input) = (c["call"]["tool"].as_str().unwrap(), &c["call"]["input"]);
        let res = AgentTools::new(&a, ToolOptions::default()).call(tool, input);
        let want_err = c["error"].as_str();
        match (want_err, &res) {
            (Some(code), Err(e)) => assert_eq!(e.code(), Some(code), "{name}: {e}"),
            (Some(code), Ok(r)) => panic!("{name}: got {r}, want {code}"),
            (None, Err(e)) => panic!("{name}: {e}"),
            (None, Ok(r)) => {
                if let Some(d) = subset(r, &c["result"], "result") {
                    panic!("{name}: {d}");
                }
            }
        }
        for (p, want) in c["files_after"].as_object().into_iter().flatten() {
            assert_eq!(a.fs().read_to_string(p).unwrap(), want.as_str().unwrap(), "{name}: {p}");
        }
        for (k, want) in c["kv_after"].as_object().into_iter().flatten() {
            assert_eq!(&a.kv().get::<Value>(k).unwrap().unwrap(), want, "{name}: kv {k}");
        }
        // One record, under the tool's name, with its arguments; an error
        // (or a failing script) is recorded as one.
        let calls = a.tools().list(&ToolQuery::default()).unwrap();
        assert_eq!(calls.len(), 1, "{name}: log {calls:?}");
        assert_eq!(calls[0].name, tool, "{name}");
        assert_eq!(calls[0].parameters.as_ref(), Some(input), "{name}: logged parameters");
        let failed = want_err.is_some() || (tool == "bash" && c["result"]["exit_code"] != 0);
        let want_status = if failed { ToolStatus::Error } else { ToolStatus::Success };
        assert_eq!(calls[0].status, want_status, "{name}: {:?}", calls[0]);
        if tool == "read_file" && !failed {
            // The log keeps the file's path and size, not its content.
            let r = res.unwrap();
            assert_eq!(calls[0].result, Some(json!({"path": r["path"], "size": r["size"]})), "{name}");
        }
        a.close().unwrap();
    }
}

#[test]
fn specs_are_the_spec_files() {
    let f = spec_file("agent-tools.json");
    let want = f["tools"].as_array().unwrap();
    let got = specs();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.name, w["name"]);
        assert_eq!(g.description, w["description"]);
        assert_eq!(g.writes, w["writes"]);
        assert_eq!(g.input_schema, w["input_schema"], "{}", g.name);
    }
}

#[test]
fn options_select_tools_and_the_sandbox() {
    let a = common::temp_agent();
    let ro = AgentTools::new(&a, ToolOptions { read_only: true, ..Default::default() });
    let names: Vec<&str> = ro.specs().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["read_file", "list", "search", "kv_get"]);
    let e = ro.call("write_file", &json!({"path": "/x", "content": ""})).unwrap_err();
    assert_eq!(e.code(), Some("EINVAL"), "a tool not offered: {e}");

    let only = AgentTools::new(
        &a,
        ToolOptions { only: Some(vec!["bash".into()]), deny: vec!["rm".into()], no_log: true, ..Default::default() },
    );
    let r = only.call("bash", &json!({"command": "echo x > /f; rm /f"})).unwrap();
    assert_ne!(r["exit_code"], 0, "denied rm ran: {r}");
    assert!(a.fs().exists("/f").unwrap(), "rm was denied, /f stays");

    // Schema checks: a wrong type, an integer out of range; the message
    // says what is wrong.
    let all = AgentTools::new(&a, ToolOptions { no_log: true, ..Default::default() });
    let e = all.call("search", &json!({"pattern": "x", "max_results": 0})).unwrap_err();
    assert_eq!(e.code(), Some("EINVAL"));
    assert!(e.to_string().contains("max_results must be between 1 and 1000"), "{e}");
    let e = all.call("edit_file", &json!({"path": "/f", "old_string": 1, "new_string": "y"})).unwrap_err();
    assert!(e.to_string().contains("old_string must be a string"), "{e}");
    // no_log: nothing was recorded by these calls.
    assert!(a.tools().list(&ToolQuery::default()).unwrap().is_empty());

    // A long output is cut in the log, never in the result.
    let logged = AgentTools::new(&a, ToolOptions::default());
    let r = logged.call("bash", &json!({"command": "seq 1 3000"})).unwrap();
    let out = r["stdout"].as_str().unwrap();
    assert!(out.len() > 4096 && out.ends_with("3000\n"));
    let calls = a.tools().list(&ToolQuery::default()).unwrap();
    let kept = calls[0].result.as_ref().unwrap()["stdout"].as_str().unwrap();
    assert!(kept.len() < out.len() && kept.contains("more bytes]"), "{kept:.80}");
    a.close().unwrap();
}
