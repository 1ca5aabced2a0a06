//! Finding the `agentfs` engine binary.
//!
//! Order (spec/PROTOCOL.md): the explicit option, `AGENTFS_BIN`, the
//! bundled binary, `agentfs` on `PATH`.
//!
//! "Bundled" for a Rust crate means: an `agentfs` next to the running
//! executable. The engine is a Go program of ~40 MB per platform; a crate
//! cannot carry it (crates.io caps a crate at 10 MB and a crate is source,
//! built for the user's target), and a build script that downloads or
//! builds Go would need the network or a Go toolchain at build time. An
//! application that ships the engine puts it beside its own binary, which
//! is where this looks.

use std::env;
use std::io;
use std::path::{Path, PathBuf};

use crate::transport::stdio::is_executable;

/// How to get an engine, quoted by the not-found error.
const HOW_TO_GET: &str = "install it with `go install github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest` \
(or run `go tool task build` in a checkout, which writes bin/agentfs), then put it on PATH, \
set AGENTFS_BIN to its path, or pass Options::engine";

/// Returns the engine to run: `explicit` if given, else `AGENTFS_BIN`, else
/// `agentfs` beside the current executable, else `agentfs` on `PATH`.
pub fn find_engine(explicit: Option<&Path>) -> io::Result<PathBuf> {
    if let Some(p) = explicit {
        return check(p, "Options::engine");
    }
    if let Some(p) = env::var_os("AGENTFS_BIN").filter(|p| !p.is_empty()) {
        return check(Path::new(&p), "AGENTFS_BIN");
    }
    let name = format!("agentfs{}", env::consts::EXE_SUFFIX);
    if let Some(dir) = env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        let p = dir.join(&name);
        if is_executable(&p) {
            return Ok(p);
        }
    }
    if let Some(path) = env::var_os("PATH") {
        for dir in env::split_paths(&path) {
            let p = dir.join(&name);
            if is_executable(&p) {
                return Ok(p);
            }
        }
    }
    Err(io::Error::new(io::ErrorKind::NotFound, format!("agentfs engine not found: {HOW_TO_GET}")))
}

fn check(p: &Path, from: &str) -> io::Result<PathBuf> {
    if is_executable(p) {
        return Ok(p.to_path_buf());
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("agentfs engine {} (from {from}) is not an executable file; {HOW_TO_GET}", p.display()),
    ))
}
