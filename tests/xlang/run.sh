#!/usr/bin/env bash
# Builds the engine (native and WebAssembly) and the four SDKs' fixture programs, then runs the
# cross-language matrix (run.mjs). `go tool task test-xlang` runs this.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

mkdir -p bin
(cd cli && go build -o ../bin/agentfs ./cmd/agentfs)
export AGENTFS_BIN=$root/bin/agentfs

# Turso's agentfs-sdk 0.6.4 (tests/compat) and this project's TypeScript SDK.
[ -d tests/compat/node_modules/turso-agentfs ] || (cd tests/compat && npm install --no-audit --no-fund --silent)
(cd sdk-ts && { [ -d node_modules ] || npm ci --no-audit --no-fund --silent; } && npm run --silent build)
export XLANG_TS=$root/sdk-ts/dist/index.js
# The same SDK with the engine as WebAssembly.
go tool task build-wasm >/dev/null
export XLANG_WASM=$root/bin/agentfs.wasm

# Python: the SDK from its source tree, protobuf pinned in a venv of its own.
venv=$here/.venv
if [ ! -x "$venv/bin/python" ] || [ "$here/requirements.txt" -nt "$venv/.installed" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  touch "$venv/.installed"
fi
export PYTHONPATH=$root/sdk-python/src
export XLANG_PY="$venv/bin/python $here/fixture.py"

# Rust and Go fixture programs.
(cd "$here/rust" && CARGO_TARGET_DIR=$root/sdk-rust/target cargo build --quiet --locked)
export XLANG_RS=$root/sdk-rust/target/debug/agentfs-xlang
(cd sdk-go && go build -o "$root/bin/agentfs-xlang-go" ./internal/xlang)
export XLANG_GO=$root/bin/agentfs-xlang-go

node "$here/run.mjs"
