#!/usr/bin/env bash
# Engine throughput by SQLite driver and encryption (one run each):
# writeFile 1 KiB x 10,000, readFile+stat 1 KiB, one 64 MiB file written
# and read, for
#   cgo        our cgo driver over libsql's SQLite, plain
#   nocgo      CGO_ENABLED=0: ncruces' SQLite compiled to Go, plain
#   aes256gcm  encrypted (ncruces + internal/crypt VFS), cgo build
#   aegis256   encrypted, cgo build
# Usage: bench/crypt.sh   (from the repository root; ~2-4 min)
set -euo pipefail
cd "$(dirname "$0")/../core"
run() {
  echo "== $1"
  shift
  env "$@" go test -run '^$' -bench 'BenchmarkWriteFile1KiB$|BenchmarkReadFileStat1KiB|BenchmarkBigFile64MiB' -benchtime=1x . |
    grep -E '^Benchmark' | sed -E 's/[[:space:]]+[0-9]+[[:space:]]+[0-9]+ ns\/op//'
}
run cgo CGO_ENABLED=1
run nocgo CGO_ENABLED=0
run aes256gcm CGO_ENABLED=1 BENCH_CIPHER=aes256gcm
run aegis256 CGO_ENABLED=1 BENCH_CIPHER=aegis256
