//! Agent sessions (SessionService) against the scripted model server
//! (core/cmd/fakemodel, bin/fakemodel): the shared case of
//! spec/sessions/case.json for both wire formats, each prompt in a new
//! engine (the second resumes the session from the database).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use agentfs::{AgentFS, Options, SessionOptions, ToolQuery};
use common::{local, scratch};
use serde_json::Value;

fn case() -> Value {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/sessions/case.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// bin/fakemodel (or AGENTFS_FAKEMODEL) serving the case's script.
struct FakeModel {
    child: Child,
    url: String,
}

impl FakeModel {
    fn start(dir: &Path, provider: &str) -> FakeModel {
        let exe = std::env::var_os("AGENTFS_FAKEMODEL")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../bin/fakemodel"));
        assert!(exe.exists(), "no fake model server at {exe:?}: run `go tool task build` or set AGENTFS_FAKEMODEL");
        let mut script = case()["script"].clone();
        script["provider"] = provider.into();
        let file = dir.join(format!("script-{provider}.json"));
        std::fs::write(&file, script.to_string()).unwrap();
        let mut child = Command::new(exe).arg(&file).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        FakeModel { child, url: line.trim().to_string() }
    }

    /// GET /_fakemodel/failures (plain HTTP/1.0 over a socket).
    fn status(&self) -> Value {
        let addr = self.url.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "GET /_fakemodel/failures HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut body = String::new();
        s.read_to_string(&mut body).unwrap();
        serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap()).unwrap()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn run_case(provider: &str) {
    let c = case();
    let dir = scratch("session");
    let model = FakeModel::start(&dir, provider);
    let path = dir.join("a.db");
    for p in c["prompts"].as_array().unwrap() {
        let agent = AgentFS::open(local(Options { path: Some(path.clone()), ..Default::default() })).unwrap();
        let writable = p["writable"].as_array().map(|w| w.iter().map(|x| x.as_str().unwrap().to_string()).collect());
        let s = agent
            .open_session(&SessionOptions {
                id: c["session_id"].as_str().unwrap().into(),
                provider: provider.into(),
                model: c["script"]["model"].as_str().unwrap().into(),
                base_url: model.url.clone(),
                api_key: c["script"]["api_key"].as_str().unwrap().into(),
                writable,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(s.id(), c["session_id"].as_str().unwrap());
        let events: Vec<_> = s.prompt(p["text"].as_str().unwrap()).unwrap().map(|e| e.unwrap()).collect();
        let text: String = events.iter().filter(|e| e.r#type == "text").map(|e| e.text.as_str()).collect();
        assert_eq!(text, p["want_text"].as_str().unwrap(), "{events:?}");
        assert_eq!(events.last().unwrap().r#type, "done");
        let tools: Vec<&str> =
            events.iter().filter(|e| e.r#type == "tool_call").map(|e| e.tool_name.as_str()).collect();
        let want: Vec<&str> = p["want_tools"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        assert_eq!(tools, want);
        let results: Vec<_> = events.iter().filter(|e| e.r#type == "tool_result").collect();
        match p["want_tool_error"].as_str() {
            Some(code) => assert!(results.iter().any(|e| e.is_error && e.result_json.contains(code)), "{results:?}"),
            None => assert!(results.iter().all(|e| !e.is_error), "{results:?}"),
        }
        for (f, content) in p["want_files"].as_object().unwrap() {
            assert_eq!(agent.fs().read_to_string(f).unwrap(), content.as_str().unwrap());
        }
        if let Some(log) = p["want_log"].as_array() {
            let names: Vec<String> = agent
                .tools()
                .list(&ToolQuery { ascending: true, ..Default::default() })
                .unwrap()
                .into_iter()
                .map(|c| c.name)
                .collect();
            let want: Vec<&str> = log.iter().map(|x| x.as_str().unwrap()).collect();
            assert_eq!(names, want);
        }
    }
    let st = model.status();
    assert_eq!(st["failures"], serde_json::json!([]), "{st}");
    assert_eq!(st["turns_left"], 0);
}

#[test]
fn session_case_openai() {
    run_case("openai");
}

#[test]
fn session_case_anthropic() {
    run_case("anthropic");
}

#[test]
fn session_errors() {
    let agent = common::temp_agent();
    let err = agent.open_session(&SessionOptions { provider: "openai".into(), ..Default::default() }).err().unwrap();
    assert!(err.to_string().contains("no model"), "{err}");
    let s = agent
        .open_session(&SessionOptions {
            provider: "openai".into(),
            model: "m".into(),
            base_url: "http://127.0.0.1:1".into(),
            ..Default::default()
        })
        .unwrap();
    let kinds: Vec<String> = s.prompt("hi").unwrap().map(|e| e.unwrap().r#type).collect();
    assert_eq!(kinds, ["error", "done"]);
    let err = s.run("again").unwrap_err();
    assert!(err.to_string().contains("connection refused"), "{err}");
    assert_eq!(agent.sessions().unwrap().len(), 0);
}
