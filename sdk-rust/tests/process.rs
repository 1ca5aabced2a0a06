//! Processes and persistent shells (ProcessService), blocking and async,
//! over stdio and a real `agentfs serve http`: the shared conformance
//! cases of spec/process/cases.json, then list/kill by pid and bindings.

mod common;

use agentfs::{AgentFS, Binding, ExecOptions, Options, SpawnOptions, Stream};
use common::{local, Server};
use serde_json::{json, Value};

fn cases() -> Vec<Value> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/process/cases.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn expect(c: &Value) -> (i32, String, String) {
    let e = &c["expect"];
    (
        e["exit_code"].as_i64().unwrap() as i32,
        e["stdout"].as_str().unwrap().into(),
        e["stderr"].as_str().unwrap().into(),
    )
}

fn run_case(a: &AgentFS, c: &Value) -> (i32, String, String) {
    if let Some(scripts) = c["shell"].as_array() {
        let sh = a.shell(&ExecOptions::default()).unwrap();
        let mut last = None;
        for s in scripts {
            last = Some(sh.run(s.as_str().unwrap()).unwrap());
        }
        sh.close().unwrap();
        let r = last.unwrap();
        return (r.exit_code, String::from_utf8(r.stdout).unwrap(), String::from_utf8(r.stderr).unwrap());
    }
    let opts = SpawnOptions { keep_stdin_open: c.get("write").is_some(), ..Default::default() };
    let mut p = a.spawn(c["script"].as_str().unwrap(), &opts).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if let Some(w) = c["wait_for"].as_str() {
        while !String::from_utf8_lossy(&out).contains(w) {
            let (cs, done) = p.read().unwrap();
            assert!(!done, "{}: ended early", c["name"]);
            for ch in cs {
                match ch.stream {
                    Stream::Stdout => out.extend(ch.data),
                    Stream::Stderr => err.extend(ch.data),
                }
            }
        }
    }
    if let Some(w) = c["write"].as_str() {
        p.write(w.as_bytes()).unwrap();
        p.close_stdin().unwrap();
    }
    if let Some(k) = c["kill"].as_i64() {
        p.kill(k as i32).unwrap();
    }
    let r = p.wait().unwrap();
    out.extend(r.stdout);
    err.extend(r.stderr);
    (r.exit_code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

fn conformance(a: &AgentFS) {
    for c in cases() {
        assert_eq!(run_case(a, &c), expect(&c), "{}", c["name"]);
    }
    // List and kill by pid.
    let mut p = a.spawn("sleep 3600", &SpawnOptions::default()).unwrap();
    let l = a.processes().unwrap();
    assert_eq!(l.iter().map(|i| (i.pid, i.running)).collect::<Vec<_>>(), vec![(p.pid(), true)]);
    a.kill(p.pid(), 2).unwrap();
    let r = p.wait().unwrap();
    assert_eq!((r.exit_code, r.signal), (130, 2));
    assert!(a.processes().unwrap().is_empty());
}

#[test]
fn stdio_conformance() {
    let a = AgentFS::open(local(Options::default())).unwrap();
    conformance(&a);
    // A spawned script and a shell call host bindings.
    let double = Binding::new(|v| Ok(json!(v["n"].as_i64().unwrap_or(0) * 2)))
        .schema(json!({"type": "object", "properties": {"n": {"type": "number"}}}));
    let mut opts = SpawnOptions::default();
    opts.exec.bindings.insert("double".into(), double.clone());
    assert_eq!(a.spawn("double --n 21", &opts).unwrap().wait().unwrap().stdout, b"42\n");
    let sh = a.shell(&opts.exec).unwrap();
    sh.run("N=4").unwrap();
    assert_eq!(sh.run("double --n \"$N\"").unwrap().stdout, b"8\n");
    sh.close().unwrap();
    a.close().unwrap();
}

const STREAM: &str = "/agentfs.v1.ProcessService/StreamProcess";
const READ: &str = "/agentfs.v1.ProcessService/ReadProcess";

/// The StreamProcess calls of `conformance`: one per spawned case, per
/// shell script, and the one it kills.
fn streams_of_conformance() -> usize {
    cases().iter().map(|c| c["shell"].as_array().map_or(1, |s| s.len())).sum::<usize>() + 1
}

/// Waits until the server logged `n` StreamProcess calls (it logs one
/// when its handler returns, just after it sent the exit).
fn wait_streams(srv: &Server, n: usize) {
    while srv.requests(STREAM) < n {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn http_conformance() {
    let srv = Server::start_logged();
    let a = AgentFS::open(srv.agent("procs", None)).unwrap();
    conformance(&a);
    a.close().unwrap();
    // The output came by StreamProcess, never by long-poll.
    wait_streams(&srv, streams_of_conformance());
    assert_eq!(srv.requests(READ), 0);
    // A stream read to its end leaves its connection to the next call.
    assert!(srv.connections() < streams_of_conformance() / 2, "{} connections", srv.connections());
}

/// Closing (or dropping) a streamed process's handle closes its HTTP
/// response, and the server kills the process; closing the agent does so
/// for the rest. A detached process is long-polled and outlives its
/// handle. A process that does not start ends its stream with the error.
#[test]
fn http_close_kills() {
    let srv = Server::start_logged();
    let a = AgentFS::open(srv.agent("closekill", None)).unwrap();
    let mut p = a.spawn("echo first; sleep 3600", &SpawnOptions::default()).unwrap();
    let mut q = a.spawn("echo second; sleep 3600", &SpawnOptions::default()).unwrap();
    let d = a.spawn("sleep 3600", &SpawnOptions { detach: true, ..Default::default() }).unwrap();
    assert_eq!(p.read().unwrap().0[0].data, b"first\n");
    assert_eq!(q.read().unwrap().0[0].data, b"second\n");
    let (pp, qp, dp) = (p.pid(), q.pid(), d.pid());
    let pids = |a: &AgentFS| {
        let mut v: Vec<u64> = a.processes().unwrap().iter().filter(|i| i.running).map(|i| i.pid).collect();
        v.sort();
        v
    };
    assert_eq!(pids(&a), vec![pp, qp, dp]);
    p.close();
    d.close();
    while pids(&a) != vec![qp, dp] {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let e = a.spawn(
        "echo ran",
        &SpawnOptions {
            exec: ExecOptions { readable: Some(vec!["work".into()]), writable: Some(vec![]), ..Default::default() },
            ..Default::default()
        },
    );
    let e = e.err().expect("an invalid policy started");
    assert_eq!(agentfs::ErrorExt::errno(&e), Some(22), "EINVAL: {e}");
    a.close().unwrap();
    assert!(q.read().is_err(), "the stream of a closed agent still reads");
    let b = AgentFS::open(srv.agent("closekill", None)).unwrap();
    while pids(&b) != vec![dp] {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    b.kill(dp, 9).unwrap();
    assert_eq!(srv.requests(READ), 0);
    b.close().unwrap();
}

#[cfg(feature = "tokio")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_exec_spawn_shell() {
    for http in [false, true] {
        let srv = Server::start(None);
        let opts = if http { srv.agent("aio", None) } else { local(Options::default()) };
        let a = agentfs::aio::AgentFS::open(opts).await.unwrap();
        let r = a
            .exec("cat; echo e >&2; exit 3", &ExecOptions { stdin: b"in\n".to_vec(), ..Default::default() })
            .await
            .unwrap();
        assert_eq!((r.exit_code, r.stdout.as_slice(), r.stderr.as_slice()), (3, &b"in\n"[..], &b"e\n"[..]));
        let mut p = a
            .spawn(
                "echo ready; read -r x; echo \"got $x\"",
                &SpawnOptions { keep_stdin_open: true, ..Default::default() },
            )
            .await
            .unwrap();
        let mut out = Vec::new();
        while !out.ends_with(b"ready\n") {
            let (cs, done) = p.read().await.unwrap();
            assert!(!done);
            cs.into_iter().for_each(|c| out.extend(c.data));
        }
        p.write(b"hi\n").await.unwrap();
        p.close_stdin().await.unwrap();
        assert_eq!(p.wait().await.unwrap().stdout, b"got hi\n");
        let sh = a.shell(&ExecOptions::default()).await.unwrap();
        sh.run("cd /; mkdir -p q; cd q; A=1").await.unwrap();
        assert_eq!(sh.run("pwd; echo $A").await.unwrap().stdout, b"/q\n1\n");
        sh.close().await.unwrap();
        let mut k = a.spawn("sleep 3600", &SpawnOptions::default()).await.unwrap();
        assert_eq!(a.processes().await.unwrap().len(), 1);
        k.kill(0).await.unwrap();
        assert_eq!(k.wait().await.unwrap().exit_code, 137);
        a.close().await.unwrap();
    }
}

/// agentfs::aio: closing a streamed process's handle over HTTP kills it.
#[cfg(feature = "tokio")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_http_close_kills() {
    let srv = Server::start_logged();
    let a = agentfs::aio::AgentFS::open(srv.agent("aio-close", None)).await.unwrap();
    let mut p = a.spawn("echo first; sleep 3600", &SpawnOptions::default()).await.unwrap();
    let (cs, done) = p.read().await.unwrap();
    assert_eq!((cs[0].data.as_slice(), done), (&b"first\n"[..], false));
    assert_eq!(a.processes().await.unwrap().len(), 1);
    p.close();
    while !a.processes().await.unwrap().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // A read abandoned while it waits for output that never comes (the
    // timeout drops its future), then the handle dropped: the process
    // still goes.
    let mut q = a.spawn("sleep 3600", &SpawnOptions::default()).await.unwrap();
    assert!(tokio::time::timeout(std::time::Duration::from_millis(20), q.read()).await.is_err());
    assert_eq!(a.processes().await.unwrap().len(), 1);
    drop(q);
    while !a.processes().await.unwrap().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let mut k = a.spawn("echo x; exit 4", &SpawnOptions::default()).await.unwrap();
    assert_eq!(k.wait().await.unwrap().exit_code, 4);
    wait_streams(&srv, 3);
    assert_eq!(srv.requests(READ), 0);
    a.close().await.unwrap();
}

/// Over stdio a spawned process streams (StreamProcess): its first line
/// arrives while the script waits on stdin, and closing the agent ends the
/// stream and the script (close returns; the engine does not wait for the
/// endless loop).
#[test]
fn stdio_stream_then_close_kills() {
    let a = AgentFS::open(local(Options::default())).unwrap();
    let mut p = a
        .spawn(
            "echo first; read -r x; echo got $x; while :; do sleep 3600; done",
            &SpawnOptions { keep_stdin_open: true, ..Default::default() },
        )
        .unwrap();
    let (cs, done) = p.read().unwrap();
    assert_eq!((cs[0].data.as_slice(), done), (&b"first\n"[..], false));
    p.write(b"a\n").unwrap();
    let mut out = Vec::new();
    while !out.ends_with(b"got a\n") {
        let (cs, done) = p.read().unwrap();
        assert!(!done);
        cs.into_iter().for_each(|c| out.extend(c.data));
    }
    a.close().unwrap();
    assert!(p.read().is_err(), "the stream of a closed agent still reads");
}
