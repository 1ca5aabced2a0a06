#!/usr/bin/env bash
# Exec streaming latency (ProcessService) over the stdio protocol and over
# Connect HTTP: first byte (StartProcess until the first chunk of output)
# and echo round trip (a line written to a running script's stdin until
# its echo is read). Go benchmark core/rpc BenchmarkExecStream; prints a
# Markdown table. N=200 by default (iterations per row).
set -euo pipefail
cd "$(dirname "$0")/../core"
n=${N:-200}
out=$(go test -count=1 -run '^$' -bench 'ExecStream' -benchtime "${n}x" ./rpc)
echo "Exec streaming latency, $n iterations per row (\`N=$n ./bench/exec-stream.sh\`; engine in-process, stdio over pipes, HTTP over loopback TCP)"
echo
echo "| transport | measure | p50 (µs) | p99 (µs) | mean (µs) |"
echo "|---|---|---:|---:|---:|"
echo "$out" | awk '/^BenchmarkExecStream\// {
  split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]);
  printf "| %s | %s | %.0f | %.0f | %.0f |\n", p[2], p[3], $5, $7, $3/1000 }'
if ! echo "$out" | grep -q '^ok'; then echo "$out" >&2; exit 1; fi
