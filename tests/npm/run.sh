#!/usr/bin/env bash
# Suite `npm`: the npm packages of the TypeScript SDK against a real
# registry (npm.test.mjs). Installs Verdaccio (pinned, package-lock.json
# here), builds every tarball with sdk-ts/scripts/pack-all.sh (the engines
# cached in .cache/engines: a cold run cross-builds five binaries), then
# runs the tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/tests/npm"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
	npm ci --no-audit --no-fund --silent
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/agentfs-npm-suite.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$root/sdk-ts/scripts/pack-all.sh" "$work/tarballs" >"$work/tarballs.txt"
cat "$work/tarballs.txt"
AGENTFS_NPM_TARBALLS="$work/tarballs.txt" node --test --test-concurrency=1 npm.test.mjs
