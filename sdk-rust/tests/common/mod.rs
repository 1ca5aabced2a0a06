//! Helpers shared by the integration tests: the engine binary, scratch
//! directories, a real `agentfs serve http` server, and the conformance
//! vector runner.
#![allow(dead_code)]

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use agentfs::{AgentFS, ErrorExt, Options, RemoveOptions, ToolRecord};
use serde_json::{json, Value};

/// The engine under test: AGENTFS_BIN (the Taskfile sets it), else the
/// checkout's bin/agentfs.
pub fn engine() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENTFS_BIN") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bin/agentfs");
    assert!(p.exists(), "no engine: build it with `go tool task build` or set AGENTFS_BIN");
    p
}

/// A fresh directory under the system temp dir.
pub fn scratch(tag: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!(
        "agentfs-rs-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Polls until `path` exists (a script in the engine has started); at most
/// 30 s.
pub fn wait_until_exists(a: &AgentFS, path: &str) {
    for _ in 0..3000 {
        if a.fs().exists(path).unwrap() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{path} never appeared");
}

/// Options for a local agent through the engine under test.
pub fn local(opts: Options) -> Options {
    Options { engine: Some(engine()), ..opts }
}

/// A temporary local agent.
pub fn temp_agent() -> AgentFS {
    AgentFS::open(local(Options::default())).expect("open a temporary agent")
}

/// A running `agentfs serve http` on a free loopback port.
pub struct Server {
    child: Child,
    pub url: String,
    pub data: PathBuf,
    /// The server's request log (started with `start_logged`).
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts a server; with a token, every call must carry it.
    pub fn start(token: Option<&str>) -> Server {
        Server::launch(token, true)
    }

    /// Starts a server that logs its requests, for [`Server::requests`].
    pub fn start_logged() -> Server {
        Server::launch(None, false)
    }

    /// How many requests of `procedure` the server logged (a request is
    /// logged when it ends).
    pub fn requests(&self, procedure: &str) -> usize {
        let pat = format!("POST {procedure} ");
        self.log.lock().unwrap().iter().filter(|l| l.contains(&pat)).count()
    }

    /// How many client connections (address:port) the logged requests
    /// came over.
    pub fn connections(&self) -> usize {
        let log = self.log.lock().unwrap();
        let addrs: std::collections::HashSet<&str> = log
            .iter()
            .filter_map(|l| {
                let mut w = l.split_whitespace().skip_while(|w| !w.starts_with("127.0.0.1:"));
                w.next()
            })
            .collect();
        addrs.len()
    }

    fn launch(token: Option<&str>, quiet: bool) -> Server {
        let data = scratch("http");
        let mut cmd = Command::new(engine());
        cmd.args(["serve", "http", "--listen", "127.0.0.1:0"]);
        if quiet {
            cmd.arg("--quiet");
        }
        cmd.arg("--data").arg(&data).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        match token {
            Some(t) => cmd.env("AGENTFS_TOKEN", t),
            None => cmd.env_remove("AGENTFS_TOKEN"),
        };
        let mut child = cmd.spawn().expect("start agentfs serve http");
        let stderr = child.stderr.take().unwrap();
        // The server prints "... at http://127.0.0.1:PORT (...)" once it
        // listens; read it on a thread so a silent server fails the test
        // instead of hanging it.
        let (tx, rx) = mpsc::channel();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !quiet {
                    lines.lock().unwrap().push(line.clone());
                }
                if !sent {
                    if let Some(i) = line.find("at http://") {
                        let url: String = line[i + 3..].split_whitespace().next().unwrap().to_string();
                        let _ = tx.send(url);
                        sent = true;
                    }
                }
            }
        });
        let url = rx.recv_timeout(Duration::from_secs(60)).expect("agentfs serve http did not say where it listens");
        Server { child, url, data, log }
    }

    /// Kills the server (SIGKILL).
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Options for agent `id` on this server.
    pub fn agent(&self, id: &str, token: Option<&str>) -> Options {
        Options { token: token.map(String::from), ..Options::http(&self.url, id) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

pub fn b64encode(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for ch in data.chunks(3) {
        let n = ch.iter().enumerate().fold(0u32, |a, (i, b)| a | (*b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= ch.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

pub fn b64decode(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => break,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// The vectors of spec/vectors, as (file name, parsed JSON).
pub fn vectors() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("spec/vectors") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn data_arg(args: &Value) -> Vec<u8> {
    if let Some(s) = args["data"].as_str() {
        return s.as_bytes().to_vec();
    }
    b64decode(args["data_b64"].as_str().expect("data or data_b64"))
}

fn s<'a>(args: &'a Value, k: &str) -> &'a str {
    args[k].as_str().unwrap_or_else(|| panic!("missing string arg {k}"))
}

fn type_name(m: &agentfs::Metadata) -> &'static str {
    match m.file_type() {
        agentfs::FileType::File => "file",
        agentfs::FileType::Dir => "dir",
        agentfs::FileType::Symlink => "symlink",
        agentfs::FileType::Fifo => "fifo",
        _ => "other",
    }
}

/// Runs one vector step through the idiomatic API; the result object has
/// every field a step may check.
fn run_step(a: &AgentFS, op: &str, args: &Value) -> io::Result<Value> {
    let fs = a.fs();
    let b = |v: bool| v;
    Ok(match op {
        "writeFile" => fs.write_file(s(args, "path"), data_arg(args)).map(|_| json!({}))?,
        "appendFile" => fs.append_file(s(args, "path"), data_arg(args)).map(|_| json!({}))?,
        "readFile" => {
            let d = fs.read_file(s(args, "path"))?;
            let mut o = json!({ "data_b64": b64encode(&d) });
            if let Ok(t) = String::from_utf8(d) {
                o["data"] = json!(t);
            }
            o
        }
        "stat" | "lstat" => {
            let m = if op == "stat" { fs.stat(s(args, "path"))? } else { fs.lstat(s(args, "path"))? };
            json!({"size": m.size, "type": type_name(&m), "perm": m.permissions(), "nlink": m.nlink})
        }
        "mkdir" => {
            if b(args["recursive"].as_bool().unwrap_or(false)) {
                fs.mkdir_all(s(args, "path"))?
            } else {
                fs.mkdir(s(args, "path"))?
            }
            json!({})
        }
        "rmdir" => fs.rmdir(s(args, "path")).map(|_| json!({}))?,
        "unlink" => fs.unlink(s(args, "path")).map(|_| json!({}))?,
        "rm" => {
            let o = RemoveOptions {
                recursive: args["recursive"].as_bool().unwrap_or(false),
                force: args["force"].as_bool().unwrap_or(false),
            };
            fs.remove(s(args, "path"), o).map(|_| json!({}))?
        }
        "rename" => fs.rename(s(args, "from"), s(args, "to")).map(|_| json!({}))?,
        "copyFile" => fs.copy_file(s(args, "from"), s(args, "to")).map(|_| json!({}))?,
        "symlink" => fs.symlink(s(args, "target"), s(args, "path")).map(|_| json!({}))?,
        "readlink" => json!({ "target": fs.readlink(s(args, "path"))? }),
        "link" => fs.link(s(args, "from"), s(args, "to")).map(|_| json!({}))?,
        "chmod" => fs.chmod(s(args, "path"), args["mode"].as_u64().unwrap() as u32).map(|_| json!({}))?,
        "truncate" => {
            let size = args["size"].as_i64().unwrap();
            match u64::try_from(size) {
                Ok(size) => fs.truncate(s(args, "path"), size)?,
                // The idiomatic API takes a u64; a negative size can only
                // be sent through the generated client.
                Err(_) => {
                    let c = agentfs::clients::FilesystemServiceClient::new(a.transport());
                    c.truncate(&agentfs::pb::TruncateRequest { path: s(args, "path").into(), size })?;
                }
            }
            json!({})
        }
        "access" => fs.access(s(args, "path"), 0).map(|_| json!({}))?,
        "readdir" => json!({ "names": fs.readdir(s(args, "path"))? }),
        "exists" => json!({ "value": fs.exists(s(args, "path"))? }),
        "kvSet" => a.kv().set(s(args, "key"), &args["value"]).map(|_| json!({}))?,
        "kvGet" => match a.kv().get::<Value>(s(args, "key"))? {
            Some(v) => json!({ "value": v }),
            None => json!({ "missing": true }),
        },
        "kvList" => {
            let keys: Vec<String> = a.kv().list(s(args, "prefix"))?.into_iter().map(|e| e.key).collect();
            json!({ "keys": keys })
        }
        "kvDelete" => a.kv().delete(s(args, "key")).map(|_| json!({}))?,
        "toolRecord" => {
            let opt = |k: &str| if args[k].is_null() { None } else { Some(args[k].clone()) };
            let rec = ToolRecord {
                name: s(args, "name").into(),
                started_at: args["started_at"].as_i64().unwrap(),
                completed_at: args["completed_at"].as_i64().unwrap(),
                parameters: opt("parameters"),
                result: opt("result"),
                error: args["error"].as_str().map(String::from),
            };
            a.tools().record(&rec).map(|_| json!({}))?
        }
        "toolStats" => {
            let stats: Vec<Value> = a
                .tools()
                .stats()?
                .into_iter()
                .map(|t| json!({"name": t.name, "total_calls": t.total_calls, "successful": t.successful, "failed": t.failed}))
                .collect();
            json!({ "stats": stats })
        }
        other => panic!("unknown vector op {other}"),
    })
}

/// Runs one vector on `a` (a fresh agent); returns the failures.
pub fn run_vector(a: &AgentFS, file: &str, v: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, step) in v["steps"].as_array().unwrap().iter().enumerate() {
        let op = step["op"].as_str().unwrap();
        let expect = &step["expect"];
        let at = format!("{file} step {i} {op} {}", step["args"]);
        match (run_step(a, op, &step["args"]), expect.get("error").and_then(Value::as_str)) {
            (Ok(got), None) => {
                for (k, want) in expect.as_object().unwrap() {
                    if !json_eq(&got[k], want) {
                        failures.push(format!("{at}: {k} = {}, want {want}", got[k]));
                    }
                }
            }
            (Ok(got), Some(code)) => failures.push(format!("{at}: succeeded with {got}, want {code}")),
            (Err(e), None) => failures.push(format!("{at}: {e}")),
            (Err(e), Some(code)) => {
                if e.code() != Some(code) {
                    failures.push(format!("{at}: failed with {e} (code {:?}), want {code}", e.code()));
                }
                let want_kind = agentfs::errno_kind(code, e.errno().unwrap_or(0));
                if e.kind() != want_kind {
                    failures.push(format!("{at}: kind {:?}, want {want_kind:?}", e.kind()));
                }
            }
        }
    }
    failures
}

/// JSON equality where numbers compare by value (1.5 == 1.50, 2 == 2.0).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Exercises most of the API on one agent (shared by the stdio and HTTP
/// tests, so both transports answer the same).
pub fn exercise(a: &AgentFS) {
    use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
    let fs = a.fs();
    a.ping().unwrap();

    fs.mkdir_all("/w/deep/er").unwrap();
    fs.mkdir_all("/w/deep/er").unwrap(); // -p: existing is fine
    let e = fs.mkdir("/w").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(e.raw_os_error(), None, "the path-carrying error is not a bare OS error");
    assert_eq!(e.errno(), Some(17));
    assert!(e.to_string().contains("'/w'"), "{e}");

    fs.write_file("/w/a.txt", "hello").unwrap();
    fs.append_file("/w/a.txt", " world").unwrap();
    assert_eq!(fs.read_to_string("/w/a.txt").unwrap(), "hello world");
    let bin: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    fs.write_file("/w/bin", &bin).unwrap();
    assert_eq!(fs.read_file("/w/bin").unwrap(), bin);

    let e = fs.write_file_with("/w/a.txt", "x", &agentfs::WriteOptions { exclusive: true, ..Default::default() });
    assert_eq!(e.unwrap_err().kind(), ErrorKind::AlreadyExists);
    fs.write_file_with(
        "/x/y/z.txt",
        "p",
        &agentfs::WriteOptions { create_parents: true, mode: 0o600, ..Default::default() },
    )
    .unwrap();
    assert_eq!(fs.stat("/x/y/z.txt").unwrap().permissions(), 0o600);

    let m = fs.stat("/w/a.txt").unwrap();
    assert!(m.is_file() && !m.is_dir());
    assert_eq!((m.len(), m.permissions(), m.nlink), (11, 0o644, 1));
    assert!(fs.stat("/w").unwrap().is_dir());

    // Errors carry the kind, the errno and the path.
    let e = fs.read_file("/w/missing").unwrap_err();
    assert_eq!((e.kind(), e.errno(), e.code()), (ErrorKind::NotFound, Some(2), Some("ENOENT")));
    assert_eq!(e.agentfs_error().unwrap().path, "/w/missing");
    assert_eq!(e.to_string(), "ENOENT: no such file or directory, open '/w/missing'");
    assert_eq!(fs.readdir("/w/a.txt").unwrap_err().kind(), ErrorKind::NotADirectory);
    assert_eq!(fs.read_file("/w").unwrap_err().kind(), ErrorKind::IsADirectory);
    assert_eq!(fs.rmdir("/w").unwrap_err().kind(), ErrorKind::DirectoryNotEmpty);

    assert_eq!(fs.readdir("/w").unwrap(), ["a.txt", "bin", "deep"]);
    let plus = fs.readdir_plus("/w").unwrap();
    assert_eq!(plus.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a.txt", "bin", "deep"]);
    assert_eq!(plus[1].metadata.size, 10_000);
    assert!(plus[2].metadata.is_dir());
    let walk: Vec<String> = fs.walk("/w/deep").unwrap().into_iter().map(|e| e.name).collect();
    assert_eq!(walk, ["/w/deep", "/w/deep/er"]);

    fs.rename("/w/a.txt", "/w/b.txt").unwrap();
    assert!(!fs.exists("/w/a.txt").unwrap());
    fs.copy_file("/w/b.txt", "/w/c.txt").unwrap();
    assert_eq!(fs.read_file("/w/c.txt").unwrap(), b"hello world");
    fs.symlink("/w/b.txt", "/w/link").unwrap();
    assert_eq!(fs.readlink("/w/link").unwrap(), "/w/b.txt");
    assert!(fs.lstat("/w/link").unwrap().is_symlink());
    assert!(fs.stat("/w/link").unwrap().is_file());
    fs.link("/w/b.txt", "/w/hard").unwrap();
    assert_eq!(fs.stat("/w/b.txt").unwrap().nlink, 2);
    fs.chmod("/w/b.txt", 0o600).unwrap();
    assert_eq!(fs.stat("/w/hard").unwrap().permissions(), 0o600);
    fs.chown("/w/b.txt", Some(1000), None).unwrap();
    assert_eq!(fs.stat("/w/b.txt").unwrap().uid, 1000);
    let t = std::time::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    fs.utimes("/w/b.txt", None, Some(t)).unwrap();
    assert_eq!(fs.stat("/w/b.txt").unwrap().mtime, t);
    fs.truncate("/w/b.txt", 5).unwrap();
    assert_eq!(fs.read_file("/w/b.txt").unwrap(), b"hello");
    fs.access("/w/b.txt", 0).unwrap();
    assert_eq!(fs.access("/nope", 0).unwrap_err().kind(), ErrorKind::NotFound);
    fs.unlink("/w/hard").unwrap();
    fs.rmdir("/w/deep/er").unwrap();
    let st = fs.statfs().unwrap();
    assert!(st.inodes > 5 && st.bytes_used > 10_000, "{st:?}");
    fs.remove("/x", RemoveOptions { recursive: true, force: false }).unwrap();
    assert_eq!(fs.remove("/x", RemoveOptions::default()).unwrap_err().kind(), ErrorKind::NotFound);
    fs.remove("/x", RemoveOptions { recursive: false, force: true }).unwrap();

    // File handles: Read/Write/Seek and positional calls.
    let mut f = fs.create("/w/h.bin").unwrap();
    f.write_all(b"0123456789").unwrap();
    f.seek(SeekFrom::Start(2)).unwrap();
    f.write_all(b"ab").unwrap();
    assert_eq!(f.seek(SeekFrom::End(-1)).unwrap(), 9);
    assert_eq!(f.pwrite(10, b"XY").unwrap(), 2);
    f.fsync().unwrap();
    assert_eq!(f.metadata().unwrap().size, 12);
    f.set_len(11).unwrap();
    f.close().unwrap();
    let mut f = fs.open("/w/h.bin").unwrap();
    let mut s = String::new();
    f.read_to_string(&mut s).unwrap();
    assert_eq!(s, "01ab456789X");
    assert_eq!(f.pread(2, 3).unwrap(), b"ab4");
    assert_eq!(f.pread(100, 3).unwrap(), b"");
    f.seek(SeekFrom::Current(-3)).unwrap();
    let mut buf = [0u8; 8];
    let n = f.read(&mut buf).unwrap();
    assert_eq!(&buf[..n], b"89X");
    drop(f);
    let mut f = fs.open_with("/w/h.bin", agentfs::OpenOptions::new().append(true)).unwrap();
    f.write_all(b"!").unwrap();
    drop(f);
    assert_eq!(fs.read_file("/w/h.bin").unwrap(), b"01ab456789X!");
    let e = fs.open_with("/w/h.bin", agentfs::OpenOptions::new().write(true).create_new(true)).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::AlreadyExists);
    assert_eq!(fs.open("/w/none").err().unwrap().kind(), ErrorKind::NotFound);
    // A handle outlives the unlink of its file.
    let f = fs.open("/w/c.txt").unwrap();
    fs.unlink("/w/c.txt").unwrap();
    assert_eq!(f.pread(0, 100).unwrap(), b"hello world");
    f.close().unwrap();

    // Key-value store.
    let kv = a.kv();
    kv.set("cfg/a", &json!({"n": 1, "s": "x"})).unwrap();
    kv.set("cfg/b", &vec![1, 2, 3]).unwrap();
    kv.set("other", "text").unwrap();
    assert_eq!(kv.get::<Value>("cfg/a").unwrap(), Some(json!({"n": 1, "s": "x"})));
    assert_eq!(kv.get::<Vec<i32>>("cfg/b").unwrap(), Some(vec![1, 2, 3]));
    assert_eq!(kv.get::<String>("other").unwrap().as_deref(), Some("text"));
    assert_eq!(kv.get::<Value>("nope").unwrap(), None);
    let e = kv.get::<Vec<i32>>("other").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData);
    let keys: Vec<String> = kv.list("cfg/").unwrap().into_iter().map(|e| e.key).collect();
    assert_eq!(keys, ["cfg/a", "cfg/b"]);
    assert!(kv.delete("cfg/a").unwrap());
    assert!(!kv.delete("cfg/a").unwrap());

    // Tool calls.
    let tools = a.tools();
    let id = tools.start("search", Some(&json!({"q": "rust"}))).unwrap();
    tools.success(id, Some(&json!({"hits": 2}))).unwrap();
    let id2 = tools.start("fetch", None).unwrap();
    tools.error(id2, "timeout").unwrap();
    let rid = tools
        .record(&ToolRecord {
            name: "search".into(),
            started_at: 1_700_000_000,
            completed_at: 1_700_000_002,
            parameters: Some(json!({"q": "x"})),
            result: Some(json!([1])),
            error: None,
        })
        .unwrap();
    let c = tools.get(id).unwrap().unwrap();
    assert_eq!((c.name.as_str(), c.status), ("search", agentfs::ToolStatus::Success));
    assert_eq!(c.parameters, Some(json!({"q": "rust"})));
    assert_eq!(c.result, Some(json!({"hits": 2})));
    let c2 = tools.get(id2).unwrap().unwrap();
    assert_eq!((c2.status, c2.error.as_deref()), (agentfs::ToolStatus::Error, Some("timeout")));
    assert_eq!(tools.get(rid).unwrap().unwrap().duration_ms, Some(2000));
    assert!(tools.get(999_999).unwrap().is_none());
    let all = tools.list(&agentfs::ToolQuery::default()).unwrap();
    assert_eq!(all.len(), 3);
    let searches =
        tools.list(&agentfs::ToolQuery { name: Some("search".into()), ascending: true, ..Default::default() }).unwrap();
    assert_eq!(searches.len(), 2);
    let stats = tools.stats().unwrap();
    let s: Vec<(String, i64, i64, i64)> =
        stats.into_iter().map(|s| (s.name, s.total_calls, s.successful, s.failed)).collect();
    assert_eq!(s, [("fetch".to_string(), 1, 0, 1), ("search".to_string(), 2, 2, 0)]);
}
