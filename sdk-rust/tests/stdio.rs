//! The blocking API over the stdio transport, against the real engine.

mod common;

use std::io::ErrorKind;
use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::Duration;

use agentfs::{AgentFS, ErrorExt, Options};
use common::{local, scratch, temp_agent};

#[test]
fn whole_api() {
    let a = temp_agent();
    common::exercise(&a);
    a.close().unwrap();
}

#[test]
fn temporary_database_is_removed_at_close() {
    let a = temp_agent();
    let info = a.info().unwrap();
    assert_eq!(info.schema_version, "0.4");
    let path = std::path::PathBuf::from(&info.path);
    assert!(path.exists(), "{path:?}");
    a.fs().write_file("/x", "y").unwrap();
    let fs = a.fs();
    a.close().unwrap();
    assert!(!path.exists(), "temporary database {path:?} still there after close");
    // Handles that outlive close fail cleanly.
    let e = fs.stat("/x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    assert!(e.to_string().contains("connection is closed"), "{e}");
}

#[test]
fn id_and_path_persist() {
    let dir = scratch("persist");
    let opts = local(Options { dir: Some(dir.clone()), ..Options::id("demo") });
    let a = AgentFS::open(opts.clone()).unwrap();
    a.fs().write_file("/kept.txt", "still here").unwrap();
    a.kv().set("k", &42).unwrap();
    a.close().unwrap();
    assert!(dir.join(".agentfs/demo.db").exists());

    let a = AgentFS::open(opts).unwrap();
    assert_eq!(a.fs().read_file("/kept.txt").unwrap(), b"still here");
    assert_eq!(a.kv().get::<i64>("k").unwrap(), Some(42));
    drop(a); // dropping closes too

    let db = dir.join("by-path.db");
    let a = AgentFS::open(local(Options::path(&db))).unwrap();
    a.fs().write_file("/p", "q").unwrap();
    a.close().unwrap();
    let a = AgentFS::open(local(Options { no_create: true, read_only: true, ..Options::path(&db) })).unwrap();
    assert_eq!(a.fs().read_file("/p").unwrap(), b"q");
    let e = a.fs().write_file("/p", "w").unwrap_err();
    assert_eq!((e.kind(), e.code()), (ErrorKind::ReadOnlyFilesystem, Some("EROFS")), "{e}");
    a.close().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn open_failures_say_why() {
    let dir = scratch("nocreate");
    let e = AgentFS::open(local(Options { dir: Some(dir.clone()), no_create: true, ..Options::id("absent") }))
        .err()
        .expect("opening a missing agent with no_create fails");
    assert!(e.to_string().contains("absent"), "{e}");

    let e = AgentFS::open(Options { engine: Some("/nonexistent/agentfs".into()), ..Default::default() }).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let msg = e.to_string();
    assert!(msg.contains("/nonexistent/agentfs") && msg.contains("go install") && msg.contains("AGENTFS_BIN"), "{msg}");

    // A binary that is not an engine: the handshake fails, not hangs.
    let e = AgentFS::open(Options { engine: Some("/bin/true".into()), ..Default::default() }).err().unwrap();
    assert!(e.to_string().contains("handshake"), "{e}");

    let e = AgentFS::open(local(Options { path: Some(dir.join("x.db")), ..Options::id("x") })).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_calls_from_threads() {
    let a = temp_agent();
    let threads = 8;
    let per = 150;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let fs = a.fs();
            let kv = a.kv();
            let start = Arc::clone(&start);
            thread::spawn(move || {
                start.wait();
                fs.mkdir(format!("/t{t}")).unwrap();
                for i in 0..per {
                    let p = format!("/t{t}/f{i}");
                    let body = format!("thread {t} file {i}");
                    fs.write_file(&p, &body).unwrap();
                    assert_eq!(fs.read_to_string(&p).unwrap(), body);
                    kv.set(format!("t{t}/{i}"), &i).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    for t in 0..threads {
        assert_eq!(a.fs().readdir(format!("/t{t}")).unwrap().len(), per);
        assert_eq!(a.kv().list(format!("t{t}/")).unwrap().len(), per);
    }
    a.close().unwrap();
}

#[test]
fn engine_killed_mid_call_fails_the_calls() {
    let a = temp_agent();
    let pid = a.engine_pid().unwrap();
    let sandbox = agentfs::clients::SandboxServiceClient::new(a.transport());
    // A call that is in flight until the engine dies: a sandbox sleep.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let r = sandbox
            .exec(&agentfs::pb::ExecRequest { script: "echo -n x > /started; sleep 60".into(), ..Default::default() });
        let _ = tx.send(r);
    });
    // The script has started: the call is in flight in the engine.
    common::wait_until_exists(&a, "/started");
    let status = std::process::Command::new("sh").args(["-c", &format!("kill -9 {pid}")]).status().unwrap();
    assert!(status.success());
    // A hang would block here; the bound only turns a hang into a failure.
    let r = rx.recv_timeout(Duration::from_secs(60)).expect("the in-flight call hangs after the engine died");
    let e = r.expect_err("exec cannot succeed once the engine is killed");
    assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("exited") && msg.contains("signal"), "{msg}");
    // Later calls fail at once with the same reason.
    let e = a.fs().stat("/").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    assert!(e.to_string().contains("exited"), "{e}");
    drop(a);
}

#[test]
fn generated_clients_reach_everything() {
    let a = temp_agent();
    let agent = agentfs::clients::AgentServiceClient::new(a.transport());
    a.fs().write_file("/a", "1").unwrap();
    let q = agent
        .query(&agentfs::pb::QueryRequest { sql: "SELECT count(*) FROM fs_inode".into(), params: vec![] })
        .unwrap();
    assert_eq!(q.rows.len(), 1);
    let fsck = agent.fsck(&agentfs::pb::FsckRequest { repair: false }).unwrap();
    assert!(fsck.ok, "{fsck:?}");
    let sandbox = agentfs::clients::SandboxServiceClient::new(a.transport());
    let r = sandbox
        .exec(&agentfs::pb::ExecRequest { script: "cat /a; echo -n x > /b".into(), ..Default::default() })
        .unwrap();
    assert_eq!((r.exit_code, r.stdout.as_slice()), (0, &b"1"[..]));
    assert_eq!(a.fs().read_file("/b").unwrap(), b"x");
    // An unknown procedure is the engine's UNIMPLEMENTED.
    let e = a.transport().call("/agentfs.v1.FilesystemService/Nope", vec![]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert_eq!(e.errno(), None);
    a.close().unwrap();
}

#[test]
fn conformance_vectors() {
    let vectors = common::vectors();
    assert!(vectors.len() >= 10, "spec/vectors has {} files", vectors.len());
    let mut failures = Vec::new();
    for (file, v) in &vectors {
        let a = temp_agent();
        failures.extend(common::run_vector(&a, file, v));
        a.close().unwrap();
    }
    assert!(failures.is_empty(), "{} vector steps failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn large_files_whole_and_through_handles() {
    use std::io::{Read, Write};
    let a = temp_agent();
    let fs = a.fs();
    let big: Vec<u8> = (0..24u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    fs.write_file("/big", &big).unwrap();
    assert_eq!(fs.stat("/big").unwrap().size, big.len() as u64);
    assert!(fs.read_file("/big").unwrap() == big, "24 MiB read back differs");
    let mut f = fs.create("/big2").unwrap();
    for part in big.chunks(1 << 20) {
        f.write_all(part).unwrap();
    }
    f.close().unwrap();
    let mut back = Vec::new();
    fs.open("/big2").unwrap().read_to_end(&mut back).unwrap();
    assert!(back == big, "24 MiB written through a handle differs");
    a.close().unwrap();
}

#[test]
fn exec_bindings_call_back_into_this_process() {
    use agentfs::{Binding, ExecOptions};
    use serde_json::json;
    use std::sync::Mutex;

    let a = Arc::new(temp_agent());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut opts = ExecOptions::default();
    {
        let (seen, agent) = (Arc::clone(&seen), Arc::clone(&a));
        opts.bindings.insert(
            "lookup".into(),
            Binding::new(move |args| {
                seen.lock().unwrap().push(args.clone());
                // A binding may call the agent: it runs on its own thread.
                agent.fs().write_file("/looked-up", args["id"].to_string()).map_err(|e| e.to_string())?;
                Ok(json!({"id": args["id"], "name": "ada"}))
            })
            .schema(json!({"type": "object", "properties": {"id": {"type": "integer"}}})),
        );
    }
    opts.bindings.insert("fails".into(), Binding::new(|_| Err("no such user".into())));
    let r = a.exec("lookup --id 7 > /out.json; cat /out.json; fails || echo failed:$?; echo done", &opts).unwrap();
    let stdout = String::from_utf8(r.stdout).unwrap();
    let stderr = String::from_utf8(r.stderr).unwrap();
    assert_eq!(r.exit_code, 0, "{stderr}");
    assert_eq!(*seen.lock().unwrap(), vec![json!({"id": 7})]);
    let (first, rest) = stdout.split_once('\n').unwrap();
    assert_eq!(serde_json::from_str::<serde_json::Value>(first).unwrap(), json!({"id": 7, "name": "ada"}));
    assert_eq!(rest, "failed:1\ndone\n");
    assert!(stderr.contains("fails: no such user"), "{stderr}");
    assert_eq!(a.fs().read_to_string("/looked-up").unwrap(), "7");
    // After the script the bindings are gone: an unknown command.
    let r = a.exec("lookup --id 1; echo $?", &ExecOptions::default()).unwrap();
    assert_eq!(r.stdout, b"127\n");
}
