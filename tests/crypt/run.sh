#!/usr/bin/env bash
# Encryption interop with Turso's own engine (npm @tursodatabase/database,
# pinned in package-lock.json): installs it, then runs the Go tests that
# write and read encrypted databases both ways, every cipher.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
[ -d node_modules/@tursodatabase/database ] || npm ci --no-audit --no-fund --silent
cd "$here/../../core"
AGENTFS_REQUIRE_TURSO_ENGINE=1 go test -count=1 -run 'TestCrypt' . ./internal/crypt/
