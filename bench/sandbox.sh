#!/usr/bin/env bash
# Sandbox benchmark (core/cmd/agentfs-sandbox-bench): new sandbox + echo hi
# (p50/p99), memory per idle sandbox, and grep -r / find | wc -l /
# sort | uniq -c over a generated 10k-file tree, in the sandbox and with
# /bin/bash + GNU tools on a native copy of the tree in the same run.
# Prints a Markdown report (machine facts + tables) and saves it, with the
# raw progress output, under bench/results/.
#
#   ./bench/sandbox.sh                                   full size (about a minute)
#   N_ECHO=1000 N_MEM=200 DIRS=10 REPS=3 ./bench/sandbox.sh   quick
#
# Env: N_ECHO (10000) N_MEM (1000) MEM_EVERY (100) DIRS (100) FILES (100)
# REPS (5) RESULTS (bench/results) KEEP=1 keeps bench/tmp/sandbox-<ts>;
# CPUPROFILE=FILE writes a CPU profile of the whole run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RESULTS=${RESULTS:-$ROOT/bench/results}
TS=$(date +%Y%m%d-%H%M%S)
WORK=$ROOT/bench/tmp/sandbox-$TS # databases and native tree, same filesystem
mkdir -p "$RESULTS" bench/tmp bench/bin

(cd core && go build -o ../bench/bin/agentfs-sandbox-bench ./cmd/agentfs-sandbox-bench)

ARGS=(-n-echo "${N_ECHO:-10000}" -n-mem "${N_MEM:-1000}" -mem-every "${MEM_EVERY:-100}"
	-dirs "${DIRS:-100}" -files "${FILES:-100}" -reps "${REPS:-5}" -dir "$WORK")
[[ ${KEEP:-} == 1 ]] && ARGS+=(-keep)
[[ -n ${CPUPROFILE:-} ]] && ARGS+=(-cpuprofile "$CPUPROFILE")

TABLE=$RESULTS/$TS-sandbox.md
RAW=$RESULTS/$TS-sandbox-raw.txt
{
	echo "## Sandbox benchmark ($(date -u +%Y-%m-%dT%H:%MZ))"
	echo
	echo "Command: \`./bench/sandbox.sh\` (${ARGS[*]/#$ROOT\//})"
	echo
	echo "| machine | |"
	echo "|---|---|"
	echo "| cpu | $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') |"
	echo "| nproc | $(nproc) |"
	echo "| memory | $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) |"
	echo "| kernel | $(uname -r) |"
	echo "| go | $(go version | cut -d' ' -f3-) |"
	echo "| bash | $(/bin/bash --version | head -1) |"
	echo "| GNU grep / coreutils | $(grep --version | head -1) / $(sort --version | head -1) |"
	echo "| disk | $(df -h --output=source,fstype "$ROOT/bench/tmp" | tail -1 | tr -s ' ') |"
	echo
	./bench/bin/agentfs-sandbox-bench "${ARGS[@]}" 2>"$RAW"
} | tee "$TABLE"
echo >&2
echo "saved: $TABLE (raw: $RAW)" >&2
