#!/usr/bin/env bash
# FUSE mount benchmark: the same workloads on a native directory and on an
# `agentfs mount` of a database on the same disk, in one run, alternating
# native and mount in every repetition. Prints a Markdown table (median of
# REPS runs, min-max in brackets, ratio mount/native of the medians) and
# saves it under bench/results/.
#
#   ./bench/mount.sh                       full size (several minutes)
#   FILES=2000 MB=20 BIG_MIB=128 GIT_FILES=500 REPS=1 ./bench/mount.sh   quick
#
# Needs root (it drops the page cache between writing and reading:
# echo 3 > /proc/sys/vm/drop_caches), /dev/fuse, python3, tar, git, dd.
#
# Env: FILES (20000) MB (200) BIG_MIB (1024) PAR_MIB (BIG_MIB/2, per reader)
# GIT_FILES (5000) REPS (3) RESULTS (bench/results) KEEP=1 keeps the work
# directory bench/tmp/mount-<ts>; AGENTFS (bench/bin/agentfs, built here).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
FILES=${FILES:-20000} MB=${MB:-200} BIG_MIB=${BIG_MIB:-1024} PAR_MIB=${PAR_MIB:-$((BIG_MIB / 2))}
GIT_FILES=${GIT_FILES:-5000} REPS=${REPS:-3}
RESULTS=${RESULTS:-$ROOT/bench/results}
TS=$(date +%Y%m%d-%H%M%S)
WORK=$ROOT/bench/tmp/mount-$TS # native trees and the database, same filesystem
CACHE=$ROOT/bench/tmp/mount-cache
mkdir -p "$RESULTS" "$WORK" "$CACHE" bench/bin
if [[ $(id -u) != 0 ]]; then
	echo "bench/mount.sh: run as root (it drops the page cache)" >&2
	exit 1
fi

AGENTFS=${AGENTFS:-}
if [[ -z $AGENTFS ]]; then
	(cd cli && go build -o ../bench/bin/agentfs ./cmd/agentfs)
	AGENTFS=$ROOT/bench/bin/agentfs
fi

NAT=$WORK/native
MNT=$WORK/mnt
DB=$WORK/.agentfs/bench.db # agentfs init bench, run in $WORK
mkdir -p "$NAT" "$MNT"

cleanup() {
	mountpoint -q "$MNT" && mount_down || true
	[[ ${KEEP:-} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap "exit 1" INT TERM

# The server runs in the foreground of a background job, so that
# mount_down can wait until it has exited (closing the database
# checkpoints the WAL, which must not overlap the next measurement).
# SERVER replaces "agentfs mount -f" (e.g. a profiling build); it gets
# DB DIR as arguments.
SERVER_PID=
mount_up() {
	if [[ -n ${SERVER:-} ]]; then
		$SERVER "$DB" "$MNT" >/dev/null 2>"$WORK/server.log" &
	else
		"$AGENTFS" mount -f "$DB" "$MNT" >/dev/null 2>"$WORK/server.log" &
	fi
	SERVER_PID=$!
	for _ in $(seq 600); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$WORK/server.log" >&2
	echo "mount of $DB on $MNT failed" >&2
	return 1
}
mount_down() {
	for _ in $(seq 50); do
		if "$AGENTFS" umount "$MNT" >/dev/null 2>&1; then
			# A copy of the mount in another mount namespace (a sandbox
			# started meanwhile) keeps the FUSE connection open after
			# the unmount here: stop the server then.
			for _ in $(seq 300); do
				kill -0 "$SERVER_PID" 2>/dev/null || break
				sleep 0.1
			done
			kill -0 "$SERVER_PID" 2>/dev/null && echo "server still up 30 s after umount: stopping it" >&2 && kill "$SERVER_PID"
			wait "$SERVER_PID" || true
			return 0
		fi
		sleep 0.1
	done
	echo "umount $MNT failed" >&2
	return 1
}
# cold: the page cache is dropped and the mount is made afresh, so that
# neither side reads from memory.
cold() {
	mount_down
	sync
	echo 3 >/proc/sys/vm/drop_caches
	mount_up
}

# warm: a fresh mount (the kernel's cache of the mount is empty) over a
# database file in the page cache: what the server itself can do, without
# the disk. The native side reads from the page cache.
warm() {
	mount_down
	mount_up
}

# Inputs, generated once and kept in bench/tmp/mount-cache.
TAR=$CACHE/tree-$FILES-$MB.tar
if [[ ! -f $TAR ]]; then
	echo "generating $FILES files, $MB MB..." >&2
	rm -rf "$CACHE/tree"
	python3 bench/mktree.py "$CACHE/tree" --files "$FILES" --mb "$MB"
	tar cf "$TAR.tmp" -C "$CACHE/tree" . && mv "$TAR.tmp" "$TAR"
	rm -rf "$CACHE/tree"
fi
RAND=$CACHE/rand-$BIG_MIB.bin
if [[ ! -f $RAND ]]; then
	head -c $((BIG_MIB << 20)) /dev/urandom >"$RAND.tmp" && mv "$RAND.tmp" "$RAND"
fi
GITTAR=$CACHE/git-$GIT_FILES.tar
if [[ ! -f $GITTAR ]]; then
	echo "generating a $GIT_FILES-file git repository..." >&2
	rm -rf "$CACHE/repo"
	python3 bench/mktree.py "$CACHE/repo" --files "$GIT_FILES" --mb $((GIT_FILES / 200)) --seed 2
	(cd "$CACHE/repo" && git init -q -b main . && git add -A &&
		git -c user.name=b -c user.email=b@example.com commit -q -m tree)
	tar cf "$GITTAR.tmp" -C "$CACHE/repo" . && mv "$GITTAR.tmp" "$GITTAR"
	rm -rf "$CACHE/repo"
fi

(cd "$WORK" && "$AGENTFS" init bench >/dev/null)
mount_up

# Results: one line "workload side seconds" per measurement.
RAW=$RESULTS/$TS-mount-raw.txt
: >"$RAW"
# t WORKLOAD SIDE CMD...: times CMD (wall clock, in seconds).
t() {
	local w=$1 side=$2
	shift 2
	local start=$EPOCHREALTIME
	"$@"
	local end=$EPOCHREALTIME
	local s
	s=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", b - a}')
	echo "$w $side $s" >>"$RAW"
	echo "  $w $side ${s}s" >&2
}
q() { "$@" >/dev/null 2>&1; }
readers() { # readers FILE...: reads the files in parallel
	local pids=() f
	for f in "$@"; do
		dd if="$f" of=/dev/null bs=1M status=none &
		pids+=($!)
	done
	wait "${pids[@]}"
}

for rep in $(seq "$REPS"); do
	echo "repetition $rep/$REPS" >&2
	for side in native mount; do
		d=$NAT
		[[ $side == mount ]] && d=$MNT
		cold
		mkdir "$d/tree"
		t "untar" $side tar xf "$TAR" -C "$d/tree"
		cold
		t "stat every file (find -ls)" $side q find "$d/tree" -ls
		t "rm -rf" $side rm -rf "$d/tree"

		cold
		t "write $BIG_MIB MiB (dd bs=1M)" $side dd if="$RAND" of="$d/big" bs=1M status=none
		cold
		t "read $BIG_MIB MiB cold (dd bs=1M)" $side dd if="$d/big" of=/dev/null bs=1M status=none
		rm -f "$d/big"

		dd if="$RAND" of="$d/r1" bs=1M count="$PAR_MIB" status=none
		dd if="$RAND" of="$d/r2" bs=1M count="$PAR_MIB" skip="$PAR_MIB" status=none
		cat "$d/r1" "$d/r2" >/dev/null
		warm
		t "1 reader (warm)" $side readers "$d/r1"
		warm
		t "2 parallel readers (warm)" $side readers "$d/r1" "$d/r2"
		rm -f "$d/r1" "$d/r2"

		mkdir "$d/repo"
		tar xf "$GITTAR" -C "$d/repo"
		git -C "$d/repo" status --porcelain >/dev/null # refresh the copied index once
		cold
		t "git status cold" $side q git -C "$d/repo" status --porcelain
		t "git status warm" $side q git -C "$d/repo" status --porcelain
		rm -rf "$d/repo"
	done
done

TABLE=$RESULTS/$TS-mount.md
{
	echo "## Mount benchmark ($(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD))"
	echo
	echo "Command: \`FILES=$FILES MB=$MB BIG_MIB=$BIG_MIB PAR_MIB=$PAR_MIB GIT_FILES=$GIT_FILES REPS=$REPS ./bench/mount.sh\`"
	echo
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') x $(nproc); kernel $(uname -r);" \
		"disk: $(df --output=source,fstype "$WORK" | tail -1 | tr -s ' ')"
	echo
	python3 - "$RAW" "$BIG_MIB" "$PAR_MIB" <<'EOF'
import sys, statistics
raw, big, par = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = {}
order = []
for line in open(raw):
    *w, side, s = line.split()
    w = " ".join(w)
    if w not in rows:
        rows[w] = {"native": [], "mount": []}
        order.append(w)
    rows[w][side].append(float(s))
mib = {f"write {big} MiB (dd bs=1M)": big, f"read {big} MiB cold (dd bs=1M)": big, "1 reader (warm)": par, "2 parallel readers (warm)": 2 * par}
def cell(v, w):
    if not v:
        return "-"
    m = statistics.median(v)
    s = f"{m:.3f} s"
    if len(v) > 1:
        s += f" [{min(v):.3f}-{max(v):.3f}]"
    if w in mib:
        s += f" = {mib[w] / m:,.0f} MiB/s"
    return s
print("| workload | native | agentfs mount | mount/native |")
print("|---|---:|---:|---:|")
for w in order:
    n, m = rows[w]["native"], rows[w]["mount"]
    ratio = f"{statistics.median(m) / statistics.median(n):.2f}x" if n and m else "-"
    print(f"| {w} | {cell(n, w)} | {cell(m, w)} | {ratio} |")
for side in ("native", "mount"):
    one, two = rows.get("1 reader (warm)", {}).get(side), rows.get("2 parallel readers (warm)", {}).get(side)
    if one and two:
        print(f"\n{side}: 2 readers move {2 * statistics.median(one) / statistics.median(two):.2f}x the bytes per second of one", end="")
print()
print()
print(f"1 reader: dd bs=1M of one {par} MiB file; 2 parallel readers: two dd of two {par} MiB files at once;")
print("warm: a fresh mount over a database file in the page cache (native: the page cache); cold: page cache dropped and a fresh mount.")
EOF
} | tee "$TABLE"
echo >&2
echo "saved: $TABLE (raw: $RAW)" >&2
