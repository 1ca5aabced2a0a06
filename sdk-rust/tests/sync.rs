//! Sync and encryption through the SDK: a real `agentfs serve sync`
//! started here (bearer token), agents opened with `sync_remote_url`,
//! pull/push/sync/stats in the blocking and the async API; encrypted
//! agents round trip and refuse a wrong key.

mod common;

use std::io::{BufRead, BufReader, ErrorKind};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use agentfs::{AgentFS, Options};
use common::{engine, local, scratch};

const TOKEN: &str = "sdk-rust-sync-token";

struct SyncServer {
    child: Child,
    url: String,
}

impl SyncServer {
    fn start() -> SyncServer {
        let data = scratch("sync-remote");
        let mut child = Command::new(engine())
            .args(["serve", "sync", "--listen", "127.0.0.1:0", "--data"])
            .arg(&data)
            .env("AGENTFS_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start agentfs serve sync");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent {
                    if let Some(i) = line.find("at http://") {
                        let url = line[i + 3..].split_whitespace().next().unwrap().trim_end_matches("/ID").to_string();
                        let _ = tx.send(url);
                        sent = true;
                    }
                }
            }
        });
        let url = rx.recv_timeout(Duration::from_secs(60)).expect("agentfs serve sync did not say where it listens");
        SyncServer { child, url }
    }
}

impl Drop for SyncServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn synced(path: std::path::PathBuf, url: &str) -> Options {
    local(Options {
        sync_remote_url: Some(url.to_string()),
        sync_token: Some(TOKEN.to_string()),
        ..Options::path(path)
    })
}

#[test]
fn sync_between_two_agents() {
    let srv = SyncServer::start();
    let url = format!("{}/shared", srv.url);
    let dir = scratch("sync");
    let a = AgentFS::open(synced(dir.join("a.db"), &url)).unwrap();
    a.fs().write_file("/notes.md", "from a").unwrap();
    a.kv().set("k", &7).unwrap();
    let st = a.stats().unwrap();
    assert!(st.cdc_operations > 0 && st.remote_url == url && st.last_push_unix_time == 0, "{st:?}");
    assert!(a.push().unwrap().rows > 0);
    let st = a.stats().unwrap();
    assert!(st.cdc_operations == 0 && st.last_push_unix_time > 0 && st.network_sent_bytes > 0, "{st:?}");

    let b = AgentFS::open(synced(dir.join("b.db"), &url)).unwrap();
    assert_eq!(b.fs().read_file("/notes.md").unwrap(), b"from a");
    assert_eq!(b.kv().get::<i64>("k").unwrap(), Some(7));
    b.fs().write_file("/b.txt", "from b").unwrap();
    assert!(b.sync().unwrap().push.unwrap().rows > 0);
    let p = a.pull().unwrap();
    assert!(p.changed && p.applied > 0, "{p:?}");
    assert_eq!(a.fs().read_file("/b.txt").unwrap(), b"from b");

    // A wrong token is refused (naming TURSO_DB_AUTH_TOKEN) and leaves no
    // database; an agent without a remote cannot pull.
    let e = AgentFS::open(Options { sync_token: Some("wrong".into()), ..synced(dir.join("c.db"), &url) })
        .err()
        .unwrap();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert!(e.to_string().contains("TURSO_DB_AUTH_TOKEN"), "{e}");
    assert!(!dir.join("c.db").exists());
    let plain = AgentFS::open(local(Options::path(dir.join("plain.db")))).unwrap();
    let e = plain.pull().err().unwrap();
    assert!(e.to_string().contains("not set up for sync"), "{e}");
}

#[tokio::test]
async fn sync_async() {
    let srv = SyncServer::start();
    let url = format!("{}/shared", srv.url);
    let dir = scratch("sync-async");
    let a = agentfs::aio::AgentFS::open(synced(dir.join("a.db"), &url)).await.unwrap();
    a.fs().write_file("/x.txt", "async").await.unwrap();
    assert!(a.push().await.unwrap().rows > 0);
    let b = agentfs::aio::AgentFS::open(synced(dir.join("b.db"), &url)).await.unwrap();
    assert_eq!(b.fs().read_file("/x.txt").await.unwrap(), b"async");
    b.fs().write_file("/y.txt", "back").await.unwrap();
    b.sync().await.unwrap();
    assert!(a.pull().await.unwrap().applied > 0);
    assert_eq!(a.fs().read_file("/y.txt").await.unwrap(), b"back");
    assert!(a.stats().await.unwrap().last_pull_unix_time > 0);
    b.close().await.unwrap();
    a.close().await.unwrap();
}

#[test]
fn encryption_round_trip_and_refusals() {
    let dir = scratch("crypt");
    let p = dir.join("enc.db");
    let key = "ab".repeat(32);
    let enc = |k: &str| local(Options { cipher: Some("aes256gcm".into()), ..Options::path(&p) }.key_hex(k).unwrap());
    let a = AgentFS::open(enc(&key)).unwrap();
    a.fs().write_file("/secret.txt", "MARKER-SDK-RS-SECRET").unwrap();
    a.close().unwrap();
    let has = |f: &std::path::Path| std::fs::read(f).map(|b| b.windows(20).any(|w| w == b"MARKER-SDK-RS-SECRET")).unwrap_or(false);
    assert!(!has(&p) && !has(&dir.join("enc.db-wal")), "plaintext on disk");
    let before = std::fs::read(&p).unwrap();
    let e = AgentFS::open(enc(&"cd".repeat(32))).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert!(e.to_string().contains("wrong key"), "{e}");
    let e = AgentFS::open(local(Options::path(&p))).err().unwrap();
    assert!(e.to_string().contains("is encrypted"), "{e}");
    let e = AgentFS::open(enc(&"ab".repeat(8))).err().unwrap();
    assert!(e.to_string().contains("32-byte key"), "{e}");
    assert!(Options::path(&p).key_hex("zz").is_err());
    assert_eq!(std::fs::read(&p).unwrap(), before, "refused opens changed the file");
    let b = AgentFS::open(enc(&key)).unwrap();
    assert_eq!(b.fs().read_file("/secret.txt").unwrap(), b"MARKER-SDK-RS-SECRET");
}

/// Incompressible bytes without a dependency (xorshift64*).
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

#[test]
fn partial_sync_by_prefix_and_query() {
    let srv = SyncServer::start();
    let url = format!("{}/partial", srv.url);
    let dir = scratch("sync-partial");
    // ~3 MiB on the remote; /big/last.bin is written last, past any prefix.
    let last = noise(99, 256 << 10);
    let w = AgentFS::open(synced(dir.join("w.db"), &url)).unwrap();
    w.fs().mkdir_all("/big").unwrap();
    for i in 0..12 {
        w.fs().write_file(&format!("/big/f{i}.bin"), noise(i + 1, 256 << 10)).unwrap();
    }
    w.fs().write_file("/big/last.bin", &last).unwrap();
    w.push().unwrap();
    w.close().unwrap();

    let full = AgentFS::open(synced(dir.join("full.db"), &url)).unwrap();
    let whole = full.stats().unwrap().network_received_bytes;
    assert_eq!(full.fs().read_file("/big/last.bin").unwrap(), last);
    full.close().unwrap();
    assert!(whole > 3 << 20, "a full bootstrap receives the whole remote ({whole})");

    let part = AgentFS::open(Options {
        sync_partial_bootstrap_length: Some(128 << 10),
        sync_partial_segment_size: Some(64 << 10),
        ..synced(dir.join("part.db"), &url)
    })
    .unwrap();
    let boot = part.stats().unwrap().network_received_bytes;
    assert!(boot > 0 && boot < whole / 8, "partial bootstrap received {boot} of {whole}");
    // A file outside the prefix comes over the network when read.
    assert_eq!(part.fs().read_file("/big/last.bin").unwrap(), last);
    let after = part.stats().unwrap().network_received_bytes;
    assert!(boot < after && after < whole, "{boot} < {after} < {whole}");

    let q = AgentFS::open(Options {
        sync_partial_bootstrap_query: Some("SELECT name FROM fs_dentry WHERE parent_ino = 1".into()),
        sync_partial_prefetch: true,
        ..synced(dir.join("q.db"), &url)
    })
    .unwrap();
    let qboot = q.stats().unwrap().network_received_bytes;
    assert!(qboot > 0 && qboot < 1 << 20, "query bootstrap received {qboot}");
    assert_eq!(q.fs().read_file("/big/last.bin").unwrap(), last);

    let e = AgentFS::open(Options {
        sync_partial_bootstrap_length: Some(4096),
        sync_partial_bootstrap_query: Some("SELECT 1".into()),
        ..synced(dir.join("bad.db"), &url)
    })
    .err()
    .unwrap();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("exclude each other"), "{e}");
    let e = AgentFS::open(local(Options { sync_partial_bootstrap_length: Some(4096), ..Options::path(dir.join("nourl.db")) }))
        .err()
        .unwrap();
    assert!(e.to_string().contains("sync_remote_url"), "{e}");
}
