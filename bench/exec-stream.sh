#!/usr/bin/env bash
# Exec streaming latency (ProcessService) over the stdio protocol and over
# Connect HTTP: first byte (StartProcess until the first chunk of output)
# and echo round trip (a line written to a running script's stdin until
# its echo is read), each by long-poll (ReadProcess) and as a server stream
# (StreamProcess, rows -stream). Go benchmark core/rpc BenchmarkExecStream; prints a
# Markdown table; then the same from the Python SDK against agentfs serve
# http (sdk-python/bench/stream_latency.py) when its venv exists. N=200 by
# default (iterations per row).
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

# The same from the Python SDK against `agentfs serve http` (a separate
# process, as a user sees it): long-poll beside stream, interleaved.
cd ..
py=sdk-python/.venv/bin/python
echo
if [[ -x $py && -x bin/agentfs ]] && "$py" -c 'import agentfs' 2>/dev/null; then
	echo "Python SDK (sync) over \`agentfs serve http\`, loopback; long-poll is the SDK's path before it streamed (now only detached processes'):"
	echo
	AGENTFS_BIN=$PWD/bin/agentfs "$py" sdk-python/bench/stream_latency.py --n "$n"
else
	echo "Python SDK rows left out: no sdk-python/.venv with agentfs (\`go tool task test-python\` makes it) or no bin/agentfs."
fi
