#!/usr/bin/env bash
# The Rust crate as a user gets it: `cargo add agentfs`, then `cargo run`,
# with no engine installed anywhere.
#
#  1. `cargo package` of sdk-rust (the .crate a `cargo publish` uploads);
#     the .crate carries build.rs and LICENSE.
#  2. A local registry: a cargo directory source holding that crate
#     (unpacked, with the .cargo-checksum.json cargo verifies) and every
#     crates.io dependency of sdk-rust's Cargo.lock (`cargo vendor`). A
#     fresh CARGO_HOME replaces crates-io with it (source replacement), so
#     `cargo add` resolves from it as it would from crates.io.
#  3. The engine's Go modules published at vVERSION into a file-based
#     module proxy (tools/cmd/gomodpublish, as the gomod suite does): the
#     crate's build script fetches github.com/agentfs-go/agentfs/cli from
#     it through GOPROXY and builds the engine.
#  4. In an empty directory, with no agentfs on PATH and no AGENTFS_BIN:
#     the root README's Rust install block, with src/main.rs the program of
#     sdk-rust/README.md#install; its output is checked.
#
# Caches (gitignored, reused between runs): .cache/gomod (module cache),
# .cache/cargo-vendor (dependencies, keyed by Cargo.lock),
# .cache/cargo-user-target (the user's target directory; the agentfs
# crate's own artifacts are removed first so build.rs always runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

SECONDS=0
step() { printf '\n--- [%ss] %s\n' "$SECONDS" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(tr -d '[:space:]' <VERSION)
v=v$version
modprefix=github.com/agentfs-go/agentfs
grep -qx "version = \"$version\"" sdk-rust/Cargo.toml || fail "sdk-rust/Cargo.toml is not at VERSION $version"

work=$(mktemp -d "${TMPDIR:-/tmp}/agentfs-cargo.XXXXXX")
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

step "cargo package (sdk-rust)"
(cd sdk-rust && AGENTFS_SKIP_ENGINE_BUILD=1 cargo package --quiet --locked --allow-dirty --no-verify)
crate=sdk-rust/target/package/agentfs-$version.crate
[ -f "$crate" ] || fail "cargo package wrote no $crate"
size=$(stat -c %s "$crate")
echo "$crate: $size bytes"
[ "$size" -lt 10485760 ] || fail "the crate is over crates.io's 10 MiB limit"
listing=$(tar -tzf "$crate")
for f in build.rs LICENSE README.md Cargo.toml src/lib.rs src/engine.rs; do
  grep -qx "agentfs-$version/$f" <<<"$listing" || fail "the .crate lacks $f"
done
tar -xzOf "$crate" "agentfs-$version/LICENSE" | cmp -s - LICENSE || fail "the crate's LICENSE differs from the root LICENSE"

step "local registry: the crate + vendored dependencies (directory source)"
lockhash=$(sha256sum sdk-rust/Cargo.lock | cut -c1-16)
vendor=$root/.cache/cargo-vendor/$lockhash
if [ ! -d "$vendor" ]; then
  rm -rf "$root/.cache/cargo-vendor"
  mkdir -p "$root/.cache/cargo-vendor"
  (cd sdk-rust && cargo vendor --quiet --locked --versioned-dirs "$vendor.tmp" >/dev/null)
  mv "$vendor.tmp" "$vendor"
fi
# At a fixed path: the user's target directory (kept between runs) then
# sees the same dependency sources and does not rebuild them.
registry=$root/.cache/cargo-registry
rm -rf "$registry"
mkdir -p "$registry"
for d in "$vendor"/*/; do ln -s "${d%/}" "$registry/$(basename "$d")"; done
tar -xzf "$crate" -C "$registry"
# What `cargo vendor` writes for a registry crate: each file's sha256 and
# the .crate's, which becomes the checksum in the user's Cargo.lock.
python3 - "$registry/agentfs-$version" "$crate" <<'PY'
import hashlib, json, os, sys
top, crate = sys.argv[1], sys.argv[2]
files = {}
for d, _, names in os.walk(top):
    for n in names:
        p = os.path.join(d, n)
        files[os.path.relpath(p, top)] = hashlib.sha256(open(p, 'rb').read()).hexdigest()
pkg = hashlib.sha256(open(crate, 'rb').read()).hexdigest()
json.dump({"files": files, "package": pkg}, open(os.path.join(top, ".cargo-checksum.json"), "w"))
PY

export CARGO_HOME=$work/cargo-home
mkdir -p "$CARGO_HOME"
cat >"$CARGO_HOME/config.toml" <<TOML
[source.crates-io]
replace-with = "local-registry"

[source.local-registry]
directory = "$registry"

[net]
offline = false
TOML

step "publish core and cli at $v into a file-based module proxy"
go run ./tools/cmd/gomodpublish -out "$work/proxy" -version "$v" core cli

# Our modules from the test's proxy (tests/lib/goproxy.sh).
. "$root/tests/lib/goproxy.sh"
use_test_goproxy "$work/proxy"
unset GOPRIVATE GONOPROXY GOSUMDB GOWORK AGENTFS_BIN AGENTFS_SKIP_ENGINE_BUILD

# PATH with go, cargo and the C compiler but no agentfs.
userpath=""
for tool in go cargo rustc cc gcc git; do
  if p=$(command -v "$tool"); then
    d=$(dirname "$p")
    case ":$userpath:" in *":$d:"*) ;; *) userpath=${userpath:+$userpath:}$d ;; esac
  fi
done
userpath=$userpath:/usr/bin:/bin
if PATH=$userpath command -v agentfs >/dev/null; then fail "agentfs is on the user's PATH ($(PATH=$userpath command -v agentfs)); the test needs a machine without one"; fi

# The user's target directory is kept between runs (dependencies compile
# once); the agentfs crate's own artifacts are dropped so its build script
# runs against this run's crate and proxy.
target=$root/.cache/cargo-user-target
mkdir -p "$target"
rm -rf "$target"/debug/build/agentfs-* "$target"/debug/.fingerprint/agentfs-* "$target"/debug/deps/libagentfs-* "$target"/debug/deps/agentfs-*
export CARGO_TARGET_DIR=$target

block() {
  awk -v m="<!-- $2 -->" '
    index($0, m) == 1 { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }
  ' "$1"
}

step "README.md: the Rust install block in an empty directory"
script=$(block README.md "install: rust")
block sdk-rust/README.md "install: sdk-rust main.rs" >"$work/main.rs"
[ -n "$script" ] && [ -s "$work/main.rs" ] || fail "README.md or sdk-rust/README.md lacks its install block"
script=$(printf '%s\n' "$script" | sed "s|^# write src/main.rs.*|cp '$work/main.rs' src/main.rs|")
printf '%s\n' "$script"
mkdir -p "$work/user"
out=$(cd "$work/user" && PATH=$userpath bash -euo pipefail -c "$script" 2>&1) ||
  { printf '%s\n' "$out" >&2; fail "the Rust install block failed"; }
printf '%s\n' "$out" | grep -v '^ *\(Compiling\|Locking\|Adding\|Updating\|Downloaded\|Creating\|note:\|Features\|[-+] \)' || true
echo "($(grep -c '^ *Compiling ' <<<"$out" || true) crate(s) compiled)"
grep -qx '/notes/a.txt: hello' <<<"$out" || fail "the program did not read back what it wrote"
grep -q "^ENOENT: no such file or directory, stat '/missing'" <<<"$out" || fail "stat of a missing file did not give ENOENT"
grep -qx 'step: Some(3)' <<<"$out" || fail "kv did not give back 3"
grep -q "Adding agentfs v$version" <<<"$out" || fail "cargo add did not pick agentfs $version"
grep -q "agentfs = \"$version\"" "$work/user/hello/Cargo.toml" || fail "Cargo.toml does not require agentfs $version"
[ -f "$work/user/hello/.agentfs/my-agent.db" ] || fail "the program did not create .agentfs/my-agent.db"
engines=("$target"/debug/build/agentfs-*/out/bin/agentfs)
[ -x "${engines[0]}" ] || fail "build.rs built no engine under $target/debug/build/agentfs-*/out/bin"
"${engines[0]}" version | grep -q "agentfs $version " || fail "the built engine does not report version $version"
[ ! -e "$target/debug/agentfs" ] || fail "an agentfs beside the program would hide which engine ran"
lock=$(grep -A3 '^name = "agentfs"' "$work/user/hello/Cargo.lock")
grep -q "checksum = \"$(sha256sum "$crate" | cut -d' ' -f1)\"" <<<"$lock" || fail "Cargo.lock does not pin the packaged crate's checksum"

step "release: engines, crate and Go modules into dist/ with SHA256SUMS"
# The npm and Python parts are their suites' business (ts, python); this
# checks the release script's own work and the checksum file.
RELEASE_PARTS="engines crates gomod" DIST="$work/dist" ./scripts/release.sh
(cd "$work/dist" && sha256sum --quiet -c SHA256SUMS) || fail "dist/SHA256SUMS does not verify"
for t in linux-x64 linux-arm64 darwin-arm64 darwin-x64; do
  a=engines/agentfs-$version-$t.tar.gz
  grep -q "  $a\$" "$work/dist/SHA256SUMS" || fail "SHA256SUMS does not list $a"
  [ "$(tar -tzf "$work/dist/$a" | LC_ALL=C sort | tr '\n' ' ')" = "agentfs-$version-$t/ agentfs-$version-$t/LICENSE agentfs-$version-$t/README.md agentfs-$version-$t/agentfs " ] ||
    fail "$a does not hold exactly agentfs, LICENSE, README.md"
done
grep -q "  engines/agentfs-$version-win32-x64.zip\$" "$work/dist/SHA256SUMS" || fail "SHA256SUMS does not list the win32-x64 zip"
zlist=$(unzip -Z1 "$work/dist/engines/agentfs-$version-win32-x64.zip")
grep -qx "agentfs-$version-win32-x64/agentfs.exe" <<<"$zlist" || fail "the win32-x64 zip lacks agentfs.exe"
tar -xzOf "$work/dist/engines/agentfs-$version-linux-x64.tar.gz" "agentfs-$version-linux-x64/agentfs" >"$work/agentfs-linux-x64"
chmod +x "$work/agentfs-linux-x64"
"$work/agentfs-linux-x64" version | grep -q "agentfs $version " || fail "the linux-x64 archive's engine does not report $version"
grep -q "  crates/agentfs-$version.crate\$" "$work/dist/SHA256SUMS" || fail "SHA256SUMS does not list the .crate"
for m in core cli sdk-go wasm; do
  grep -q "  goproxy/$modprefix/$m/@v/$v.zip\$" "$work/dist/SHA256SUMS" || fail "SHA256SUMS does not list the $m module zip"
done
tags=$(./scripts/tag.sh)
for t in core/$v cli/$v sdk-go/$v wasm/$v $v; do
  grep -q "^git tag -a $t " <<<"$tags" || fail "scripts/tag.sh does not print tag $t"
done

echo
echo "cargo: OK in ${SECONDS}s (cargo add agentfs $version from a local registry; build.rs built the engine from $modprefix/cli@$v via GOPROXY; the README program ran)"
