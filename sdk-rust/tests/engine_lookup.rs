//! The engine lookup order (explicit, AGENTFS_BIN, beside the executable,
//! the engine build.rs built, PATH) and its not-found error. Each case runs this test binary again as
//! a child with its own environment (changing the environment of a running
//! multi-threaded test process is not safe).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const CHILD: &str = "AGENTFS_LOOKUP_CHILD";

/// In the child: print what find_engine answers.
fn child(explicit: String) {
    let explicit = (!explicit.is_empty()).then(|| PathBuf::from(explicit));
    match agentfs::find_engine(explicit.as_deref()) {
        Ok(p) => println!("RESULT:ok:{}", p.display()),
        Err(e) => println!("RESULT:err:{:?}:{e}", e.kind()),
    }
}

fn run(exe: &Path, explicit: &str, agentfs_bin: Option<&Path>, path: &Path) -> String {
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", "lookup_order", "--nocapture", "--test-threads=1"])
        .env(CHILD, explicit)
        .env("PATH", path)
        .env_remove("AGENTFS_BIN");
    if let Some(b) = agentfs_bin {
        cmd.env("AGENTFS_BIN", b);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.find("RESULT:").map(|i| &l[i + 7..]))
        .unwrap_or_else(|| panic!("child printed no result: {stdout} {}", String::from_utf8_lossy(&out.stderr)))
        .to_string()
}

#[test]
fn lookup_order() {
    if let Ok(explicit) = std::env::var(CHILD) {
        return child(explicit);
    }
    let engine = common::engine().canonicalize().unwrap();
    let me = std::env::current_exe().unwrap();
    let dir = common::scratch("lookup");
    let empty = dir.join("empty");
    let on_path = dir.join("path");
    let beside = dir.join("app");
    for d in [&empty, &on_path, &beside] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(&engine, on_path.join("agentfs")).unwrap();
    let other = dir.join("other-agentfs");
    std::os::unix::fs::symlink(&engine, &other).unwrap();

    match agentfs::built_engine() {
        // Built with AGENTFS_SKIP_ENGINE_BUILD (as `go tool task test-rust`
        // does): nothing anywhere is an error that says how to get an
        // engine, and PATH is looked at.
        None => {
            let r = run(&me, "", None, &empty);
            assert!(r.starts_with("err:NotFound:") && r.contains("go install") && r.contains("AGENTFS_BIN"), "{r}");
            assert_eq!(run(&me, "", None, &on_path), format!("ok:{}", on_path.join("agentfs").display()));
        }
        // build.rs built the engine: it comes before PATH.
        Some(built) => {
            assert_eq!(run(&me, "", None, &empty), format!("ok:{}", built.display()));
            assert_eq!(run(&me, "", None, &on_path), format!("ok:{}", built.display()));
        }
    }
    // AGENTFS_BIN before PATH.
    assert_eq!(run(&me, "", Some(&other), &on_path), format!("ok:{}", other.display()));
    // A wrong AGENTFS_BIN is an error, not a silent fallback.
    let r = run(&me, "", Some(Path::new("/nonexistent/agentfs")), &on_path);
    assert!(r.starts_with("err:NotFound:") && r.contains("AGENTFS_BIN") && r.contains("/nonexistent/agentfs"), "{r}");
    // The explicit option before everything.
    let explicit = engine.display().to_string();
    assert_eq!(run(&me, &explicit, Some(&other), &on_path), format!("ok:{explicit}"));
    // Beside the executable (an application that ships the engine), before PATH.
    let app = beside.join("app-exe");
    std::fs::copy(&me, &app).unwrap();
    std::os::unix::fs::symlink(&engine, beside.join("agentfs")).unwrap();
    assert_eq!(run(&app, "", None, &on_path), format!("ok:{}", beside.join("agentfs").display()));
    let _ = std::fs::remove_dir_all(&dir);
}
