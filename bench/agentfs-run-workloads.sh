#!/usr/bin/env bash
# The workloads of bench/agentfs-run.sh, run in the current directory (a host
# directory, or the overlay inside `agentfs run`), which holds base/ (a
# tree to delete) and repo/ (a git repository):
#
#   run-workloads.sh SIDE TAR RAND BIG_MIB OUT
#
# Appends "SIDE SECONDS WORKLOAD" lines to OUT.
set -euo pipefail
side=$1 tar=$2 rand=$3 big_mib=$4 out=$5
: >"$out"
t() { # t WORKLOAD CMD...: wall-clock seconds of CMD
	local w=$1
	shift
	local start=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	local end=$EPOCHREALTIME
	local s
	s=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.4f", b - a}')
	echo "$side $s $w" >>"$out"
	echo "  $side $w ${s}s" >&2
}
mkdir tree
t "untar (new files)" tar xf "$tar" -C tree
t "stat every file (find -ls)" find tree -ls
t "rm -rf (new files)" rm -rf tree
t "stat every base file (find -ls)" find base -ls
t "rm -rf (base files)" rm -rf base
t "write $big_mib MiB (dd bs=1M)" dd if="$rand" of=big bs=1M
t "read $big_mib MiB warm (dd bs=1M)" dd if=big of=/dev/null bs=1M
rm -f big
t "git status, first (base repository)" git -C repo status --porcelain
t "git status, again" git -C repo status --porcelain
