//! Builds the `agentfs` engine (a Go program) for the crate's target, so
//! that `cargo add agentfs` is all a user needs besides a Go toolchain.
//!
//! Why a build from Go sources and not prebuilt binaries in the crate: the
//! engine is 40-50 MiB per platform and still 15 MiB xz-compressed, over
//! crates.io's 10 MiB limit per crate, so one crate per target carrying the
//! binary is impossible without splitting it across several crates (see
//! README.md, "The engine").
//!
//! - Published crate: the engine's module at the crate's own version is
//!   fetched by the go command through the user's GOPROXY and module cache
//!   (`go get github.com/agentfs-go/agentfs/cli@vVERSION` in a scratch
//!   module under OUT_DIR), then `go build` writes OUT_DIR/bin/agentfs.
//! - In a checkout of the repository (../go.work and ../cli exist): the
//!   engine is built from the working tree through the Go workspace.
//! - `AGENTFS_SKIP_ENGINE_BUILD=1` (or docs.rs): nothing is built; at run
//!   time the engine comes from `Options::engine`, `AGENTFS_BIN`, beside the
//!   executable or `PATH`.
//!
//! The binary's path reaches the library as `AGENTFS_BUILT_ENGINE`
//! (`agentfs::built_engine()`), looked up after `AGENTFS_BIN` and an
//! engine beside the executable, before `PATH`.

use std::env;
use std::path::PathBuf;
use std::process::{exit, Command};

const MODULE: &str = "github.com/agentfs-go/agentfs/cli";
const PACKAGE: &str = "github.com/agentfs-go/agentfs/cli/cmd/agentfs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AGENTFS_SKIP_ENGINE_BUILD");
    for v in ["GOPROXY", "GOFLAGS", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "CGO_ENABLED"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let skip = env::var("AGENTFS_SKIP_ENGINE_BUILD").is_ok_and(|v| !v.is_empty() && v != "0");
    if skip || env::var_os("DOCS_RS").is_some() {
        return;
    }

    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let (goos, goarch) = go_target();
    let exe = if goos == "windows" { "agentfs.exe" } else { "agentfs" };
    let bin = out.join("bin").join(exe);
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();

    let mut go = Command::new("go");
    go.env("GOOS", goos).env("GOARCH", goarch);
    // Building for another target: no cross C toolchain is assumed, so the
    // engine uses its SQLite compiled to Go (CGO-free).
    if env::var("HOST").ok() != env::var("TARGET").ok() {
        go.env("CGO_ENABLED", "0");
    }

    let checkout = manifest.join("..");
    if checkout.join("go.work").is_file() && checkout.join("cli/go.mod").is_file() {
        for d in ["cli", "core", "go.work"] {
            println!("cargo:rerun-if-changed={}", checkout.join(d).display());
        }
        go.current_dir(checkout.join("cli")).args(["build", "-o"]).arg(&bin).arg("./cmd/agentfs");
        run(go, "build the engine from this checkout");
    } else {
        let version = format!("v{}", env::var("CARGO_PKG_VERSION").unwrap());
        // A scratch module that requires only the engine's module: its
        // build list is the one the engine's go.mod declares.
        let scratch = out.join("engine-module");
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).unwrap();
        std::fs::write(scratch.join("go.mod"), "module agentfs-engine-build\n").unwrap();
        // A go.work above OUT_DIR (the user's own Go workspace) must not
        // take part.
        let base = |mut c: Command| {
            c.current_dir(&scratch).env("GOWORK", "off");
            c
        };
        let mut get = base(Command::new("go"));
        // The package, not the module: go get then records the checksums of
        // every module the package imports.
        get.args(["get", &format!("{PACKAGE}@{version}")]);
        run(get, &format!("fetch {MODULE}@{version} through GOPROXY"));
        let mut build = base(go);
        build.args(["build", "-trimpath", "-ldflags=-s -w", "-o"]).arg(&bin).arg(PACKAGE);
        run(build, &format!("build {PACKAGE}@{version}"));
    }
    println!("cargo:rustc-env=AGENTFS_BUILT_ENGINE={}", bin.display());
}

/// The Go GOOS/GOARCH of the crate's target.
fn go_target() -> (&'static str, &'static str) {
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let goos = match os.as_str() {
        "linux" | "android" => "linux",
        "macos" => "darwin",
        "windows" => "windows",
        "freebsd" => "freebsd",
        _ => "",
    };
    let goarch = match arch.as_str() {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "arm" => "arm",
        "riscv64" => "riscv64",
        _ => "",
    };
    if goos.is_empty() || goarch.is_empty() {
        fail(&format!(
            "the agentfs engine cannot be built for target {os}/{arch} (Go has no port the engine supports there). \
             Build with AGENTFS_SKIP_ENGINE_BUILD=1 and reach an engine over HTTP (Options::http) or give its path \
             (Options::engine, AGENTFS_BIN)."
        ));
    }
    (goos, goarch)
}

fn run(mut cmd: Command, what: &str) {
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!("{}", String::from_utf8_lossy(&o.stderr));
            fail(&format!(
                "could not {what} ({}). The go command's output is above; check GOPROXY and the network, \
                 or build with AGENTFS_SKIP_ENGINE_BUILD=1 and provide the engine at run time.",
                o.status
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(
            "the agentfs crate builds its engine (the Go program `agentfs`) with Go >= 1.26, and `go` is not on PATH. \
             Install Go (https://go.dev/dl/) and build again; or build with AGENTFS_SKIP_ENGINE_BUILD=1 and provide \
             the engine at run time: `go install github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest` elsewhere, \
             then AGENTFS_BIN, an agentfs beside your executable, or agentfs on PATH.",
        ),
        Err(e) => fail(&format!("could not run go to {what}: {e}")),
    }
}

fn fail(msg: &str) -> ! {
    // Cargo shows a build script's stderr when it fails; the `error:`
    // prefix makes the line stand out in that dump.
    eprintln!("error: {msg}");
    exit(1)
}
