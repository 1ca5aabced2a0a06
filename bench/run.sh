#!/usr/bin/env bash
# One side-by-side benchmark run: the reference workloads (workloads.mjs on
# Turso's agentfs-sdk 0.6.4) and the same workloads on the Go engine
# in-process (core/cmd/agentfs-bench), then a Markdown comparison table.
#
#   ./bench/run.sh                                        full size (slow: minutes)
#   N_FILES=1000 N_KV=1000 N_TOOLS=1000 BIG_MIB=8 COLD_RUNS=2 WARM=100 ./bench/run.sh
#
# Env: WORKLOADS (bench/workloads.mjs, the reference workloads vendored;
# the reference side is skipped when it is missing), RESULTS (bench/results),
# and the knobs of workloads.mjs, passed to both sides: N_FILES N_DIRS
# BIG_MIB N_PREAD N_KV N_TOOLS WARM COLD_RUNS KEEP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
WORKLOADS=${WORKLOADS:-$ROOT/bench/workloads.mjs}
RESULTS=${RESULTS:-$ROOT/bench/results}
TS=$(date +%Y%m%d-%H%M%S)
TMP=$ROOT/bench/tmp # databases of both sides, on the same filesystem
mkdir -p "$RESULTS" "$TMP" bench/bin bin

say() { printf '\n== %s\n' "$*" >&2; }

# GNU time for the peak RSS of each whole run (process and children).
TIME=()
if /usr/bin/time -v true >/dev/null 2>&1; then
	TIME=(/usr/bin/time -v)
else
	echo "note: /usr/bin/time -v unavailable; whole-run peak RSS will be missing" >&2
fi

say "build"
(cd core && go build -o ../bench/bin/agentfs-bench ./cmd/agentfs-bench)
if (cd cli && go build -o ../bin/agentfs ./cmd/agentfs); then
	export AGENTFS_BIN=$ROOT/bin/agentfs
else
	echo "warning: the agentfs CLI does not build; its cold start is skipped" >&2
	export AGENTFS_BIN=none
fi

REF_FILE=$RESULTS/$TS-ref.txt
ENGINE_FILE=$RESULTS/$TS-engine.txt
FULL_FILE=$RESULTS/$TS-engine-full.txt
REF_LABEL="agentfs-sdk"

say "reference: agentfs-sdk (node $WORKLOADS)"
if [[ ! -f $WORKLOADS ]]; then
	echo "reference side skipped: $WORKLOADS not found (set WORKLOADS=/path/to/workloads.mjs)" >&2
	REF_FILE=
elif ! command -v node >/dev/null; then
	echo "reference side skipped: node not found" >&2
	REF_FILE=
else
	if [[ ! -d tests/compat/node_modules/turso-agentfs ]]; then
		(cd tests/compat && npm install --no-audit --no-fund)
	fi
	REF_LABEL="agentfs-sdk $(node -p "require('./tests/compat/node_modules/turso-agentfs/package.json').version")"
	SDK="file://$ROOT/tests/compat/node_modules/turso-agentfs/dist/index_node.js" \
		BENCH_DIR=$TMP/$TS-ref "${TIME[@]}" node "$WORKLOADS" 2>&1 | tee "$REF_FILE"
fi

say "agentfs-go: engine in-process, durability normal"
BENCH_DIR=$TMP/$TS-engine "${TIME[@]}" bench/bin/agentfs-bench -durability normal 2>&1 | tee "$ENGINE_FILE"

say "agentfs-go: small-file phase again, durability full"
BENCH_DIR=$TMP/$TS-engine-full "${TIME[@]}" bench/bin/agentfs-bench -durability full -phases small 2>&1 | tee "$FULL_FILE"

say "comparison"
args=(--engine "$ENGINE_FILE" --engine-full "$FULL_FILE" --ref-label "$REF_LABEL")
[[ -n $REF_FILE ]] && args+=(--ref "$REF_FILE")
python3 bench/compare.py "${args[@]}" | tee "$RESULTS/$TS-table.md"
echo >&2
echo "raw outputs: $RESULTS/$TS-{ref,engine,engine-full}.txt; table: $RESULTS/$TS-table.md" >&2
