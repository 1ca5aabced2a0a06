#!/bin/sh
# The sandbox's node against the host's node: "node -e 'console.log(1)'"
# (a fresh JavaScript runtime per run in the sandbox, a fresh process on
# the host) and a JSON transform over 1,000 files (agent filesystem vs a
# host directory). Usage: bench/node.sh [benchtime, default 3s]
set -e
cd "$(dirname "$0")/../core"
go test -run '^$' -bench 'BenchmarkNode_' -benchtime "${1:-3s}" -benchmem ./sandbox/jsnode
# The published figure the issue compares with (agentOS docs, "Benchmarks":
# cold start of a VM running an idle Node.js process, measured by Rivet).
echo "Reference: agentOS cold start p50 4.8 ms, p99 6.1 ms (published); EvalSandbox above is a fresh JavaScript runtime in the sandbox running node -e, per op"
