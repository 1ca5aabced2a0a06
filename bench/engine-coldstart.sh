#!/usr/bin/env bash
# Engine cold start (first write) of every engine the packages ship: Node
# addon, cgo binary, CGO-free binary, WebAssembly (bench/engine-coldstart.mjs).
# Builds bin/ (go tool task build), the CGO-free linux-x64 engine into
# .cache/engines-static (as the pypi suite does) and sdk-ts's dist.
#
#   ./bench/engine-coldstart.sh         RUNS=5
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
go tool task build >&2
CGO_ENABLED=0 ./scripts/build-engines.sh .cache/engines-static linux-x64 >&2
(cd sdk-ts && { [[ -d node_modules ]] || npm ci --no-audit --no-fund --silent; } && npm run build --silent) >&2
node bench/engine-coldstart.mjs
