//! The async API (feature "tokio") over both transports.

mod common;

use std::io::ErrorKind;
use std::time::Duration;

use agentfs::aio::AgentFS;
use agentfs::{ErrorExt, Options, RemoveOptions, ToolRecord};
use common::{local, Server};
use serde_json::{json, Value};

async fn exercise(a: &AgentFS) {
    let fs = a.fs();
    fs.mkdir_all("/d/e").await.unwrap();
    fs.write_file("/d/a.txt", "hello").await.unwrap();
    fs.append_file("/d/a.txt", "!").await.unwrap();
    assert_eq!(fs.read_to_string("/d/a.txt").await.unwrap(), "hello!");
    let m = fs.stat("/d/a.txt").await.unwrap();
    assert_eq!((m.len(), m.permissions(), m.is_file()), (6, 0o644, true));
    let e = fs.stat("/d/none").await.unwrap_err();
    assert_eq!((e.kind(), e.errno()), (ErrorKind::NotFound, Some(2)));
    assert!(e.to_string().contains("'/d/none'"), "{e}");
    assert_eq!(fs.rmdir("/d").await.unwrap_err().kind(), ErrorKind::DirectoryNotEmpty);
    assert_eq!(fs.readdir("/d").await.unwrap(), ["a.txt", "e"]);
    assert_eq!(fs.readdir_plus("/d").await.unwrap()[0].metadata.size, 6);
    fs.rename("/d/a.txt", "/d/b.txt").await.unwrap();
    fs.copy_file("/d/b.txt", "/d/c.txt").await.unwrap();
    fs.symlink("/d/c.txt", "/d/l").await.unwrap();
    assert_eq!(fs.readlink("/d/l").await.unwrap(), "/d/c.txt");
    fs.link("/d/c.txt", "/d/h").await.unwrap();
    assert_eq!(fs.lstat("/d/c.txt").await.unwrap().nlink, 2);
    fs.chmod("/d/c.txt", 0o640).await.unwrap();
    fs.chown("/d/c.txt", Some(7), Some(8)).await.unwrap();
    fs.utimes("/d/c.txt", Some(std::time::UNIX_EPOCH), None).await.unwrap();
    fs.truncate("/d/c.txt", 2).await.unwrap();
    let m = fs.stat("/d/h").await.unwrap();
    assert_eq!((m.permissions(), m.uid, m.gid, m.size, m.atime), (0o640, 7, 8, 2, std::time::UNIX_EPOCH));
    fs.access("/d/h", 0).await.unwrap();
    assert!(fs.exists("/d/l").await.unwrap());
    fs.unlink("/d/h").await.unwrap();
    assert!(fs.statfs().await.unwrap().inodes > 3);
    fs.remove("/d", RemoveOptions { recursive: true, force: false }).await.unwrap();
    assert!(!fs.exists("/d").await.unwrap());

    let e = fs.create("/f.bin").await.unwrap().pread(0, 1).await.unwrap_err();
    assert_eq!(e.code(), Some("EBADF"), "a write-only handle does not read: {e}");
    let f = fs.open_with("/f.bin", agentfs::OpenOptions::new().read(true).write(true)).await.unwrap();
    assert_eq!(f.pwrite(0, b"abcdef").await.unwrap(), 6);
    f.set_len(4).await.unwrap();
    f.fsync().await.unwrap();
    assert_eq!(f.metadata().await.unwrap().size, 4);
    assert_eq!(f.pread(1, 10).await.unwrap(), b"bcd");
    f.close().await.unwrap();
    let f = fs.open("/f.bin").await.unwrap();
    assert_eq!(f.pread(0, 2).await.unwrap(), b"ab");
    drop(f); // closed in the background

    // tokio's AsyncRead/AsyncWrite/AsyncSeek at a cursor.
    use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
    let mut f = fs.create("/stream.txt").await.unwrap();
    f.write_all(b"0123456789").await.unwrap();
    f.seek(std::io::SeekFrom::Start(4)).await.unwrap();
    f.write_all(b"ab").await.unwrap();
    f.flush().await.unwrap();
    drop(f);
    let mut f = fs.open_with("/stream.txt", agentfs::OpenOptions::new().append(true)).await.unwrap();
    f.write_all(b"!").await.unwrap();
    f.shutdown().await.unwrap();
    f.close().await.unwrap();
    let mut f = fs.open("/stream.txt").await.unwrap();
    let mut s = String::new();
    f.read_to_string(&mut s).await.unwrap();
    assert_eq!(s, "0123ab6789!");
    assert_eq!(f.seek(std::io::SeekFrom::End(-3)).await.unwrap(), 8);
    let mut tail = [0u8; 8];
    let n = f.read(&mut tail).await.unwrap();
    assert_eq!(&tail[..n], b"89!");
    assert_eq!(f.seek(std::io::SeekFrom::Current(-11)).await.unwrap(), 0);
    let e = f.seek(std::io::SeekFrom::Current(-1)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    let mut big = Vec::new();
    tokio::io::copy(&mut &b"x".repeat(100_000)[..], &mut fs.create("/copied").await.unwrap()).await.unwrap();
    fs.open("/copied").await.unwrap().read_to_end(&mut big).await.unwrap();
    assert_eq!(big.len(), 100_000);

    let kv = a.kv();
    kv.set("a/1", &json!({"x": [1, 2]})).await.unwrap();
    kv.set("a/2", &2).await.unwrap();
    assert_eq!(kv.get::<Value>("a/1").await.unwrap(), Some(json!({"x": [1, 2]})));
    assert_eq!(kv.get::<u8>("nope").await.unwrap(), None);
    assert_eq!(kv.list("a/").await.unwrap().len(), 2);
    assert!(kv.delete("a/2").await.unwrap());

    let t = a.tools();
    let id = t.start("s", Some(&json!({"q": 1}))).await.unwrap();
    t.success(id, None).await.unwrap();
    let id2 = t.start("s", None).await.unwrap();
    t.error(id2, "boom").await.unwrap();
    t.record(&ToolRecord { name: "r".into(), started_at: 10, completed_at: 11, ..Default::default() }).await.unwrap();
    assert_eq!(t.get(id2).await.unwrap().unwrap().error.as_deref(), Some("boom"));
    assert_eq!(t.list(&Default::default()).await.unwrap().len(), 3);
    let stats = t.stats().await.unwrap();
    assert_eq!(stats.iter().map(|s| (s.name.as_str(), s.total_calls)).collect::<Vec<_>>(), [("r", 1), ("s", 2)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_whole_api() {
    let a = AgentFS::open(local(Options::default())).await.unwrap();
    assert!(a.engine_pid().is_some());
    exercise(&a).await;
    assert_eq!(a.info().await.unwrap().schema_version, "0.4");
    a.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_whole_api() {
    let srv = Server::start(Some("tok"));
    let e = AgentFS::open(srv.agent("a", None)).await.err().unwrap();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
    let a = AgentFS::open(srv.agent("a", Some("tok"))).await.unwrap();
    exercise(&a).await;
    a.close().await.unwrap();
}

// Many tasks on a single-threaded runtime: every call is in flight at once
// over one stdio connection, and none occupies a thread while it waits.
#[tokio::test(flavor = "current_thread")]
async fn many_concurrent_tasks_on_one_thread() {
    let a = AgentFS::open(local(Options::default())).await.unwrap();
    let mut tasks = Vec::new();
    for t in 0..64 {
        let fs = a.fs();
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                let p = format!("/t{t}-{i}");
                fs.write_file(&p, p.as_bytes()).await.unwrap();
                assert_eq!(fs.read_file(&p).await.unwrap(), p.as_bytes());
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(a.fs().readdir("/").await.unwrap().len(), 640);
    // The blocking API shares the connection.
    assert_eq!(a.blocking().fs().read_file("/t0-0").unwrap(), b"/t0-0");
    a.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_future_cancels_and_connection_goes_on() {
    let dir = common::scratch("cancel");
    let opts = local(Options::path(dir.join("c.db")));
    let a = AgentFS::open(opts.clone()).await.unwrap();
    let sandbox = agentfs::clients::SandboxServiceClient::new(a.transport());
    let req = agentfs::pb::ExecRequest { script: "sleep 30; echo -n late > /late".into(), ..Default::default() };
    // The timeout drops the in-flight exec future, which sends Cancel.
    let r = tokio::time::timeout(Duration::from_millis(300), sandbox.exec_async(&req)).await;
    assert!(r.is_err(), "exec of sleep 30 finished early: {r:?}");
    a.fs().write_file("/after", "ok").await.unwrap();
    assert_eq!(a.fs().read_file("/after").await.unwrap(), b"ok");
    // Shutdown lets the calls in flight finish: had the exec not been
    // cancelled, its script would have written /late by now.
    a.close().await.unwrap();
    let a = AgentFS::open(opts).await.unwrap();
    assert!(!a.fs().exists("/late").await.unwrap(), "the cancelled script ran on");
    assert!(a.fs().exists("/after").await.unwrap());
    a.close().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_killed_mid_call() {
    let a = AgentFS::open(local(Options::default())).await.unwrap();
    let pid = a.engine_pid().unwrap();
    let sandbox = agentfs::clients::SandboxServiceClient::new(a.transport());
    let call = tokio::spawn(async move {
        sandbox
            .exec_async(&agentfs::pb::ExecRequest {
                script: "echo -n x > /started; sleep 60".into(),
                ..Default::default()
            })
            .await
    });
    // Wait until the script runs: the call is in flight in the engine.
    let mut tries = 0;
    while !a.fs().exists("/started").await.unwrap() {
        tries += 1;
        assert!(tries < 3000, "the exec call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(std::process::Command::new("sh").args(["-c", &format!("kill -9 {pid}")]).status().unwrap().success());
    let r = tokio::time::timeout(Duration::from_secs(60), call).await.expect("call hangs after the engine died");
    let e = r.unwrap().expect_err("exec cannot succeed");
    assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
    assert_eq!(a.fs().stat("/").await.unwrap_err().kind(), ErrorKind::BrokenPipe);
}
