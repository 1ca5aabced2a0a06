//! The blocking API over HTTP, against a real `agentfs serve http`.

mod common;

use std::io::ErrorKind;
use std::thread;

use agentfs::{AgentFS, ErrorExt, Options};
use common::{local, Server};

#[test]
fn whole_api() {
    let srv = Server::start(None);
    let a = AgentFS::open(srv.agent("whole", None)).unwrap();
    assert_eq!(a.engine_pid(), None);
    common::exercise(&a);
    a.close().unwrap();
}

#[test]
fn bearer_token_is_required_and_checked() {
    let srv = Server::start(Some("s3cret"));
    for token in [None, Some("wrong")] {
        let e = AgentFS::open(srv.agent("x", token)).err().expect("a call without the right token fails");
        assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
        assert_eq!(e.errno(), None);
        assert!(e.to_string().contains("bearer token"), "{e}");
    }
    let a = AgentFS::open(srv.agent("x", Some("s3cret"))).unwrap();
    a.fs().write_file("/t", "ok").unwrap();
    assert_eq!(a.fs().read_file("/t").unwrap(), b"ok");
}

#[test]
fn agents_are_separate_and_missing_ones_fail() {
    let srv = Server::start(None);
    let one = AgentFS::open(srv.agent("one", None)).unwrap();
    let two = AgentFS::open(srv.agent("two", None)).unwrap();
    one.fs().write_file("/f", "1").unwrap();
    assert_eq!(two.fs().read_file("/f").unwrap_err().kind(), ErrorKind::NotFound);
    assert_eq!(one.info().unwrap().id, "one");
    let e = AgentFS::open(Options { no_create: true, ..srv.agent("absent", None) }).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    let e = AgentFS::open(Options { url: Some(srv.url.clone()), ..Default::default() }).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    // Nobody listens: a connection error, not a hang.
    let e = AgentFS::open(Options::http("http://127.0.0.1:1", "x")).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
}

#[test]
fn concurrent_calls_from_threads() {
    let srv = Server::start(None);
    let a = AgentFS::open(srv.agent("conc", None)).unwrap();
    let handles: Vec<_> = (0..6)
        .map(|t| {
            let fs = a.fs();
            thread::spawn(move || {
                for i in 0..50 {
                    let p = format!("/t{t}-{i}");
                    fs.write_file(&p, p.as_bytes()).unwrap();
                    assert_eq!(fs.read_file(&p).unwrap(), p.as_bytes());
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(a.fs().readdir("/").unwrap().len(), 300);
}

#[test]
fn conformance_vectors() {
    let srv = Server::start(None);
    let mut failures = Vec::new();
    for (i, (file, v)) in common::vectors().iter().enumerate() {
        let a = AgentFS::open(srv.agent(&format!("vec{i}"), None)).unwrap();
        failures.extend(common::run_vector(&a, file, v));
    }
    assert!(failures.is_empty(), "{} vector steps failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn same_database_through_both_doors() {
    let srv = Server::start(None);
    let a = AgentFS::open(srv.agent("shared", None)).unwrap();
    let data: Vec<u8> = (0..50_000u32).map(|i| (i * 7 % 251) as u8).collect();
    a.fs().write_file("/blob", &data).unwrap();
    a.kv().set("k", &"v").unwrap();
    // The server's database file, opened by a local engine.
    let b = AgentFS::open(local(Options::path(srv.data.join("shared.db")))).unwrap();
    assert_eq!(b.fs().read_file("/blob").unwrap(), data);
    assert_eq!(b.kv().get::<String>("k").unwrap().as_deref(), Some("v"));
    b.close().unwrap();
}

#[test]
fn server_killed_mid_call_fails_the_call() {
    let mut srv = Server::start(None);
    let a = AgentFS::open(srv.agent("k", None)).unwrap();
    let sandbox = agentfs::clients::SandboxServiceClient::new(a.transport());
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let _ =
            tx.send(sandbox.exec(&agentfs::pb::ExecRequest {
                script: "echo -n x > /started; sleep 60".into(),
                ..Default::default()
            }));
    });
    // The script has started (the call is in flight); then the server dies.
    common::wait_until_exists(&a, "/started");
    srv.kill();
    let r = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the call hangs after the server died");
    let e = r.expect_err("exec cannot succeed once the server is killed");
    assert!(e.to_string().contains("POST"), "{e}");
    let e = a.fs().stat("/").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused, "{e}");
}

#[test]
fn token_from_the_environment() {
    // Runs this binary again with AGENTFS_TOKEN set (changing the
    // environment of the multi-threaded test process is not safe).
    if let Ok(url) = std::env::var("AGENTFS_RS_TOKEN_CHILD") {
        let a = AgentFS::open(Options::http(url, "env")).unwrap();
        a.fs().write_file("/t", "from env").unwrap();
        println!("CHILD-OK");
        return;
    }
    let srv = Server::start(Some("envtok"));
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "token_from_the_environment", "--nocapture", "--test-threads=1"])
        .env("AGENTFS_RS_TOKEN_CHILD", &srv.url)
        .env("AGENTFS_TOKEN", "envtok")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("CHILD-OK"), "{stdout} {}", String::from_utf8_lossy(&out.stderr));
    let a = AgentFS::open(srv.agent("env", Some("envtok"))).unwrap();
    assert_eq!(a.fs().read_file("/t").unwrap(), b"from env");
}

#[test]
fn exec_runs_scripts_and_refuses_bindings() {
    let srv = Server::start(None);
    let a = AgentFS::open(srv.agent("sh", None)).unwrap();
    let r = a.exec("echo hi > /f; cat /f", &agentfs::ExecOptions::default()).unwrap();
    assert_eq!(r.stdout, b"hi\n");
    let mut opts = agentfs::ExecOptions::default();
    opts.bindings.insert("x".into(), agentfs::Binding::new(|_| Ok(serde_json::Value::Null)));
    let e = a.exec("x", &opts).unwrap_err();
    assert!(e.to_string().contains("bindings need stdio"), "{e}");
}
