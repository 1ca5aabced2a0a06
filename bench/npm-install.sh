#!/usr/bin/env bash
# npm packages: the size of each tarball and the time of `npm install
# agentfs-sdk` (with and without optional dependencies) from a local
# Verdaccio registry; prints a Markdown table (bench/npm-install.mjs).
# The tarballs come from sdk-ts/scripts/pack-all.sh (engines cached in
# .cache/engines); Verdaccio from tests/npm (npm ci there when missing).
#
#   ./bench/npm-install.sh          RUNS=3 installs per variant
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT/tests/npm"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
	npm ci --no-audit --no-fund --silent >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ROOT/sdk-ts/scripts/pack-all.sh" "$work/tarballs" >"$work/tarballs.txt"
node "$ROOT/bench/npm-install.mjs" "$work/tarballs.txt"
