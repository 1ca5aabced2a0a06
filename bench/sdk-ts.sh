#!/usr/bin/env bash
# The TypeScript SDK beside Turso's agentfs-sdk 0.6.4, in one run: both
# packages installed side by side in a scratch project (ours from `npm pack`
# of sdk-ts, with its bundled engine; Turso's as the npm alias
# turso-agentfs, as tests/compat does), then bench/workloads.mjs,
# unchanged, on each under /usr/bin/time -v (ours twice: with its default
# transport, the engine loaded into the Node process, and with transport
# "process", the engine as a child over stdio), then the round trip of an
# empty call both ways, then the floor (bench/floor-sdk: an SDK that
# stores nothing, for what Node and the workload alone cost in start time
# and memory), then a Markdown table (bench/compare-ts.mjs).
#
#   ./bench/sdk-ts.sh                                            full size
#   N_FILES=1000 N_KV=1000 N_TOOLS=1000 BIG_MIB=8 COLD_RUNS=2 WARM=100 ./bench/sdk-ts.sh
#
# Env: WORKLOADS (bench/workloads.mjs, the reference workloads vendored),
# RESULTS (bench/results), SIDES ("ref ts tsproc floor"; "tswasm" is the same
# package with transport "wasm", compared in a table of its own), and the knobs of workloads.mjs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
WORKLOADS=${WORKLOADS:-$ROOT/bench/workloads.mjs}
RESULTS=${RESULTS:-$ROOT/bench/results}
SIDES=${SIDES:-ref ts tsproc floor}
TS=$(date +%Y%m%d-%H%M%S)
PROJ=$ROOT/bench/tmp/sdk-ts-project
mkdir -p "$RESULTS" "$PROJ"
say() { printf '\n== %s\n' "$*" >&2; }
[[ -f $WORKLOADS ]] || { echo "no $WORKLOADS (set WORKLOADS=/path/to/workloads.mjs)" >&2; exit 1; }
TIME=()
if /usr/bin/time -v true >/dev/null 2>&1; then TIME=(/usr/bin/time -v); else echo "note: no /usr/bin/time -v: no whole-run peak RSS" >&2; fi

say "pack sdk-ts (tsc, engine build) and install both SDKs into $PROJ"
(cd sdk-ts && npm ci --no-audit --no-fund --silent)
TARBALL=$(cd sdk-ts && npm pack --silent --pack-destination "$PROJ" | tail -1)
cat >"$PROJ/package.json" <<JSON
{ "name": "sdk-ts-bench", "private": true, "type": "module",
  "dependencies": { "agentfs-sdk": "file:./$TARBALL", "turso-agentfs": "npm:agentfs-sdk@0.6.4" } }
JSON
# No lockfile: a lockfile of an earlier run pins the earlier tarball.
(cd "$PROJ" && rm -rf node_modules/agentfs-sdk package-lock.json && npm install --no-audit --no-fund --silent)
cmp sdk-ts/dist/index.js "$PROJ/node_modules/agentfs-sdk/dist/index.js"
# workloads.mjs resolves SDK from its own directory: a byte-identical copy
# beside node_modules.
cp "$WORKLOADS" "$PROJ/workloads.mjs"
cmp "$WORKLOADS" "$PROJ/workloads.mjs"
# The native engines travel in the platform package @agentfs-sdk/linux-x64
# (sdk-ts/scripts/pack-all.sh, tested by the npm suite); here the same
# builds come from bin/ (go tool task build), so the bench needs no cross
# build of the other platforms' packages.
# AGENTFS_BIN would make every side a child process: the addon is named
# and the binary found on PATH, as the package's own would be.
unset AGENTFS_TRANSPORT AGENTFS_BIN
go tool task build >&2
export AGENTFS_ADDON=$ROOT/bin/agentfs.node PATH=$ROOT/bin:$PATH

files=()
for side in $SIDES; do
	transport=
	case $side in
	ref) sdk=turso-agentfs ;;
	ts) sdk=agentfs-sdk ;;
	tsproc) sdk=agentfs-sdk transport=process ;;
	tswasm) sdk=agentfs-sdk transport=wasm ;;
	floor) sdk=$ROOT/bench/floor-sdk/index.mjs ;;
	*) echo "unknown side $side" >&2; exit 1 ;;
	esac
	out=$RESULTS/$TS-sdk-$side.txt
	say "$side: SDK=$sdk ${transport:+AGENTFS_TRANSPORT=$transport }node workloads.mjs"
	(cd "$PROJ" && env SDK=$sdk ${transport:+AGENTFS_TRANSPORT=$transport} BENCH_DIR=$ROOT/bench/tmp/$TS-$side "${TIME[@]}" node workloads.mjs) 2>&1 | tee "$out"
	if [[ $side == tswasm ]]; then wasmfile=$out; else files+=(--"$side" "$out"); fi
done

say "round trip of an empty call, in process and over stdio"
RTT=$RESULTS/$TS-sdk-ts-rtt.txt
RTTPROC=$RESULTS/$TS-sdk-tsproc-rtt.txt
cp bench/sdk-ts-rtt.mjs "$PROJ/rtt.mjs"
(cd "$PROJ" && node rtt.mjs) | tee "$RTT"
(cd "$PROJ" && AGENTFS_TRANSPORT=process node rtt.mjs) | tee "$RTTPROC"

say "comparison"
node bench/compare-ts.mjs "${files[@]}" --rtt "$RTT" --rttproc "$RTTPROC" | tee "$RESULTS/$TS-sdk-ts-table.md"
if [[ -n ${wasmfile:-} ]]; then
	say "comparison with the engine as WebAssembly"
	node bench/compare-ts.mjs --ref "$RESULTS/$TS-sdk-ref.txt" --ts "$RESULTS/$TS-sdk-ts.txt" --tswasm "$wasmfile" | tee "$RESULTS/$TS-sdk-tswasm-table.md"
fi
echo "raw outputs: $RESULTS/$TS-sdk-*.txt; table: $RESULTS/$TS-sdk-ts-table.md" >&2
