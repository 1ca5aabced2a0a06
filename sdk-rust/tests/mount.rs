//! AgentFS::mount_sandbox: the agent's files on a real FUSE mount (served
//! by `agentfs mount`), used by real programs (git, tar), then back in the
//! agent. Fails instead of skipping when AGENTFS_REQUIRE_FUSE=1.

mod common;

use std::io::ErrorKind;
use std::path::Path;
use std::process::Command;

use agentfs::{AgentFS, MountOptions, Options};
use common::{local, scratch, Server};

/// Why FUSE cannot be used here ("" when it can); with
/// AGENTFS_REQUIRE_FUSE=1 a missing FUSE fails the test instead.
fn fuse_missing() -> bool {
    let why = if !cfg!(target_os = "linux") {
        "FUSE mounts are Linux only"
    } else if !Path::new("/dev/fuse").exists() {
        "no /dev/fuse"
    } else {
        ""
    };
    if why.is_empty() {
        return false;
    }
    assert!(
        std::env::var("AGENTFS_REQUIRE_FUSE").as_deref() != Ok("1"),
        "FUSE unavailable: {why} (AGENTFS_REQUIRE_FUSE=1)"
    );
    eprintln!("skipped: {why}");
    true
}

fn sh(dir: &Path, home: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mount_sandbox_git_tar_and_back() {
    if fuse_missing() {
        return;
    }
    let dir = scratch("mount");
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let a = AgentFS::open(local(Options::path(dir.join("a.db")))).unwrap();
    a.fs().mkdir_all("/src").unwrap();
    a.fs().write_file("/src/hello.txt", "hello\n").unwrap();
    let m = a.mount_sandbox(&MountOptions::default()).unwrap();
    let p = m.path().to_path_buf();
    assert!(p.is_absolute());
    sh(&p, &home, "git init -q -b main && git add -A && git commit -qm first && tar cf snap.tar src");
    assert_eq!(sh(&p, &home, "git status --porcelain --untracked-files=no"), "");
    assert_eq!(sh(&p, &home, "tar tf snap.tar"), "src/\nsrc/hello.txt\n");

    // Busy while a file is open in it.
    let held = std::fs::File::open(p.join("src/hello.txt")).unwrap();
    let e = m.unmount().err().unwrap();
    assert_eq!(e.kind(), ErrorKind::ResourceBusy, "{e}");
    assert!(m.is_mounted());
    drop(held);

    m.unmount().unwrap();
    assert!(!p.exists(), "the temporary mount point is removed");
    m.unmount().unwrap(); // a second unmount does nothing
    drop(m);

    // Back in the agent: its engine reads what the mount wrote.
    assert_eq!(a.fs().read_file("/.git/HEAD").unwrap(), b"ref: refs/heads/main\n");
    assert!(a.fs().stat("/snap.tar").unwrap().size >= 512);

    // Out again on the caller's directory: dropping the guard unmounts.
    let mnt = dir.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    {
        let m2 = a.mount_sandbox(&MountOptions { dir: Some(mnt.clone()), ..Default::default() }).unwrap();
        assert_eq!(m2.path(), mnt);
        assert_eq!(
            sh(&mnt, &home, "git log --format=%s && cat src/hello.txt && echo more > more.txt"),
            "first\nhello\n"
        );
    }
    assert_eq!(std::fs::read_dir(&mnt).unwrap().count(), 0, "drop unmounted the caller's directory and left it");
    assert_eq!(a.fs().read_file("/more.txt").unwrap(), b"more\n");

    // close() unmounts what is still mounted.
    let m3 = a.mount_sandbox(&MountOptions { dir: Some(mnt.clone()), ..Default::default() }).unwrap();
    a.close().unwrap();
    assert!(!m3.is_mounted());
    assert_eq!(std::fs::read_dir(&mnt).unwrap().count(), 0);
}

#[test]
fn mount_sandbox_encrypted() {
    if fuse_missing() {
        return;
    }
    // The key reaches `agentfs mount` through its environment.
    let dir = scratch("mount-enc");
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let p = dir.join("enc.db");
    let a = AgentFS::open(local(Options::path(&p).key_hex(&"ab".repeat(32)).unwrap())).unwrap();
    a.fs().write_file("/secret.txt", "classified\n").unwrap();
    let m = a.mount_sandbox(&MountOptions::default()).unwrap();
    assert_eq!(sh(m.path(), &home, "cat secret.txt && echo new > new.txt"), "classified\n");
    m.unmount().unwrap();
    assert_eq!(a.fs().read_file("/new.txt").unwrap(), b"new\n");
    a.close().unwrap();
    assert!(!std::fs::read(&p).unwrap().windows(10).any(|w| w == b"classified"));
}

#[tokio::test]
async fn mount_sandbox_async() {
    if fuse_missing() {
        return;
    }
    let dir = scratch("mount-aio");
    let home = dir.join("home");
    std::fs::create_dir(&home).unwrap();
    let a = agentfs::aio::AgentFS::open(local(Options::path(dir.join("a.db")))).await.unwrap();
    a.fs().write_file("/a.txt", "async\n").await.unwrap();
    let m = a.mount_sandbox(&MountOptions::default()).await.unwrap();
    let p = m.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || sh(&p, &home, "cat a.txt && echo back > b.txt")).await.unwrap();
    assert_eq!(out, "async\n");
    a.close().await.unwrap();
    assert!(!m.is_mounted() && !m.path().exists());
    let b = AgentFS::open(local(Options::path(dir.join("a.db")))).unwrap();
    assert_eq!(b.fs().read_file("/b.txt").unwrap(), b"back\n");
}

#[test]
fn mount_sandbox_refused_over_http() {
    if fuse_missing() {
        return;
    }
    let srv = Server::start(None);
    let a = AgentFS::open(srv.agent("mnt", None)).unwrap();
    let e = a.mount_sandbox(&MountOptions::default()).err().unwrap();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("agentfs mount"), "{e}");
}
