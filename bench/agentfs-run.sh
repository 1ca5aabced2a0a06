#!/usr/bin/env bash
# `agentfs run` benchmark: the workloads of bench/mount.sh run by one
# script (bench/agentfs-run-workloads.sh) in a host directory, then by the same
# script inside `agentfs run` in an identical host directory (the
# directory is then an overlay: the host files below, the session
# database above). Alternating, REPS times; a Markdown table of medians
# (min-max) and ratios run/native goes to bench/results/.
#
#   ./bench/agentfs-run.sh                                     full size
#   FILES=2000 MB=20 BIG_MIB=128 GIT_FILES=500 REPS=1 ./bench/agentfs-run.sh   quick
#
# Both sides run warm (the sandbox cannot drop the page cache): the inputs
# are read once before each side starts. Needs root (or unprivileged user
# namespaces), /dev/fuse, python3, tar, git, dd.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
FILES=${FILES:-20000} MB=${MB:-200} BIG_MIB=${BIG_MIB:-1024} GIT_FILES=${GIT_FILES:-5000} REPS=${REPS:-3}
RESULTS=${RESULTS:-$ROOT/bench/results}
TS=$(date +%Y%m%d-%H%M%S)
WORK=$ROOT/bench/tmp/run-$TS
CACHE=$ROOT/bench/tmp/mount-cache # shared with bench/mount.sh
mkdir -p "$RESULTS" "$WORK/out" "$CACHE" bench/bin
trap '[[ ${KEEP:-} == 1 ]] || rm -rf "$WORK"' EXIT

AGENTFS=${AGENTFS:-}
if [[ -z $AGENTFS ]]; then
	(cd cli && go build -o ../bench/bin/agentfs ./cmd/agentfs)
	AGENTFS=$ROOT/bench/bin/agentfs
fi

# Inputs (as bench/mount.sh makes them).
TAR=$CACHE/tree-$FILES-$MB.tar
if [[ ! -f $TAR ]]; then
	rm -rf "$CACHE/tree"
	python3 bench/mktree.py "$CACHE/tree" --files "$FILES" --mb "$MB"
	tar cf "$TAR.tmp" -C "$CACHE/tree" . && mv "$TAR.tmp" "$TAR"
	rm -rf "$CACHE/tree"
fi
RAND=$CACHE/rand-$BIG_MIB.bin
[[ -f $RAND ]] || { head -c $((BIG_MIB << 20)) /dev/urandom >"$RAND.tmp" && mv "$RAND.tmp" "$RAND"; }
GITTAR=$CACHE/git-$GIT_FILES.tar
if [[ ! -f $GITTAR ]]; then
	rm -rf "$CACHE/repo"
	python3 bench/mktree.py "$CACHE/repo" --files "$GIT_FILES" --mb $((GIT_FILES / 200)) --seed 2
	(cd "$CACHE/repo" && git init -q -b main . && git add -A &&
		git -c user.name=b -c user.email=b@example.com commit -q -m tree)
	tar cf "$GITTAR.tmp" -C "$CACHE/repo" . && mv "$GITTAR.tmp" "$GITTAR"
	rm -rf "$CACHE/repo"
fi

# A host directory as the agent finds it: a base tree to delete and a git
# repository, both already on the host (so in the run they are the
# overlay's lower layer).
prepare() {
	rm -rf "$1"
	mkdir -p "$1/base" "$1/repo"
	tar xf "$TAR" -C "$1/base"
	tar xf "$GITTAR" -C "$1/repo"
	git -C "$1/repo" status --porcelain >/dev/null # refresh the copied index
	cat "$TAR" "$RAND" "$GITTAR" >/dev/null          # warm inputs
}

RAW=$RESULTS/$TS-run-raw.txt
: >"$RAW"
for rep in $(seq "$REPS"); do
	echo "repetition $rep/$REPS" >&2
	prepare "$WORK/native"
	(cd "$WORK/native" && bash "$ROOT/bench/agentfs-run-workloads.sh" native "$TAR" "$RAND" "$BIG_MIB" "$WORK/out/native")
	cat "$WORK/out/native" >>"$RAW"
	prepare "$WORK/host"
	(cd "$WORK/host" && "$AGENTFS" run --session "bench$rep" --allow "$WORK/out" -- \
		bash "$ROOT/bench/agentfs-run-workloads.sh" run "$TAR" "$RAND" "$BIG_MIB" "$WORK/out/run") 2>"$WORK/run.log" ||
		{ cat "$WORK/run.log" >&2; exit 1; }
	cat "$WORK/out/run" >>"$RAW"
	# The host directory is untouched by the run.
	[[ ! -e $WORK/host/tree && -d $WORK/host/base && ! -e $WORK/host/big ]] ||
		{ echo "the run changed the host directory" >&2; exit 1; }
done

TABLE=$RESULTS/$TS-run.md
{
	echo "## agentfs run benchmark ($(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD))"
	echo
	echo "FILES=$FILES MB=$MB BIG_MIB=$BIG_MIB GIT_FILES=$GIT_FILES REPS=$REPS; seconds, median (min-max); ratio = run / native of the medians"
	echo
	echo "| workload | native | agentfs run (overlay) | ratio |"
	echo "| --- | ---: | ---: | ---: |"
	python3 - "$RAW" <<'PY'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    side, secs, w = line.rstrip("\n").split(" ", 2)
    if w not in rows:
        rows[w] = {}
        order.append(w)
    rows[w].setdefault(side, []).append(float(secs))
for w in order:
    cell = {}
    for side in ("native", "run"):
        xs = rows[w].get(side, [])
        cell[side] = (statistics.median(xs), min(xs), max(xs)) if xs else None
    fmt = lambda c: "-" if c is None else f"{c[0]:.3f} ({c[1]:.3f}-{c[2]:.3f})"
    ratio = "-" if not (cell["native"] and cell["run"]) else f"{cell['run'][0] / cell['native'][0]:.2f}"
    print(f"| {w} | {fmt(cell['native'])} | {fmt(cell['run'])} | {ratio} |")
PY
} | tee "$TABLE"
echo "raw: $RAW; table: $TABLE" >&2
