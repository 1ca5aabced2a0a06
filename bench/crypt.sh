#!/usr/bin/env bash
# Engine throughput plain and encrypted, side by side in one run:
# writeFile 1 KiB x 10,000, readFile / stat 1 KiB, one 64 MiB file
# written, read, and read back in 4 KiB preads, for
#   cgo           our cgo driver over libsql's SQLite, plain (the default)
#   ncruces       CGO_ENABLED=0: ncruces' SQLite compiled to Go, plain
#   CIPHER cgo    encrypted as a cgo build does it: the cgo driver with
#                 its encrypting VFS (internal/sqlite/cryptvfs.c)
#   CIPHER nc     encrypted as a build without cgo does it: ncruces with
#                 internal/crypt's Go VFS
# Both encrypt with the same codec (internal/crypt). The slowdown columns
# divide the plain rate by the encrypted one on the same driver: first
# the cgo build's (what a user who adds a key sees), then in parentheses
# ncruces'. Goal (issue 14): at most 1.3x.
# Usage: bench/crypt.sh   (from the repository root; about a minute a round)
#   ROUNDS=3 bench/crypt.sh   rounds, each running every side once in turn
#   (interleaved, so load that comes and goes hits all sides); the table
#   shows each metric's median over the rounds
#   CIPHERS="aes256gcm aegis256 aegis128l" bench/crypt.sh   other ciphers
# Prints a Markdown table; with RESULTS=DIR also saves it as DIR/crypt.md.
set -euo pipefail
cd "$(dirname "$0")/../core"
ciphers=${CIPHERS:-aes256gcm aegis256}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=1 go test -c -o "$work/cgo.test" .
CGO_ENABLED=0 go test -c -o "$work/nocgo.test" .
rounds=${ROUNDS:-1}
run() { # NAME BINARY [ENV...]: the benchmark lines appended to $work/NAME.txt
  local name=$1 bin=$2
  shift 2
  echo "== $name" >&2
  env "$@" "$work/$bin" -test.run '^$' -test.bench 'BenchmarkWriteFile1KiB$|BenchmarkReadFileStat1KiB$|BenchmarkBigFile64MiB$' -test.benchtime=1x |
    grep -E '^Benchmark' | tee -a "$work/$name.txt" >&2
}
for ((r = 1; r <= rounds; r++)); do
  echo "== round $r of $rounds" >&2
  run cgo cgo.test
  run ncruces nocgo.test
  for c in $ciphers; do
    run "$c-cgo" cgo.test BENCH_CIPHER="$c"
    run "$c-nc" nocgo.test BENCH_CIPHER="$c"
  done
done

# metric UNIT FILE: the median of the values reported with that unit.
metric() {
  awk -v u="$1" '{ for (i = 2; i < NF; i++) if ($(i+1) == u) print $i }' "$2" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
table=$work/crypt.md
{
  printf '| metric | cgo plain | ncruces plain |'
  for c in $ciphers; do printf ' %s cgo | %s nc |' "$c" "$c"; done
  for c in $ciphers; do printf ' %s slowdown |' "$c"; done
  printf '\n|---|---:|---:|'
  for c in $ciphers; do printf -- '---:|---:|---:|'; done
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
    for c in $ciphers; do
      printf ' %.0f | %.0f |' "$(metric "$m" "$work/$c-cgo.txt")" "$(metric "$m" "$work/$c-nc.txt")"
    done
    for c in $ciphers; do
      vg=$(metric "$m" "$work/$c-cgo.txt")
      vn=$(metric "$m" "$work/$c-nc.txt")
      awk -v n="$nc" -v g="$cg" -v vg="$vg" -v vn="$vn" 'BEGIN { printf " %.2fx (%.2fx) |", g / vg, n / vn }'
    done
    printf '\n'
  done
  printf '\n%s round(s), each side once per round (-benchtime=1x), medians; load average %s at the end.\n' "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$table"
cat "$table"
if [[ -n ${RESULTS:-} ]]; then cp "$table" "$RESULTS/crypt.md"; fi
