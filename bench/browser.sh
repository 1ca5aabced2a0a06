#!/usr/bin/env bash
# Browser benchmarks: bench/browser.mjs (see there) after building what it
# needs: bin/agentfs.wasm (full), an agentfs_nonode .wasm, the Workers
# .wasm (its size only), the SDK's dist/,
# and agentfs-sdk 0.6.4 + @tursodatabase/database-wasm 0.7.2 from npm (the
# reference side) in a cache directory. Needs Debian's chromium.
#
#   ./bench/browser.sh          COLD_RUNS=5 ./bench/browser.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CACHE=${BENCH_CACHE:-$ROOT/.cache/bench-browser}
mkdir -p "$CACHE" bin
(cd wasm && GOOS=js GOARCH=wasm go build -trimpath -ldflags=-s -o ../bin/agentfs.wasm .)
(cd wasm && GOOS=js GOARCH=wasm go build -tags agentfs_nonode -trimpath -ldflags=-s -o "$CACHE/agentfs-nonode.wasm" .)
(cd wasm && GOOS=js GOARCH=wasm go build -tags agentfs_workers -trimpath -ldflags="-s -w" -o "$CACHE/agentfs-workers.wasm" .)
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" bin/wasm_exec.js
cp bin/wasm_exec.js "$CACHE/wasm_exec.js"
(cd sdk-ts && { [[ -d node_modules ]] || npm ci --no-audit --no-fund --silent; } && npm run build --silent)
if [[ ! -d $CACHE/node_modules/@tursodatabase/database-wasm ]]; then
	(cd "$CACHE" && npm install --no-audit --no-fund --silent --no-save \
		turso-agentfs@npm:agentfs-sdk@0.6.4 @tursodatabase/database-wasm@0.7.2)
fi
AGENTFS_WASM=$ROOT/bin/agentfs.wasm AGENTFS_WASM_NONODE=$CACHE/agentfs-nonode.wasm AGENTFS_WASM_WORKERS=$CACHE/agentfs-workers.wasm TURSO_DEPS=$CACHE \
	node bench/browser.mjs
