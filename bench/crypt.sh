#!/usr/bin/env bash
# Engine throughput plain and encrypted, side by side in one run:
# writeFile 1 KiB x 10,000, readFile / stat 1 KiB, one 64 MiB file
# written, read, and read back in 4 KiB preads, for
#   cgo        our cgo driver over libsql's SQLite, plain (the default)
#   ncruces    CGO_ENABLED=0: ncruces' SQLite compiled to Go, plain
#   CIPHER     encrypted: ncruces + the internal/crypt VFS, cgo build
# The slowdown columns divide the plain rate by the encrypted one: first
# against ncruces plain (the same SQLite, so it is the cost of the
# encryption), then in parentheses against cgo plain (what a user who
# adds a key sees). Goal (issue 14): at most 1.3x.
# Usage: bench/crypt.sh   (from the repository root; ~3-5 min)
#   CIPHERS="aes256gcm aegis256 aegis128l" bench/crypt.sh   other ciphers
# Prints a Markdown table; with RESULTS=DIR also saves it as DIR/crypt.md.
set -euo pipefail
cd "$(dirname "$0")/../core"
ciphers=${CIPHERS:-aes256gcm aegis256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=1 go test -c -o "$work/cgo.test" .
CGO_ENABLED=0 go test -c -o "$work/nocgo.test" .
run() { # NAME BINARY [ENV...]: the benchmark lines into $work/NAME.txt
  local name=$1 bin=$2
  shift 2
  echo "== $name" >&2
  env "$@" "$work/$bin" -test.run '^$' -test.bench 'BenchmarkWriteFile1KiB$|BenchmarkReadFileStat1KiB$|BenchmarkBigFile64MiB$' -test.benchtime=1x |
    grep -E '^Benchmark' >"$work/$name.txt"
  cat "$work/$name.txt" >&2
}
run cgo cgo.test
run ncruces nocgo.test
for c in $ciphers; do run "$c" cgo.test BENCH_CIPHER="$c"; done

# metric UNIT FILE: the value reported with that unit.
metric() { awk -v u="$1" '{ for (i = 2; i < NF; i++) if ($(i+1) == u) print $i }' "$2" | head -1; }
table=$work/crypt.md
{
  printf '| metric | cgo plain | ncruces plain |'
  for c in $ciphers; do printf ' %s |' "$c"; done
  for c in $ciphers; do printf ' %s slowdown |' "$c"; done
  printf '\n|---|---:|---:|'
  for c in $ciphers; do printf -- '---:|---:|'; done
  printf '\n'
  for m in writes/s reads/s stats/s write-MiB/s read-MiB/s pread4k/s; do
    label=$m
    case $m in
      writes/s) label="writeFile 1 KiB (files/s)" ;;
      reads/s) label="readFile 1 KiB (files/s)" ;;
      stats/s) label="stat (calls/s)" ;;
      write-MiB/s) label="64 MiB write (MiB/s)" ;;
      read-MiB/s) label="64 MiB read (MiB/s)" ;;
      pread4k/s) label="4 KiB pread in 64 MiB (reads/s)" ;;
    esac
    cg=$(metric "$m" "$work/cgo.txt")
    nc=$(metric "$m" "$work/ncruces.txt")
    printf '| %s | %.0f | %.0f |' "$label" "$cg" "$nc"
    for c in $ciphers; do printf ' %.0f |' "$(metric "$m" "$work/$c.txt")"; done
    for c in $ciphers; do
      v=$(metric "$m" "$work/$c.txt")
      awk -v n="$nc" -v g="$cg" -v v="$v" 'BEGIN { printf " %.2fx (%.2fx) |", n / v, g / v }'
    done
    printf '\n'
  done
  printf '\nOne run each (-benchtime=1x), load average %s at the end.\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$table"
cat "$table"
if [[ -n ${RESULTS:-} ]]; then cp "$table" "$RESULTS/crypt.md"; fi
