//! Data written by the Go engine's CLI reads byte-identical through the
//! Rust SDK, and the other way round, on the same database file.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use agentfs::{AgentFS, Options};
use common::{engine, local, scratch};

fn cli(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let mut child = Command::new(engine())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(data) = stdin {
        input.write_all(data).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "agentfs {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// Every byte value, across several 4 KiB chunks, not a multiple of 4096.
fn payload(seed: u32) -> Vec<u8> {
    let mut x = seed;
    (0..3 * 4096 + 17)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect()
}

#[test]
fn go_cli_and_rust_sdk_read_each_others_bytes() {
    let dir = scratch("xlang");
    cli(&dir, &["init", "shared"], None);

    // Go writes, Rust reads.
    let from_go = payload(1);
    cli(&dir, &["fs", "shared", "mkdir", "/go"], None);
    cli(&dir, &["fs", "shared", "write", "/go/data.bin"], Some(&from_go));
    cli(&dir, &["kv", "shared", "set", "from-go", r#"{"n": 1, "s": "é"}"#], None);
    let a = AgentFS::open(local(Options { dir: Some(dir.clone()), no_create: true, ..Options::id("shared") })).unwrap();
    assert_eq!(a.fs().read_file("/go/data.bin").unwrap(), from_go);
    assert_eq!(a.fs().stat("/go/data.bin").unwrap().size, from_go.len() as u64);
    assert_eq!(a.kv().get::<serde_json::Value>("from-go").unwrap(), Some(serde_json::json!({"n": 1, "s": "é"})));

    // Rust writes (whole-file and through a handle), Go reads.
    let from_rust = payload(2);
    a.fs().mkdir("/rust").unwrap();
    a.fs().write_file("/rust/data.bin", &from_rust).unwrap();
    let mut f = a.fs().create("/rust/stream.bin").unwrap();
    for part in from_rust.chunks(1000) {
        f.write_all(part).unwrap();
    }
    f.close().unwrap();
    a.kv().set("from-rust", &vec!["a", "b"]).unwrap();
    a.close().unwrap();

    assert_eq!(cli(&dir, &["fs", "shared", "cat", "/rust/data.bin"], None), from_rust);
    assert_eq!(cli(&dir, &["fs", "shared", "cat", "/rust/stream.bin"], None), from_rust);
    let v: serde_json::Value = serde_json::from_slice(&cli(&dir, &["kv", "shared", "get", "from-rust"], None)).unwrap();
    assert_eq!(v, serde_json::json!(["a", "b"]));
    let ls = String::from_utf8(cli(&dir, &["fs", "shared", "ls", "/rust"], None)).unwrap();
    let names: Vec<&str> = ls.lines().filter_map(|l| l.split_whitespace().last()).collect();
    assert_eq!(names, ["data.bin", "stream.bin"], "{ls}");
    let _ = std::fs::remove_dir_all(&dir);
}
