#!/usr/bin/env bash
# Uses the crate as a new user would: `cargo package`, unpack the .crate in
# an empty directory, and build and run a fresh project that depends on it
# (blocking and async API) against the engine in AGENTFS_BIN.
# Run by `go tool task test-rust`.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${AGENTFS_BIN:?set AGENTFS_BIN to the agentfs binary (go tool task build writes bin/agentfs)}"

cargo package --quiet --locked --allow-dirty --no-verify
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
crate=target/package/agentfs-$version.crate

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -xzf "$crate" -C "$scratch"
mkdir -p "$scratch/app/src"
cat >"$scratch/app/Cargo.toml" <<TOML
[package]
name = "app"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
agentfs = { path = "../agentfs-$version", features = ["tokio"] }
serde_json = "1"
tokio = { version = "1", features = ["rt", "macros"] }
TOML
cat >"$scratch/app/src/main.rs" <<'RS'
use std::io::{ErrorKind, Read, Write};

use agentfs::{AgentFS, ErrorExt, Options};

fn main() -> std::io::Result<()> {
    let agent = AgentFS::open(Options::path("app.db"))?;
    let fs = agent.fs();
    fs.mkdir_all("/notes")?;
    fs.write_file("/notes/a.txt", "hello from a packaged crate")?;
    let mut f = fs.create("/notes/b.txt")?;
    f.write_all(b"via a handle")?;
    f.close()?;
    let mut s = String::new();
    fs.open("/notes/b.txt")?.read_to_string(&mut s)?;
    assert_eq!(s, "via a handle");
    let e = fs.stat("/missing").unwrap_err();
    assert_eq!((e.kind(), e.errno()), (ErrorKind::NotFound, Some(2)));
    agent.kv().set("answer", &42)?;
    let id = agent.tools().start("demo", Some(&serde_json::json!({"x": 1})))?;
    agent.tools().success(id, None)?;
    agent.close()?;

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let agent = agentfs::aio::AgentFS::open(Options::path("app.db")).await?;
        let text = agent.fs().read_to_string("/notes/a.txt").await?;
        let answer: Option<u32> = agent.kv().get("answer").await?;
        println!("{text}; answer {answer:?}; {} tool call(s)", agent.tools().list(&Default::default()).await?.len());
        assert_eq!(answer, Some(42));
        agent.close().await
    })
}
RS
# The crate's own lock file pins the same dependency versions the tests used.
cp Cargo.lock "$scratch/app/Cargo.lock"
cd "$scratch/app"
# The crate's target directory: dependencies built for the tests are reused.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$OLDPWD/target}" cargo run --quiet
