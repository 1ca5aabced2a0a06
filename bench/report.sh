#!/usr/bin/env bash
# Writes docs/BENCHMARKS.md, the project's current benchmark report, from
# one run of the bench scripts: the engine and the TypeScript SDK beside
# agentfs-sdk 0.6.4 (the reference workloads, bench/workloads.mjs), the
# in-process sandbox beside bash + GNU tools, the FUSE mount and `agentfs
# run` beside a native directory, the overlay, and the Go benchmarks. Each
# comparison is side by side in the same run (ratios), so a noisy machine
# moves both sides. History lives in git (git log -p docs/BENCHMARKS.md).
#
#   ./bench/report.sh                      full sizes (20-40 minutes)
#   QUICK=1 ./bench/report.sh              small sizes (a few minutes), for a smoke run
#   PARTS="engine sdk-ts" ./bench/report.sh   some parts only (the others are left out)
#   OUT=/tmp/b.md ./bench/report.sh        write elsewhere
#
# Parts (PARTS=all, the default, runs every one): engine sdk-ts sandbox
# cloudflare mount run overlay sync browser crypt pip-install exec-stream
# engine-coldstart npm go node sessions; browser needs
# Debian's chromium, cloudflare npm's workerd. mount, run and overlay
# need root and /dev/fuse; without them their section says so.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PARTS=${PARTS:-all}
OUT=${OUT:-$ROOT/docs/BENCHMARKS.md}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [[ -n ${QUICK:-} ]]; then
	export N_FILES=1000 N_DIRS=10 N_KV=1000 N_TOOLS=1000 BIG_MIB=8 N_PREAD=500 COLD_RUNS=2 WARM=100
	export N_ECHO=1000 N_MEM=200 DIRS=10 REPS=1 FILES=2000 MB=20 GIT_FILES=500
	sizes="QUICK=1: small sizes, a smoke run, not figures to quote"
else
	sizes="full sizes: each script's defaults"
fi

# part NAME TITLE COMMAND...: runs a bench script with its own results
# directory and appends its Markdown table (the newest .md it saved, or
# its standard output when it saves none) as a section.
sections=$WORK/sections.md
: >"$sections"
part() {
	local name=$1 title=$2
	shift 2
	[[ $PARTS == all || " $PARTS " == *" $name "* ]] || return 0
	local dir=$WORK/$name
	mkdir -p "$dir"
	printf '\n== %s: %s\n' "$name" "$*" >&2
	local rc=0
	RESULTS=$dir "$@" >"$dir/stdout.txt" 2>"$dir/stderr.txt" || rc=$?
	{
		printf '\n## %s\n\n`%s`\n\n' "$title" "$*"
		if [[ $rc != 0 ]]; then
			printf 'Not measured in this run: the command failed (exit %s):\n\n```\n%s\n```\n' "$rc" "$(tail -n 5 "$dir/stderr.txt")"
			return 0
		fi
		local table
		table=$(ls -t "$dir"/*.md 2>/dev/null | grep -v wasm | head -1 || true)
		if [[ -n $table ]]; then cat "$table"; else printf '```\n%s\n```\n' "$(cat "$dir/stdout.txt")"; fi
	} >>"$sections"
}

load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
# The parts that mount need root and /dev/fuse; without them the section
# says so.
fuse='[[ $(id -u) == 0 && -e /dev/fuse ]] || { echo "needs root and /dev/fuse" >&2; exit 1; }'

part engine "Engine in-process beside agentfs-sdk 0.6.4" ./bench/run.sh
part sdk-ts "TypeScript SDK beside agentfs-sdk 0.6.4" env SIDES="ref ts tsproc floor" ./bench/sdk-ts.sh
part sandbox "In-process sandbox beside bash + GNU tools" ./bench/sandbox.sh
part cloudflare "Cloudflare Workers (workerd): agentfs-sdk/cloudflare beside agentfs-sdk 0.6.4" ./bench/cloudflare.sh
part mount "FUSE mount beside a native directory" bash -c "$fuse; ./bench/mount.sh"
part run "agentfs run beside a native directory" bash -c "$fuse; ./bench/agentfs-run.sh"
part overlay "Overlay (init --base) through a FUSE mount" bash -c "$fuse; ./bench/overlay.sh"
part sync "Sync through agentfs serve sync (loopback)" ./bench/sync.sh
part browser "Browser: OPFS, cold start and .wasm size beside agentfs-sdk 0.6.4 (database-wasm)" ./bench/browser.sh
part crypt "Encryption at rest: engine plain beside aes256gcm and aegis256" env ROUNDS=3 ./bench/crypt.sh
part pip-install "Python distributions: wheel sizes, pip install from a local index" ./bench/pip-install.sh
part exec-stream "Exec streaming latency (first byte, stdin echo) over stdio and HTTP" ./bench/exec-stream.sh
part npm "npm packages: tarball sizes, npm install from a local registry" ./bench/npm-install.sh
part engine-coldstart "Engine cold start to the first write: addon, cgo binary, CGO-free binary, WebAssembly" ./bench/engine-coldstart.sh
part go "Go benchmarks (engine in-process, testing.B)" bash -c 'cd core && go test -run "^$" -bench . -benchtime 1x . | grep -E "^Benchmark|^ok"'
# The sandbox's node (goja) beside the host's node, both sides per benchmark.
part node "The sandbox's node beside host node: node -e cold, JSON transform over 1,000 files (testing.B)" bash -c './bench/node.sh 2s | grep -E "^Benchmark|^ok|^Reference"'
# Agent sessions against the scripted model on loopback: one prompt = a
# turn of 50 text deltas with a tool call (list), then 50 more deltas;
# events/s counts every event a session emits (core/session).
part sessions "Agent sessions: events per second against the fake model (testing.B)" bash -c 'cd core && go test -run "^$" -bench BenchmarkSessionEvents -benchtime 200x ./session/ | grep -E "^Benchmark|^ok"'

commit=$(git rev-parse --short HEAD)
dirty=""
git diff --quiet HEAD -- core cli sdk-ts bench 2>/dev/null || dirty=" (with uncommitted changes)"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || uname -m)
{
	printf '# Benchmarks\n\n'
	printf 'The current results, written by `./bench/report.sh` (%s). Earlier runs are in\n' "$sizes"
	printf 'git history (`git log -p docs/BENCHMARKS.md`); how each script measures is in\n'
	printf 'its header comment and in bench/README.md.\n\n'
	printf '| | |\n|---|---|\n'
	printf '| commit | %s%s |\n' "$commit" "$dirty"
	printf '| date | %s |\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
	printf '| machine | %s, %s cores, %s GiB RAM, %s |\n' "$cpu" "$(nproc)" "$(awk '/MemTotal/ {printf "%.0f", $2/1048576}' /proc/meminfo)" "$(uname -sr)"
	printf '| load average at start | %s |\n' "$load_at_start"
	printf '| toolchains | %s, node %s |\n' "$(go version | cut -d' ' -f3)" "$(node --version 2>/dev/null || echo -)"
	printf '| parts | %s |\n' "$PARTS"
	cat "$sections"
} >"$OUT"
echo "wrote $OUT" >&2
