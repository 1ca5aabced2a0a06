//! Finding the `agentfs` engine binary.
//!
//! Order (spec/PROTOCOL.md): the explicit option, `AGENTFS_BIN`, the
//! bundled binary, `agentfs` on `PATH`.
//!
//! "Bundled" for a Rust crate means, first, an `agentfs` next to the
//! running executable (an application that ships the engine puts it
//! there), then the engine this crate's build script built from the Go
//! sources (build.rs; [`built_engine`]). The engine is a Go program of
//! 40-50 MB per platform, 15 MB compressed: over crates.io's 10 MB per
//! crate, so no crate carries it prebuilt.

use std::env;
use std::io;
use std::path::{Path, PathBuf};

use crate::transport::stdio::is_executable;

/// How to get an engine, quoted by the not-found error.
const HOW_TO_GET: &str = "build the crate with Go >= 1.26 on PATH (its build script builds the engine; \
AGENTFS_SKIP_ENGINE_BUILD turns that off), or install it with `go install github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest` \
(or run `go tool task build` in a checkout, which writes bin/agentfs), then put it on PATH, \
set AGENTFS_BIN to its path, or pass Options::engine";

/// The engine this crate's build script built for the target (under
/// Cargo's target directory), if it built one and it is still there. An
/// application that ships to other machines copies it beside its own
/// executable.
pub fn built_engine() -> Option<&'static Path> {
    option_env!("AGENTFS_BUILT_ENGINE").map(Path::new).filter(|p| is_executable(p))
}

/// Returns the engine to run: `explicit` if given, else `AGENTFS_BIN`, else
/// `agentfs` beside the current executable, else the engine the build
/// script built ([`built_engine`]), else `agentfs` on `PATH`.
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
    if let Some(p) = built_engine() {
        return Ok(p.to_path_buf());
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
